// CUDA device discovery and a start-up self-test, callable from plain C++ (no
// CUDA headers here).
//
//   absl::StatusOr<std::vector<DeviceInfo>> devices = QueryDevices();
//   if (devices.ok() && !devices->empty()) RETURN_IF_ERROR(SelfTest(0));
//
// A machine without a GPU or driver yields an empty list, not an error: the
// caller then serves on the CPU backend.
#ifndef ROLLOUT_MODEL_CUDA_DEVICE_H_
#define ROLLOUT_MODEL_CUDA_DEVICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rollout::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
  int64_t l2_bytes = 0;
};

// All visible devices; empty (OK) when there is no driver or no device.
absl::StatusOr<std::vector<DeviceInfo>> QueryDevices();

// Runs a small kernel on `ordinal` and checks its result: catches a device that
// enumerates but cannot execute our sm_90a code (wrong architecture, broken
// driver, ECC state).
absl::Status SelfTest(int ordinal);

// "no GPU" reason for skipping tests and choosing the CPU backend; empty when a
// device exists.
std::string NoGpuReason();

}  // namespace rollout::cuda

#endif  // ROLLOUT_MODEL_CUDA_DEVICE_H_
