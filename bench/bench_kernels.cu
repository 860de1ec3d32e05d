#include <cuda_runtime.h>

#include "bench/bench_kernels.h"
#include "gdn/mma_tf32.cuh"

namespace rollout::bench {
namespace {

__device__ __forceinline__ float HashUniform(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
}

__global__ void FillUniformKernel(float* x, size_t n, uint64_t seed, float lo,
                                  float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    x[i] = lo + (hi - lo) * HashUniform(seed, i);
  }
}

__global__ void FillUniformBf16Kernel(uint16_t* x, size_t n, uint64_t seed,
                                      float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float f = lo + (hi - lo) * HashUniform(seed, i);
    x[i] = static_cast<uint16_t>(__float_as_uint(f) >> 16);
  }
}

// Four independent 16-byte accesses per thread and iteration: enough bytes in
// flight for HBM3e (a one-access loop measures latency, not bandwidth).
template <bool kStreaming>
__global__ void ScaleKernel(float4* x, size_t n4, float c) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      v[u] = kStreaming ? __ldcs(x + i + u * stride) : x[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      v[u].x *= c, v[u].y *= c, v[u].z *= c, v[u].w *= c;
      if (kStreaming) {
        __stcs(x + i + u * stride, v[u]);
      } else {
        x[i + u * stride] = v[u];
      }
    }
  }
  for (; i < n4; i += stride) {
    float4 v = x[i];
    v.x *= c, v.y *= c, v.z *= c, v.w *= c;
    x[i] = v;
  }
}

// Reads n4 float4. kAtomic: their sum goes to *out (one atomic per warp);
// else the loads are kept live by a store that finite inputs never take (no
// atomics: the floor of a read-only pass).
template <bool kAtomic>
__global__ void ReadKernel(const float4* x, size_t n4, float* out) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  float acc = 0.0f;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n4; i += stride) {
    const float4 v = __ldcs(x + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if constexpr (kAtomic) {
    for (int off = 16; off > 0; off /= 2) {
      acc += __shfl_xor_sync(0xffffffffu, acc, off);
    }
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
  } else {
    if (acc != acc) *out = acc;  // NaN only
  }
}

__global__ void EmptyKernel() {}

// One 16-byte load and store per thread, no loop: the copy pattern that
// matches or beats cudaMemcpyAsync (memory patterns: copy_os1_t128).
__global__ void CopyOneShotKernel(const float4* x, float4* y) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  y[i] = x[i];
}

int SmCount() {
  int dev = 0, sms = 132;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

int Blocks() { return SmCount() * 8; }

// kMmaChains independent accumulator chains per warp (enough to cover the
// mma.sync latency), operands from registers: the tensor cores' tf32 issue
// rate, nothing else. Each warp adds its sum to *out so the work stays live.
// Four CTAs of eight warps per SM.
constexpr int kMmaChains = 8, kMmaThreads = 256;
int MmaBlocks() { return SmCount() * 4; }
__global__ void MmaTf32LoopKernel(int iters, float* out) {
  const uint32_t a = __float_as_uint(1.0f + (threadIdx.x & 7) * 0.125f);
  const uint32_t b = __float_as_uint(0.5f);
  float acc[kMmaChains][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaChains; ++j) {
      gdn::internal::MmaTf32(acc[j], a, a, a, a, b, b);
    }
  }
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kMmaChains; ++j) {
    sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  }
  if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}

}  // namespace

double MmaTf32LoopFlops(int iters) {
  const double warps = static_cast<double>(MmaBlocks()) * (kMmaThreads / 32);
  return warps * iters * kMmaChains * 2.0 * 16 * 8 * 8;
}

cudaError_t MmaTf32Loop(int iters, float* out, cudaStream_t stream) {
  MmaTf32LoopKernel<<<MmaBlocks(), kMmaThreads, 0, stream>>>(iters, out);
  return cudaGetLastError();
}

cudaError_t FillUniform(float* x, size_t n, uint64_t seed, float lo, float hi,
                        cudaStream_t stream) {
  FillUniformKernel<<<Blocks(), 256, 0, stream>>>(x, n, seed, lo, hi);
  return cudaGetLastError();
}

cudaError_t FillUniformBf16(uint16_t* x, size_t n, uint64_t seed, float lo,
                            float hi, cudaStream_t stream) {
  FillUniformBf16Kernel<<<Blocks(), 256, 0, stream>>>(x, n, seed, lo, hi);
  return cudaGetLastError();
}

cudaError_t ScaleInPlace(float* x, size_t n, float c, bool streaming,
                         cudaStream_t stream) {
  if (streaming) {
    ScaleKernel<true>
        <<<Blocks(), 256, 0, stream>>>(reinterpret_cast<float4*>(x), n / 4, c);
  } else {
    ScaleKernel<false>
        <<<Blocks(), 256, 0, stream>>>(reinterpret_cast<float4*>(x), n / 4, c);
  }
  return cudaGetLastError();
}

cudaError_t CopyOneShot(const float* x, float* y, size_t n,
                        cudaStream_t stream) {
  constexpr size_t kThreads = 128;
  const size_t blocks = n / 4 / kThreads;
  if (n % (4 * kThreads) != 0 || blocks > 0x7fffffffu) {
    return cudaErrorInvalidValue;
  }
  CopyOneShotKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y));
  return cudaGetLastError();
}

cudaError_t CaptureGraph(cudaStream_t stream, const std::function<void()>& body,
                         cudaGraphExec_t* exec) {
  cudaGraph_t g;
  cudaError_t e =
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  body();
  if ((e = cudaStreamEndCapture(stream, &g)) != cudaSuccess) return e;
  e = cudaGraphInstantiate(exec, g, 0);
  cudaGraphDestroy(g);
  return e;
}

cudaError_t LaunchEmpty(int blocks, int threads, cudaStream_t stream) {
  EmptyKernel<<<blocks, threads, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t ReadSum(const float* x, size_t n, float* out, cudaStream_t stream) {
  ReadKernel<true><<<Blocks(), 256, 0, stream>>>(
      reinterpret_cast<const float4*>(x), n / 4, out);
  return cudaGetLastError();
}

cudaError_t ReadOnly(const float* x, size_t n, float* sink,
                     cudaStream_t stream) {
  ReadKernel<false><<<Blocks(), 256, 0, stream>>>(
      reinterpret_cast<const float4*>(x), n / 4, sink);
  return cudaGetLastError();
}

}  // namespace rollout::bench
