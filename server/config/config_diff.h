// Field-by-field comparison of two ServerConfigs, with each field's reload
// policy (the `(rollout.v1.reload)` option in config.proto).
//
//   for (const FieldDiff& d : DiffServerConfigs(current, candidate)) {
//     if (d.policy == v1::RELOAD_POLICY_HOT) CopyConfigField(candidate, d.path,
//                                                           &next);
//   }
//
// Leaves are scalar, string, enum and repeated fields; singular message fields
// are walked into. A leaf's policy is that of the nearest annotated field on
// its path (the leaf itself, else its parent, ...).
#ifndef ROLLOUT_SERVER_CONFIG_CONFIG_DIFF_H_
#define ROLLOUT_SERVER_CONFIG_CONFIG_DIFF_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rollout/v1/config.pb.h"

namespace rollout::server {

struct FieldDiff {
  std::string path;       // e.g. "admission.max_n"
  std::string old_value;  // text format; "" when unset
  std::string new_value;
  rollout::v1::ReloadPolicy policy = rollout::v1::RELOAD_POLICY_UNSPECIFIED;
};

// Every leaf whose value differs, in field-number order (depth first).
std::vector<FieldDiff> DiffServerConfigs(
    const rollout::v1::ServerConfig& before,
    const rollout::v1::ServerConfig& after);

// Paths of every leaf field of ServerConfig, depth first.
std::vector<std::string> ServerConfigLeafPaths();

// Reload policy of the leaf at `path`; UNSPECIFIED for an unknown path or a
// leaf without an annotation on its path.
rollout::v1::ReloadPolicy ReloadPolicyOf(absl::string_view path);

// Sets the leaf at `path` of `to` to its value (or absence) in `from`.
// INVALID_ARGUMENT for a path that is not a leaf of ServerConfig.
absl::Status CopyConfigField(const rollout::v1::ServerConfig& from,
                             absl::string_view path,
                             rollout::v1::ServerConfig* to);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_CONFIG_DIFF_H_
