// Test helpers for the GDN kernels (testonly): device buffers, host bf16
// conversion, random bf16-exact inputs, error metrics, the GPU-test skip.
#ifndef ROLLOUT_GDN_TEST_UTIL_H_
#define ROLLOUT_GDN_TEST_UTIL_H_

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/cuda/device.h"

// Skips the current test, with the reason, where no usable GPU is present.
#define GDN_SKIP_WITHOUT_GPU()                                            \
  do {                                                                    \
    const std::string gdn_no_gpu_reason = ::rollout::cuda::NoGpuReason(); \
    if (!gdn_no_gpu_reason.empty()) {                                     \
      GTEST_SKIP() << "GPU test skipped: " << gdn_no_gpu_reason;          \
    }                                                                     \
  } while (0)

namespace rollout::gdn::testing {

// Peak DRAM bandwidths (GB/s) of an H100 SXM and an H200, as
// DevicePeakMemoryGbps computes them (decode.h): the two tile tables.
inline constexpr double kH100Gbps = 3352.3;
inline constexpr double kH200Gbps = 4916.7;

// The kernel tests' head counts are divided by this: 16 on the CPU emulation
// (gdn/emu; H = 1 and HV = 1-4 keep the H : HV ratios, and so every tile and
// code path, at 1/16 of the work), 1 on a GPU.
#ifdef GDN_CUDA_EMU
inline constexpr int kHeadCut = 16;
#else
inline constexpr int kHeadCut = 1;
#endif

// How many drawn configurations a RandomConfigurations test runs: all
// `on_emulation` on the emulation, the first 8 on a GPU (whose time goes to
// the CPU reference at full head counts).
constexpr int RandomConfigCount(int on_emulation) {
#ifdef GDN_CUDA_EMU
  return on_emulation;
#else
  return on_emulation < 8 ? on_emulation : 8;
#endif
}

// Round-to-nearest-even fp32 -> bf16 bits (NaN kept NaN).
inline uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float FromBf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float RoundBf16(float f) { return FromBf16(ToBf16(f)); }

inline std::vector<uint16_t> ToBf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = ToBf16(v[i]);
  return out;
}

inline std::vector<float> FromBf16(const std::vector<uint16_t>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = FromBf16(v[i]);
  return out;
}

// Normal(0, stddev) values rounded to bf16 (so the fp32 reference sees exactly
// the kernel's inputs).
inline std::vector<float> RandomBf16Exact(std::mt19937& rng, size_t n,
                                          float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = RoundBf16(dist(rng));
  return v;
}

inline std::vector<float> RandomNormal(std::mt19937& rng, size_t n,
                                       float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ||a - b|| / ||b|| over [offset, offset + n) of both.
inline double RelErr(const float* a, const float* b, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  if (std::isnan(num)) return INFINITY;
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den);
}

inline bool AllFinite(const float* a, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i])) return false;
  }
  return true;
}

// Owning device allocation (cudaMalloc: 256-byte aligned).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { Resize(n); }
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), n_(o.n_) {
    o.ptr_ = nullptr;
    o.n_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      ptr_ = o.ptr_;
      n_ = o.n_;
      o.ptr_ = nullptr;
      o.n_ = 0;
    }
    return *this;
  }

  // Returns false if the allocation failed.
  bool Resize(size_t n) {
    Reset();
    if (n == 0) return true;
    if (cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)) !=
        cudaSuccess) {
      ptr_ = nullptr;
      return false;
    }
    n_ = n;
    return true;
  }
  void Reset() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    n_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

  cudaError_t Upload(const std::vector<T>& host) {
    if (host.size() != n_ && !Resize(host.size()))
      return cudaErrorMemoryAllocation;
    return cudaMemcpy(ptr_, host.data(), n_ * sizeof(T),
                      cudaMemcpyHostToDevice);
  }
  std::vector<T> Download() const {
    std::vector<T> host(n_);
    if (n_ > 0) {
      cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    }
    return host;
  }
  // Every byte set to `byte` (0xFF: NaN in both bf16 and fp32).
  cudaError_t Fill(int byte) { return cudaMemset(ptr_, byte, bytes()); }

 private:
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

template <typename T>
DeviceBuffer<T> ToDevice(const std::vector<T>& host) {
  DeviceBuffer<T> d;
  d.Upload(host);
  return d;
}

inline std::string CudaLastError() {
  const cudaError_t e = cudaDeviceSynchronize();
  const cudaError_t l = cudaGetLastError();
  if (e != cudaSuccess) return cudaGetErrorString(e);
  if (l != cudaSuccess) return cudaGetErrorString(l);
  return "";
}

}  // namespace rollout::gdn::testing

#endif  // ROLLOUT_GDN_TEST_UTIL_H_
