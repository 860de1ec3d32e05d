// Starting and reaping worker processes (fork + execve).
//
// The child gets exactly the given argv and environment, stdout redirected
// to rolloutd's stderr (rolloutd's stdout carries its address lines), no
// other inherited descriptors, an empty signal mask, its own process group
// (a terminal's Ctrl-C reaches rolloutd only, which then stops its workers in
// order), and PR_SET_PDEATHSIG = SIGTERM so it exits when rolloutd dies,
// even by SIGKILL. The death signal follows the *thread* that forked: call
// Spawn from a thread that lives as long as the workers (the supervisor's).
// A failed execve is reported as an error, not as a child that exits.
#ifndef ROLLOUT_SERVER_WORKERS_SPAWN_H_
#define ROLLOUT_SERVER_WORKERS_SPAWN_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::server::workers {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is the executable's path
  std::vector<std::string> env;   // "NAME=value"
};

absl::StatusOr<pid_t> Spawn(const SpawnSpec& spec);

// Non-blocking: the child's wait status if it has exited (it is then
// reaped), nullopt while it runs.
absl::StatusOr<std::optional<int>> TryReap(pid_t pid);

// "exited with status 1", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

// The current process's environment as "NAME=value" entries.
std::vector<std::string> CurrentEnvironment();

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_SPAWN_H_
