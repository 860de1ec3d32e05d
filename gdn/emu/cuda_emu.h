// Force-included (-include) ahead of a kernel source compiled for the CPU
// emulation (bazel/cuda.bzl emu_cuda_library, GDN_CUDA_EMU defined): the
// toolkit's host headers, then the device-side spellings the GDN kernels use
// mapped onto gdn/emu/emu.h. The kernel sources compile unchanged except
// where no C++ spelling exists: their launches go through GDN_LAUNCH
// (gdn/cuda_util.cuh), their shared arrays through GDN_DYNAMIC_SHARED and
// GDN_SHARED, and their inline PTX sits in headers with emulated
// twins (gdn/cache_policy.cuh, gdn/ptx_ops.cuh).
#ifndef ROLLOUT_GDN_EMU_CUDA_EMU_H_
#define ROLLOUT_GDN_EMU_CUDA_EMU_H_

#ifndef GDN_CUDA_EMU
#error "cuda_emu.h is for sources compiled with GDN_CUDA_EMU"
#endif

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "gdn/emu/emu.h"

// Storage and function qualifiers. A kernel's static shared arrays are one
// per block (blocks run one at a time), so function statics, declared with
// GDN_SHARED (gdn/cuda_util.cuh): the emulator fills each with 0xff bytes
// (NaN) the first time its declaration runs in a block, as it does the
// dynamic shared memory, so a read of what this block did not write gives
// NaN, not the previous block's value. A bare __shared__ (which could not be
// refreshed so) does not compile.
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#undef __noinline__
#define __noinline__
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __shared__
#define __shared__ use_GDN_SHARED_for_static_shared_arrays_in_emulated_kernels

#define GDN_LAUNCH(kernel, grid, block, smem, stream, ...) \
  ::gdn_emu::MakeLaunch(grid, block, smem, kernel)(__VA_ARGS__)
#define GDN_DYNAMIC_SHARED(T, name) \
  T* const name = static_cast<T*>(::gdn_emu::DynamicShared())
#define GDN_SHARED(T, name, dims) \
  static T name dims;             \
  ::gdn_emu::FreshShared(name, sizeof(name))
#define cudaLaunchKernelEx ::gdn_emu::LaunchKernelEx

inline void __syncthreads() { ::gdn_emu::SyncThreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  if (mask != 0xffffffffu) ::gdn_emu::Fail("__syncwarp with a partial mask");
  ::gdn_emu::SyncWarp();
}

namespace gdn_emu {
inline void FullMask(unsigned mask) {
  if (mask != 0xffffffffu) Fail("shuffle with a partial mask");
}
// The source lane of a shuffle within segments of `width` lanes.
inline int SegmentBase(int width) { return LaneId() & ~(width - 1); }
}  // namespace gdn_emu

template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  ::gdn_emu::FullMask(mask);
  return ::gdn_emu::Shuffle(
      v, ::gdn_emu::SegmentBase(width) + (src & (width - 1)));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  ::gdn_emu::FullMask(mask);
  const int lane = ::gdn_emu::LaneId(), src = lane ^ lane_mask;
  // A source in a later segment gives the lane its own value (CUDA).
  const bool own = (src & ~(width - 1)) > ::gdn_emu::SegmentBase(width);
  const T r = ::gdn_emu::Shuffle(v, src & 31);
  return own ? v : r;
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  ::gdn_emu::FullMask(mask);
  const int lane = ::gdn_emu::LaneId(), src = lane + static_cast<int>(delta);
  const bool own = src >= ::gdn_emu::SegmentBase(width) + width;
  const T r = ::gdn_emu::Shuffle(v, src & 31);
  return own ? v : r;
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  ::gdn_emu::FullMask(mask);
  const int lane = ::gdn_emu::LaneId(), src = lane - static_cast<int>(delta);
  const bool own = src < ::gdn_emu::SegmentBase(width);
  const T r = ::gdn_emu::Shuffle(v, src & 31);
  return own ? v : r;
}

template <typename T>
void __stcs(T* p, T v) {  // a streaming store: a store
  *p = v;
}

// Device math the host library lacks (CUDA's rsqrtf is within 2 ulp; this is
// the correctly rounded 1 / sqrt) and the device min / max overloads.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) {
  return a < b ? a : b;
}
inline unsigned long max(unsigned long a, unsigned long b) {
  return a > b ? a : b;
}
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }

// cudaFuncSetAttribute(kernel, ...) from C++: the launch checks honour the
// dynamic shared memory limit.
template <typename T>
cudaError_t cudaFuncSetAttribute(T* kernel, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    ::gdn_emu::SetMaxDynamicShared(reinterpret_cast<const void*>(kernel),
                                   value);
  }
  return cudaSuccess;
}

inline unsigned __ballot_sync(unsigned mask, int pred) {
  ::gdn_emu::FullMask(mask);
  int all[32];
  const int mine = pred != 0;
  ::gdn_emu::WarpAllGather(&mine, sizeof(int), all);
  unsigned bits = 0;
  for (int l = 0; l < 32; ++l) bits |= (all[l] != 0 ? 1u : 0u) << l;
  return bits;
}

inline float __uint_as_float(unsigned x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float __int_as_float(int x) { return __uint_as_float(x); }
inline int __float_as_int(float f) {
  return static_cast<int>(__float_as_uint(f));
}

#endif  // ROLLOUT_GDN_EMU_CUDA_EMU_H_
