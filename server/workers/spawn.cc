#include "server/workers/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace rollout::server::workers {
namespace {

// Closes every descriptor >= `from` except `keep` (the exec-error pipe, which
// is close-on-exec anyway). Async-signal-safe.
void CloseDescriptorsFrom(int from, int keep) {
  struct rlimit limit;
  int max_fd = 65536;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 65536) {
    max_fd = static_cast<int>(limit.rlim_cur);
  }
  for (int fd = from; fd < max_fd; ++fd) {
    if (fd != keep) close(fd);
  }
}

// Runs in the child between fork and execve: async-signal-safe calls only.
[[noreturn]] void ExecChild(pid_t parent, int error_fd, char* const* argv,
                            char* const* envp) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  setpgid(0, 0);
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  signal(SIGPIPE, SIG_DFL);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  CloseDescriptorsFrom(3, error_fd);
  execve(argv[0], argv, envp);
  const int error = errno;
  (void)!write(error_fd, &error, sizeof(error));
  _exit(127);
}

}  // namespace

absl::StatusOr<pid_t> Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty argv");
  // Everything the child needs is built before fork.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    return absl::ResourceExhaustedError(
        absl::StrCat("fork: ", std::strerror(error)));
  }
  if (pid == 0) ExecChild(parent, error_pipe[1], argv.data(), envp.data());
  close(error_pipe[1]);
  // EOF: execve succeeded (the pipe closed on exec); else the child's errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == sizeof(child_errno)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot execute ", spec.argv[0], ": ", std::strerror(child_errno)));
  }
  return pid;
}

absl::StatusOr<std::optional<int>> TryReap(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    return absl::InternalError(
        absl::StrCat("waitpid(", pid, "): ", std::strerror(errno)));
  }
  if (r == 0) return std::nullopt;
  return status;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("ended with wait status ", status);
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  return env;
}

}  // namespace rollout::server::workers
