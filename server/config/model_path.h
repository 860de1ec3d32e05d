// Where a relative model path (ServerConfig.model.path) is found.
//
// The default, "tests/data/tiny_qwen3_5", is relative to the workspace root.
// It must work for `bazel run //server:rolloutd` (cwd = rolloutd's runfiles),
// for a binary started from the workspace, and in tests. A relative path is
// looked up, in order, in:
//   1. the current directory,
//   2. $BUILD_WORKSPACE_DIRECTORY (set by `bazel run`),
//   3. rolloutd's runfiles ($RUNFILES_DIR or <binary>.runfiles, workspace
//      "rollout"),
// and the first existing directory wins. Absolute paths are taken as they are.
#ifndef ROLLOUT_SERVER_CONFIG_MODEL_PATH_H_
#define ROLLOUT_SERVER_CONFIG_MODEL_PATH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::server {

struct PathSearch {
  std::vector<std::string> roots;  // directories tried in order

  // cwd, $BUILD_WORKSPACE_DIRECTORY, runfiles of this process (those that
  // exist).
  static PathSearch FromEnvironment();
};

// The directory `path` names. NOT_FOUND lists every place that was tried.
absl::StatusOr<std::string> ResolveModelPath(const std::string& path,
                                             const PathSearch& search);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_MODEL_PATH_H_
