#include "server/workers/worker_binary.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::server::workers {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string SelfExe() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  return n > 0 ? std::string(exe, n) : "";
}

}  // namespace

std::vector<std::string> WorkerBinaryCandidates() {
  std::vector<std::string> out;
  const std::string exe = SelfExe();
  if (!exe.empty()) {
    const std::string dir = exe.substr(0, exe.rfind('/'));
    out.push_back(absl::StrCat(dir, "/rollout-worker"));
    out.push_back(absl::StrCat(dir, "/../worker/rollout-worker"));
  }
  const char* runfiles = std::getenv("RUNFILES_DIR");
  if (runfiles != nullptr && runfiles[0] != '\0') {
    out.push_back(absl::StrCat(runfiles, "/rollout/worker/rollout-worker"));
  }
  if (!exe.empty()) {
    out.push_back(absl::StrCat(exe, ".runfiles/rollout/worker/rollout-worker"));
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) {
    out.push_back(absl::StrCat(cwd, "/worker/rollout-worker"));
  }
  return out;
}

absl::StatusOr<std::string> FindWorkerBinary(
    const std::string& configured, const std::vector<std::string>& candidates) {
  if (!configured.empty()) {
    if (IsExecutableFile(configured)) return configured;
    return absl::FailedPreconditionError(absl::StrCat(
        "workers.binary: ", configured, " is not an executable file"));
  }
  for (const std::string& c : candidates) {
    if (IsExecutableFile(c)) return c;
  }
  return absl::NotFoundError(absl::StrCat(
      "rollout-worker not found; set workers.binary or --worker_binary "
      "(tried: ",
      candidates.empty() ? "nothing" : absl::StrJoin(candidates, ", "), ")"));
}

}  // namespace rollout::server::workers
