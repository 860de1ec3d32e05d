// The CUDA runtime calls of the GDN kernels' launchers and tests, on host
// memory, for the CPU emulation (gdn/emu/README.md): linked instead of
// libcudart. Device memory is guarded host memory (device_memory.h:
// out-of-bounds accesses reported); streams are tokens (every call completes
// before it returns); kernel errors come from the emulator (emu.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "gdn/emu/device_memory.h"
#include "gdn/emu/emu.h"

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
  *ptr = gdn_emu::DeviceAlloc(size);
  return *ptr != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  return gdn_emu::DeviceFree(ptr) ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                       cudaMemcpyKind) {
  gdn_emu::HostOrdered();  // the next launch follows this, not a kernel
  if (count > 0) std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                            cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  gdn_emu::HostOrdered();  // the next launch follows this, not a kernel
  if (count > 0) std::memset(ptr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t) {
  return cudaMemset(ptr, value, count);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  static int token;
  *stream = reinterpret_cast<cudaStream_t>(&token);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  return cudaStreamCreate(stream);
}

cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  gdn_emu::HostOrdered();  // the next launch follows this, not a kernel
  return gdn_emu::LastError(/*clear=*/false);
}

cudaError_t cudaDeviceSynchronize() {
  gdn_emu::HostOrdered();  // the next launch follows this, not a kernel
  return gdn_emu::LastError(/*clear=*/false);
}

cudaError_t cudaGetLastError() { return gdn_emu::LastError(/*clear=*/true); }

cudaError_t cudaPeekAtLastError() {
  return gdn_emu::LastError(/*clear=*/false);
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error (emulated)";
    case cudaErrorInvalidValue:
      return "invalid argument (emulated)";
    case cudaErrorMemoryAllocation:
      return "out of memory (emulated)";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument (emulated)";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure (emulated)";
    default:
      return "error (emulated)";
  }
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr,
                                 int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    gdn_emu::SetMaxDynamicShared(func, value);
  }
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int) { return cudaSuccess; }

// An H200's: the launchers size their grids by it.
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount:
      *value = 132;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = 227 * 1024;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    case cudaDevAttrMemoryClockRate:  // kHz: 4.9 TB/s with the bus below
      *value = 3201000;
      return cudaSuccess;
    case cudaDevAttrGlobalMemoryBusWidth:  // bits
      *value = 6144;
      return cudaSuccess;
    default:
      return cudaErrorInvalidValue;
  }
}

}  // extern "C"
