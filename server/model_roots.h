// Confinement of Admin.UpdateWeights paths to the configured model roots:
// a weight path is accepted only if it resolves (symlinks and ".." followed)
// to a directory inside one of the roots. Otherwise PERMISSION_DENIED, so a
// leaked admin token cannot make the workers read arbitrary files.
#ifndef ROLLOUT_SERVER_MODEL_ROOTS_H_
#define ROLLOUT_SERVER_MODEL_ROOTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::server {

// model.roots when set; else the directory containing the resolved model
// directory, plus the directory containing where its files really are
// (realpath of <model_dir>/config.json) when that differs, as under Bazel
// runfiles; empty when the model directory is unknown (nothing is allowed).
// Touches the file system. Roots are canonicalised again when compared.
std::vector<std::string> EffectiveModelRoots(
    const std::vector<std::string>& configured_roots,
    const std::string& resolved_model_dir);

// The resolved (real) directory `path` names if it lies inside a root. Both
// sides are compared after realpath: a symlink is followed wherever it is (one
// outside the roots pointing into a root is accepted, one inside a root
// pointing out of it is refused) and ".." cannot climb out of a root.
// INVALID_ARGUMENT when it does not exist or is not a directory;
// PERMISSION_DENIED when it is outside every root. Blocking (file system).
absl::StatusOr<std::string> ConfineToModelRoots(
    const std::string& path, const std::vector<std::string>& roots);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_MODEL_ROOTS_H_
