// Device helpers of the GDN benchmark (gdn_bench): checks that end the
// program on a failed CUDA call or absl::Status (a benchmark has nothing to
// recover), allocation, graph capture, event timing, and the shapes every
// part of the benchmark shares.
#ifndef ROLLOUT_BENCH_GDN_BENCH_DEVICE_H_
#define ROLLOUT_BENCH_GDN_BENCH_DEVICE_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "bench/bench_kernels.h"

#define BENCH_CUDA(x)                                                \
  do {                                                               \
    const cudaError_t e_ = (x);                                      \
    if (e_ != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
                   cudaGetErrorString(e_));                          \
      std::exit(1);                                                  \
    }                                                                \
  } while (0)

#define BENCH_OK(x)                                          \
  do {                                                       \
    const absl::Status s_ = (x);                             \
    if (!s_.ok()) {                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, \
                   s_.ToString().c_str());                   \
      std::exit(1);                                          \
    }                                                        \
  } while (0)

namespace rollout::bench {

inline constexpr int kD = 128;
inline constexpr int kH = 16;
inline constexpr int kL = 16;
inline constexpr size_t kRotateBytes = 256ull << 20;

template <typename T>
T* Alloc(size_t n) {
  void* p = nullptr;
  BENCH_CUDA(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

// A device copy of `v` (slot lists, cursors, offsets, flags).
template <typename T>
T* Upload(const std::vector<T>& v) {
  T* d = Alloc<T>(v.size());
  BENCH_CUDA(
      cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// cudaFree of every non-null pointer given.
inline void FreeOne(const void* p) {
  if (p != nullptr) BENCH_CUDA(cudaFree(const_cast<void*>(p)));
}

template <typename... T>
void FreeAll(T*... p) {
  (FreeOne(p), ...);
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// (max - min) / min of repeated timings of one configuration.
inline double Spread(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi / *lo - 1.0;
}

// Wall-clock time in Unix seconds (to line records up with GPU samples).
inline double UnixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Captures the launches of `body` on `s` into an executable graph.
inline cudaGraphExec_t Capture(cudaStream_t s,
                               const std::function<void()>& body) {
  cudaGraphExec_t exec;
  BENCH_CUDA(CaptureGraph(s, body, &exec));
  return exec;
}

struct Events {
  cudaEvent_t a, b;
  Events() {
    BENCH_CUDA(cudaEventCreate(&a));
    BENCH_CUDA(cudaEventCreate(&b));
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Milliseconds of one run of `fn` on `s`.
  double Time(cudaStream_t s, const std::function<void()>& fn) {
    BENCH_CUDA(cudaEventRecord(a, s));
    fn();
    BENCH_CUDA(cudaEventRecord(b, s));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0.f;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_DEVICE_H_
