// Small device helpers shared by the GDN kernels (private to gdn/*.cu):
// bf16 <-> fp32 vectors, group reductions, the gate math and the host-side
// status conversion of launch errors.
#ifndef ROLLOUT_GDN_CUDA_UTIL_CUH_
#define ROLLOUT_GDN_CUDA_UTIL_CUH_

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gdn/ptx_ops.cuh"

// A kernel launch, GDN_LAUNCH(kernel, grid, block, smem, stream, args...),
// a kernel's extern dynamic shared array, GDN_DYNAMIC_SHARED(T, name), and
// its static shared arrays, GDN_SHARED(T, name, dims) for __shared__ T
// name dims: spelled as macros so that the CPU emulation (gdn/emu,
// GDN_CUDA_EMU), which has no <<<>>> and no shared memory space, compiles the
// same sources (and gives every block fresh shared arrays).
#ifndef GDN_LAUNCH
#define GDN_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#endif
#ifndef GDN_DYNAMIC_SHARED
#define GDN_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif
#ifndef GDN_SHARED
#define GDN_SHARED(T, name, dims) __shared__ T name dims
#endif

namespace rollout::gdn::internal {

inline absl::Status LaunchStatus(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": kernel launch failed: ", cudaGetErrorString(err)));
}

__device__ __forceinline__ float Bf16ToFloat(uint16_t x) {
  return __uint_as_float(static_cast<uint32_t>(x) << 16);
}

__device__ __forceinline__ uint16_t FloatToBf16(float x) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

// 4 consecutive bf16 (as 8 bytes) -> float4.
__device__ __forceinline__ float4 Bf16x4ToFloat4(uint2 u) {
  return make_float4(
      __uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u),
      __uint_as_float(u.y << 16), __uint_as_float(u.y & 0xffff0000u));
}

// 4 consecutive bf16 (8 bytes, 8-byte aligned) -> float4.
__device__ __forceinline__ float4 LoadBf16x4(const uint16_t* p) {
  return Bf16x4ToFloat4(*reinterpret_cast<const uint2*>(p));
}

// float4 -> 4 consecutive bf16 (as 8 bytes), rounded to nearest even.
__device__ __forceinline__ uint2 Float4ToBf16x4(float4 v) {
  uint2 u;
  u.x = static_cast<uint32_t>(FloatToBf16(v.x)) |
        (static_cast<uint32_t>(FloatToBf16(v.y)) << 16);
  u.y = static_cast<uint32_t>(FloatToBf16(v.z)) |
        (static_cast<uint32_t>(FloatToBf16(v.w)) << 16);
  return u;
}

// Element `i` of a bf16 or fp32 buffer, as fp32.
__device__ __forceinline__ float LoadAny(const void* p, int64_t i,
                                         bool is_fp32) {
  return is_fp32 ? static_cast<const float*>(p)[i]
                 : Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
}

__device__ __forceinline__ void StoreAny(void* p, int64_t i, float v,
                                         bool is_fp32) {
  if (is_fp32) {
    static_cast<float*>(p)[i] = v;
  } else {
    static_cast<uint16_t*>(p)[i] = FloatToBf16(v);
  }
}

// Sum over aligned groups of kWidth lanes (kWidth a power of two <= 32); every
// lane of the group gets the total.
template <int kWidth>
__device__ __forceinline__ float GroupSum(float x) {
#pragma unroll
  for (int off = kWidth / 2; off > 0; off /= 2) {
    x += __shfl_xor_sync(0xffffffffu, x, off);
  }
  return x;
}

// g = -exp(A_log) * softplus(a + dt_bias) (softplus linear above 20, as
// torch), beta = sigmoid(b); both fp32 (the reference's convention).
__device__ __forceinline__ void GateMath(float a, float b, float A_log,
                                         float dt_bias, float* g, float* beta) {
  const float x = a + dt_bias;
  const float sp = x > 20.0f ? x : log1pf(expf(x));
  *g = -expf(A_log) * sp;
  *beta = 1.0f / (1.0f + expf(-b));
}

constexpr float kL2Eps = 1e-6f;

__device__ __forceinline__ float Dot4(float4 a, float4 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

__device__ __forceinline__ float4 Scale4(float4 a, float s) {
  return make_float4(a.x * s, a.y * s, a.z * s, a.w * s);
}

// *acc += c x, element by element (fused multiply-adds).
__device__ __forceinline__ void Fma4(float c, float4 x, float4* acc) {
  acc->x = fmaf(c, x.x, acc->x);
  acc->y = fmaf(c, x.y, acc->y);
  acc->z = fmaf(c, x.z, acc->z);
  acc->w = fmaf(c, x.w, acc->w);
}

// The L2-norm scale 1 / |x| of a 128-wide row held by a warp in lane layout
// (4 columns per lane); a zero row gets a finite scale.
__device__ __forceinline__ float RowNormScale(float4 x) {
  return rsqrtf(GroupSum<32>(Dot4(x, x)) + kL2Eps);
}

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_CUDA_UTIL_CUH_
