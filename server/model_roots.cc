#include "server/model_roots.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::server {
namespace {

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "path: cannot resolve \"", path, "\": ", std::strerror(errno)));
  }
  return std::string(resolved);
}

bool Inside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || absl::StartsWith(path, absl::StrCat(root, "/"));
}

std::string Parent(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : dir.substr(0, slash);
}

}  // namespace

std::vector<std::string> EffectiveModelRoots(
    const std::vector<std::string>& configured_roots,
    const std::string& resolved_model_dir) {
  if (!configured_roots.empty()) return configured_roots;
  if (resolved_model_dir.empty()) return {};
  std::vector<std::string> roots;
  if (std::string parent = Parent(resolved_model_dir); !parent.empty()) {
    roots.push_back(std::move(parent));
  }
  // Where the model's files really are. Under Bazel runfiles the model
  // directory is a real directory of symlinks to the source files, so its own
  // realpath stays in the runfiles tree while a client that canonicalises the
  // checkpoint path (realpath of config.json's directory) names the source
  // tree; both name the same model and both must be accepted.
  auto real = RealPath(resolved_model_dir + "/config.json");
  std::string real_dir;
  if (real.ok()) {
    real_dir = Parent(*real);
  } else if (auto dir = RealPath(resolved_model_dir); dir.ok()) {
    real_dir = *dir;
  }
  if (std::string parent = Parent(real_dir);
      !parent.empty() &&
      std::find(roots.begin(), roots.end(), parent) == roots.end()) {
    roots.push_back(std::move(parent));
  }
  return roots;
}

absl::StatusOr<std::string> ConfineToModelRoots(
    const std::string& path, const std::vector<std::string>& roots) {
  auto real = RealPath(path);
  if (!real.ok()) return real.status();
  struct stat st;
  if (stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("path: \"", path, "\" is not a directory"));
  }
  for (const std::string& root : roots) {
    auto real_root = RealPath(root);
    if (real_root.ok() && Inside(*real, *real_root)) return *real;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "path: \"", path, "\" is outside the model roots (",
      roots.empty() ? "none configured" : absl::StrJoin(roots, ", "),
      "); see model.roots in the server config"));
}

}  // namespace rollout::server
