// Where the rollout-worker executable is.
//
// In order: workers.binary from the config (or rolloutd's --worker_binary
// flag) when set, else the first that exists of
//   - rollout-worker next to rolloutd (an installed layout, e.g. a container),
//   - <dir of rolloutd>/../worker/rollout-worker (bazel-bin),
//   - worker/rollout-worker in rolloutd's runfiles ($RUNFILES_DIR or
//     <rolloutd>.runfiles, workspace "rollout"), and in the current
//     directory (which is the runfiles tree under `bazel run`).
// //server:rolloutd lists //worker:rollout-worker as data, so `bazel run`
// and tests find it without flags.
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_BINARY_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_BINARY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::server::workers {

// Candidate paths for this process (see above), in order.
std::vector<std::string> WorkerBinaryCandidates();

// `configured` if non-empty (it must be an executable file), else the first
// executable candidate. NOT_FOUND lists what was tried.
absl::StatusOr<std::string> FindWorkerBinary(
    const std::string& configured, const std::vector<std::string>& candidates);

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_BINARY_H_
