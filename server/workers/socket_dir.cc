#include "server/workers/socket_dir.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::server::workers {
namespace {

constexpr size_t kMaxSocketPath = 107;  // sun_path minus the terminator

size_t LongestSocketPath(const std::string& dir, int num_workers) {
  return dir.size() + absl::StrCat("/worker-", num_workers, ".sock").size();
}

absl::Status CheckPrivate(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workers.socket_dir: cannot stat ", dir, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("workers.socket_dir: ", dir, " is not a directory"));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("workers.socket_dir: ", dir, " is owned by uid ",
                     st.st_uid, ", not by this process's uid ", geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workers.socket_dir: ", dir,
        " is accessible to group or others (mode 0", (st.st_mode & 0777) >> 6,
        (st.st_mode & 077) >> 3, st.st_mode & 07, "); make it 0700"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SocketDir>> SocketDir::Create(
    const std::string& configured, int num_workers) {
  std::string dir;
  bool owned = false;
  if (!configured.empty()) {
    dir = configured;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("workers.socket_dir: cannot create ", dir, ": ",
                       std::strerror(errno)));
    }
    if (absl::Status s = CheckPrivate(dir); !s.ok()) return s;
    if (LongestSocketPath(dir, num_workers) > kMaxSocketPath) {
      return absl::InvalidArgumentError(
          absl::StrCat("workers.socket_dir: ", dir,
                       " is too long for unix socket paths (at most ",
                       kMaxSocketPath, " bytes with /worker-<i>.sock)"));
    }
  } else {
    std::vector<std::string> bases;
    const char* tmpdir = getenv("TMPDIR");
    if (tmpdir != nullptr && tmpdir[0] == '/') bases.push_back(tmpdir);
    bases.push_back("/tmp");
    for (std::string base : bases) {
      while (base.size() > 1 && base.back() == '/') base.pop_back();
      std::string candidate = absl::StrCat(base, "/rolloutd-XXXXXX");
      if (LongestSocketPath(candidate, num_workers) > kMaxSocketPath) continue;
      std::vector<char> buffer(candidate.begin(), candidate.end());
      buffer.push_back('\0');
      if (mkdtemp(buffer.data()) == nullptr) continue;  // mode 0700
      dir = buffer.data();
      owned = true;
      break;
    }
    if (dir.empty()) {
      return absl::FailedPreconditionError(
          "cannot create a private directory for the worker sockets under "
          "$TMPDIR or /tmp; set workers.socket_dir");
    }
  }
  return std::unique_ptr<SocketDir>(new SocketDir(dir, owned, num_workers));
}

SocketDir::~SocketDir() {
  for (int i = 0; i < num_workers_; ++i) unlink(SocketPath(i).c_str());
  if (owned_) rmdir(path_.c_str());
}

std::string SocketDir::SocketPath(int index) const {
  return absl::StrCat(path_, "/worker-", index, ".sock");
}

}  // namespace rollout::server::workers
