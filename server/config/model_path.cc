#include "server/config/model_path.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::server {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string SelfRunfiles() {
  std::string dir = Getenv("RUNFILES_DIR");
  if (dir.empty()) {
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return "";
    dir = absl::StrCat(std::string(exe, n), ".runfiles");
  }
  return absl::StrCat(dir, "/rollout");  // the workspace name
}

}  // namespace

PathSearch PathSearch::FromEnvironment() {
  PathSearch search;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) search.roots.push_back(cwd);
  for (const std::string& dir :
       {Getenv("BUILD_WORKSPACE_DIRECTORY"), SelfRunfiles()}) {
    if (!dir.empty() && IsDirectory(dir)) search.roots.push_back(dir);
  }
  return search;
}

absl::StatusOr<std::string> ResolveModelPath(const std::string& path,
                                             const PathSearch& search) {
  if (path.empty()) return absl::InvalidArgumentError("empty model path");
  if (path[0] == '/') {
    if (IsDirectory(path)) return path;
    return absl::NotFoundError(
        absl::StrCat("model directory ", path, " does not exist"));
  }
  std::vector<std::string> tried;
  for (const std::string& root : search.roots) {
    std::string candidate = absl::StrCat(root, "/", path);
    if (IsDirectory(candidate)) return candidate;
    tried.push_back(std::move(candidate));
  }
  return absl::NotFoundError(
      absl::StrCat("model directory ", path, " not found; tried: ",
                   tried.empty() ? "(nowhere)" : absl::StrJoin(tried, ", ")));
}

}  // namespace rollout::server
