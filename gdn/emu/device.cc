// model/cuda/device.h for the CPU emulation (gdn/emu/README.md): one
// emulated device, so the GPU tests built against the emulation run instead
// of skipping.
#include "model/cuda/device.h"

#include <string>
#include <vector>

namespace rollout::cuda {

absl::StatusOr<std::vector<DeviceInfo>> QueryDevices() {
  DeviceInfo d;
  d.ordinal = 0;
  d.name = "CPU emulation (gdn/emu)";
  d.compute_major = 9;
  d.compute_minor = 0;
  return std::vector<DeviceInfo>{d};
}

absl::Status SelfTest(int) { return absl::OkStatus(); }

std::string NoGpuReason() { return ""; }

}  // namespace rollout::cuda
