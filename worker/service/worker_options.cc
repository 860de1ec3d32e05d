#include "worker/service/worker_options.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::worker::service {

absl::Status WorkerOptions::Validate() const {
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("index: must be >= 0, got ", index));
  }
  if (socket_path.empty()) {
    return absl::InvalidArgumentError("socket: required");
  }
  // sockaddr_un.sun_path holds 108 bytes including the terminator.
  if (socket_path.size() > 107) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket: a unix socket path has at most 107 bytes, got ",
                     socket_path.size(), " (", socket_path, ")"));
  }
  if (model_dir.empty()) return absl::InvalidArgumentError("model: required");
  if (threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads: must be >= 0, got ", threads));
  }
  if (weights_dir.empty() != (weight_version == 0)) {
    return absl::InvalidArgumentError(
        "weights and weight_version: set both (version > 0) or neither");
  }
  if (weight_version < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight_version: must be >= 0, got ", weight_version));
  }
  if (drain_seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("drain_seconds: must be >= 0, got ", drain_seconds));
  }
  return engine.Validate();
}

}  // namespace rollout::worker::service
