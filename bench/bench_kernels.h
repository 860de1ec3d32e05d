// Helper kernels of the benchmarks (plain C++ header): device-side random
// fills (multi-GiB pools without host traffic), the bandwidth ceilings
// measured in the same run as the kernels (a one-shot copy kernel beside
// cudaMemcpyAsync for the copy ceiling, an in-place read-modify-write and a
// read-only stream), the tf32 tensor ceiling (mma.sync) and the launch floor
// (an empty kernel).
#ifndef ROLLOUT_BENCH_BENCH_KERNELS_H_
#define ROLLOUT_BENCH_BENCH_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace rollout::bench {

// x[i] = uniform(lo, hi) from a counter hash of (seed, i).
cudaError_t FillUniform(float* x, size_t n, uint64_t seed, float lo, float hi,
                        cudaStream_t stream);
// bf16 bit patterns of uniform(lo, hi).
cudaError_t FillUniformBf16(uint16_t* x, size_t n, uint64_t seed, float lo,
                            float hi, cudaStream_t stream);
// x[i] *= c over n floats (n % 4 == 0, x 16-byte aligned): 2n*4 bytes moved.
// streaming: evict-first loads/stores (ld/st.global.cs) instead of plain.
cudaError_t ScaleInPlace(float* x, size_t n, float c, bool streaming,
                         cudaStream_t stream);
// y = x over n floats, one 16-byte copy per thread of 128-thread CTAs (n a
// multiple of 512, x and y 16-byte aligned; else cudaErrorInvalidValue):
// 2n*4 bytes moved.
cudaError_t CopyOneShot(const float* x, float* y, size_t n,
                        cudaStream_t stream);
// Captures the launches `body` issues on `stream` into an executable graph
// (*exec; on an error nothing is left to destroy).
cudaError_t CaptureGraph(cudaStream_t stream, const std::function<void()>& body,
                         cudaGraphExec_t* exec);
// A kernel that does nothing (the launch floor of a CUDA graph node).
cudaError_t LaunchEmpty(int blocks, int threads, cudaStream_t stream);
// Sum of n floats into *out (n % 4 == 0): n*4 bytes read.
cudaError_t ReadSum(const float* x, size_t n, float* out, cudaStream_t stream);
// The same reads with no sum (*sink is written only for NaN inputs): the
// floor of a read-only pass, without ReadSum's atomics.
cudaError_t ReadOnly(const float* x, size_t n, float* sink,
                     cudaStream_t stream);
// The tf32 tensor ceiling: 32 warps per SM, each running iters x 8
// independent mma.sync m16n8k8 (tf32 in, fp32 accumulate); their sums are
// added to *out. MmaTf32LoopFlops: the FLOPs of one launch.
cudaError_t MmaTf32Loop(int iters, float* out, cudaStream_t stream);
double MmaTf32LoopFlops(int iters);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_BENCH_KERNELS_H_
