#include "worker/service/device_choice.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rollout::worker::service {
namespace {

DeviceChoice OnGpu(int ordinal) {
  DeviceChoice c;
  c.device = absl::StrCat("cuda:", ordinal);
  c.cuda_ordinal = ordinal;
  c.backend = "cpu";
  c.note =
      "no CUDA model backend yet: the model runs on the CPU backend (fp32) "
      "while the worker owns the GPU";
  return c;
}

}  // namespace

absl::StatusOr<DeviceChoice> ChooseDevice(
    absl::string_view requested, int worker_index,
    const std::vector<rollout::cuda::DeviceInfo>& visible) {
  const int count = static_cast<int>(visible.size());
  if (requested == "cpu") return DeviceChoice();
  if (requested == "auto" || requested.empty()) {
    if (worker_index >= 0 && worker_index < count) return OnGpu(worker_index);
    return DeviceChoice();
  }
  int ordinal = -1;
  if (!absl::StartsWith(requested, "cuda:") ||
      !absl::SimpleAtoi(requested.substr(5), &ordinal) || ordinal < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device: must be auto, cpu or cuda:<index>, got \"", requested, "\""));
  }
  if (ordinal >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", requested, " is not visible (", count,
                     " CUDA device(s) found)"));
  }
  return OnGpu(ordinal);
}

}  // namespace rollout::worker::service
