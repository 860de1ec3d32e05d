// Which device a worker owns and which backend runs the model on it.
//
//   requested "cpu"      -> the CPU.
//   requested "cuda:<i>" -> GPU i (FAILED_PRECONDITION if it is not visible).
//   requested "auto"     -> GPU <worker index> if visible, else the CPU.
//
// There is no CUDA model backend yet: a worker that owns a GPU still runs the
// model on the CPU backend, and says so (note). The device stays recorded so
// that a CUDA backend can take over here without changing rolloutd.
#ifndef ROLLOUT_WORKER_SERVICE_DEVICE_CHOICE_H_
#define ROLLOUT_WORKER_SERVICE_DEVICE_CHOICE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/cuda/device.h"

namespace rollout::worker::service {

struct DeviceChoice {
  std::string device = "cpu";   // "cpu" or "cuda:<i>"
  std::string backend = "cpu";  // what runs the model
  int cuda_ordinal = -1;        // >= 0 for a GPU
  std::string note;             // why backend and device differ ("" if not)
};

// Pure: `visible` is what cuda::QueryDevices() returned.
absl::StatusOr<DeviceChoice> ChooseDevice(
    absl::string_view requested, int worker_index,
    const std::vector<rollout::cuda::DeviceInfo>& visible);

}  // namespace rollout::worker::service

#endif  // ROLLOUT_WORKER_SERVICE_DEVICE_CHOICE_H_
