// The private directory that holds the workers' unix sockets.
//
// Only rolloutd's user may reach a worker: the directory is 0700 and owned by
// rolloutd's user (the worker additionally creates its socket with umask
// 077). With workers.socket_dir unset, a fresh directory is made under
// $TMPDIR (or /tmp when that path would be too long for a unix socket: 107
// bytes) and removed at exit. A configured directory is created 0700 if
// missing; if it exists it must be a directory owned by this user with no
// group or other permissions (FAILED_PRECONDITION otherwise); it is kept.
#ifndef ROLLOUT_SERVER_WORKERS_SOCKET_DIR_H_
#define ROLLOUT_SERVER_WORKERS_SOCKET_DIR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::server::workers {

class SocketDir {
 public:
  static absl::StatusOr<std::unique_ptr<SocketDir>> Create(
      const std::string& configured, int num_workers);
  ~SocketDir();  // removes the sockets (and the directory if made here)
  SocketDir(const SocketDir&) = delete;
  SocketDir& operator=(const SocketDir&) = delete;

  const std::string& path() const { return path_; }
  // <path>/worker-<index>.sock
  std::string SocketPath(int index) const;

 private:
  SocketDir(std::string path, bool owned, int num_workers)
      : path_(std::move(path)), owned_(owned), num_workers_(num_workers) {}
  const std::string path_;
  const bool owned_;
  const int num_workers_;
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_SOCKET_DIR_H_
