#include <cuda_runtime.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "model/cuda/device.h"

namespace rollout::cuda {
namespace {

absl::Status CudaError(cudaError_t err, const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(err)));
}

// out[i] = a * i + b for i < n: enough to prove that code for this architecture
// runs.
__global__ void AffineKernel(float* out, int n, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * static_cast<float>(i) + b;
}

}  // namespace

absl::StatusOr<std::vector<DeviceInfo>> QueryDevices() {
  std::vector<DeviceInfo> devices;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return devices;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, d);
    if (err != cudaSuccess) return CudaError(err, "cudaGetDeviceProperties");
    DeviceInfo info;
    info.ordinal = d;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.total_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    info.l2_bytes = prop.l2CacheSize;
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(d) == cudaSuccess &&
        cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      info.free_bytes = static_cast<int64_t>(free_b);
    }
    devices.push_back(info);
  }
  return devices;
}

absl::Status SelfTest(int ordinal) {
  cudaError_t err = cudaSetDevice(ordinal);
  if (err != cudaSuccess) return CudaError(err, "cudaSetDevice");
  constexpr int kN =
      1000;  // not a multiple of the block size: exercises the tail guard
  float* d_out = nullptr;
  err = cudaMalloc(&d_out, kN * sizeof(float));
  if (err != cudaSuccess) return CudaError(err, "cudaMalloc");
  AffineKernel<<<(kN + 255) / 256, 256>>>(d_out, kN, 0.5f, 3.0f);
  err = cudaGetLastError();
  std::vector<float> host(kN, -1.0f);
  if (err == cudaSuccess) {
    err = cudaMemcpy(host.data(), d_out, kN * sizeof(float),
                     cudaMemcpyDeviceToHost);
  }
  cudaFree(d_out);
  if (err != cudaSuccess) return CudaError(err, "self-test kernel");
  for (int i = 0; i < kN; ++i) {
    if (host[i] != 0.5f * static_cast<float>(i) + 3.0f) {
      return absl::InternalError(
          absl::StrCat("self-test kernel wrote a wrong value at ", i));
    }
  }
  return absl::OkStatus();
}

std::string NoGpuReason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return absl::StrCat("no usable CUDA device: ", cudaGetErrorString(err));
  }
  if (count == 0) return "no CUDA device visible";
  return "";
}

}  // namespace rollout::cuda
