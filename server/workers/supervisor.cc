#include "server/workers/supervisor.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace rollout::server::workers {
namespace {

bool SocketExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

void Log(int index, const std::string& message) {
  std::cerr << "rolloutd: worker " << index << ": " << message << std::endl;
}

}  // namespace

Supervisor::Supervisor(SupervisorOptions options, Listener* listener)
    : options_(std::move(options)),
      listener_(listener),
      procs_(options_.socket_paths.size()) {}

Supervisor::~Supervisor() { Stop(absl::Now()); }

void Supervisor::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Supervisor::Loop() {
  while (true) {
    CheckOnce(absl::Now());
    rollout::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.period)) {
      return;
    }
  }
}

Supervisor::Lost Supervisor::FailLocked(int index, absl::Time now,
                                        std::string why) {
  Proc& p = procs_[index];
  ++p.failures;
  const absl::Duration delay = options_.restart.Delay(p.failures);
  const bool crash_loop = RestartPolicy::CrashLooping(p.failures);
  Log(index,
      absl::StrCat(p.pid > 0 ? absl::StrCat("process ", p.pid, " ") : "", why,
                   "; restarting",
                   delay > absl::ZeroDuration()
                       ? absl::StrCat(" in ", absl::FormatDuration(delay),
                                      " (failure ", p.failures, " in a row)")
                       : ""));
  p.phase = Phase::kBackoff;
  p.pid = -1;
  p.connection.reset();
  p.probing = false;
  p.timeout_killed = false;
  p.kill_reason.clear();
  p.restart_at = now + delay;
  return Lost{index, p.incarnation, std::move(why), crash_loop};
}

void Supervisor::CheckOnce(absl::Time now) {
  std::vector<Lost> lost;
  std::vector<Probe> probes;
  std::vector<int> spawn;
  {
    rollout::MutexLock lock(&mu_);
    if (stopping_) return;
    for (int i = 0; i < static_cast<int>(procs_.size()); ++i) {
      Proc& p = procs_[i];
      if (p.pid > 0) {
        auto exited = TryReap(p.pid);
        if (!exited.ok() || exited->has_value()) {
          std::string why = exited.ok()
                                ? DescribeWaitStatus(**exited)
                                : std::string(exited.status().message());
          if (!p.kill_reason.empty()) {
            why = absl::StrCat(why, " [", p.kill_reason, "]");
          }
          unlink(options_.socket_paths[i].c_str());
          lost.push_back(FailLocked(i, now, std::move(why)));
          continue;
        }
      }
      switch (p.phase) {
        case Phase::kStarting:
          if (now - p.started > options_.startup_timeout) {
            if (!p.timeout_killed && p.pid > 0) {
              p.timeout_killed = true;
              p.kill_reason = absl::StrCat(
                  "not ready within workers.startup_timeout_seconds (",
                  absl::FormatDuration(options_.startup_timeout), ")");
              kill(p.pid, SIGKILL);
            }
          } else if (!p.probing && now >= p.next_probe &&
                     SocketExists(options_.socket_paths[i])) {
            p.probing = true;
            probes.push_back({i, p.incarnation, p.connection});
          }
          break;
        case Phase::kReady:
          if (p.failures > 0 &&
              now - p.ready_since >= options_.restart.healthy_after) {
            p.failures = 0;
          }
          break;
        case Phase::kNew:
        case Phase::kBackoff:
          if (now >= p.restart_at) spawn.push_back(i);
          break;
        case Phase::kStopped:
          break;
      }
    }
  }
  for (const Lost& l : lost) {
    listener_->WorkerLost(l.index, l.incarnation, l.why, l.crash_loop);
  }
  for (int index : spawn) SpawnWorker(index);
  for (Probe& probe : probes) StartProbe(std::move(probe));
  listener_->Tick(now);
}

void Supervisor::SpawnWorker(int index) {
  absl::StatusOr<SpawnSpec> spec = options_.launch(index);
  absl::StatusOr<pid_t> pid =
      spec.ok() ? Spawn(*spec) : absl::StatusOr<pid_t>(spec.status());
  const absl::Time now = absl::Now();
  std::optional<Lost> lost;
  uint64_t incarnation = 0;
  bool restart = false;
  {
    rollout::MutexLock lock(&mu_);
    if (stopping_) {
      if (pid.ok()) {
        kill(*pid, SIGKILL);
        waitpid(*pid, nullptr, 0);
      }
      return;
    }
    Proc& p = procs_[index];
    restart = p.incarnation > 0;
    incarnation = ++p.incarnation;
    if (!pid.ok()) {
      lost = FailLocked(index, now,
                        absl::StrCat("cannot start: ", pid.status().message()));
    } else {
      if (restart) ++p.restarts;
      p.pid = *pid;
      p.phase = Phase::kStarting;
      p.started = now;
      p.next_probe = now;
      p.connection =
          std::make_shared<WorkerConnection>(options_.socket_paths[index]);
      Log(index, absl::StrCat(restart ? "restarted" : "started", " as process ",
                              *pid));
    }
  }
  if (lost.has_value()) {
    listener_->WorkerLost(lost->index, lost->incarnation, lost->why,
                          lost->crash_loop);
  } else {
    listener_->WorkerStarting(index, incarnation, restart);
  }
}

void Supervisor::StartProbe(Probe probe) {
  using Call = UnaryCall<rollout::worker::v1::GetInfoRequest,
                         rollout::worker::v1::WorkerInfo>;
  auto call = std::make_shared<Call>();
  call->context.set_deadline(
      absl::ToChronoTime(absl::Now() + options_.probe_timeout));
  call->context.set_wait_for_ready(true);
  probes_.Begin();
  probe.connection->stub()->async()->GetInfo(
      &call->context, &call->request, &call->response,
      [this, call, probe](grpc::Status status) {
        bool ready = false;
        {
          rollout::MutexLock lock(&mu_);
          Proc& p = procs_[probe.index];
          if (!stopping_ && p.incarnation == probe.incarnation &&
              p.phase == Phase::kStarting) {
            p.probing = false;
            const absl::Time now = absl::Now();
            if (status.ok()) {
              p.phase = Phase::kReady;
              p.ready_since = now;
              ready = true;
              Log(probe.index,
                  absl::StrCat("ready (process ", p.pid, ", device ",
                               call->response.device(), ", backend ",
                               call->response.backend(), ") after ",
                               absl::FormatDuration(now - p.started)));
            } else {
              p.next_probe = now + options_.probe_interval;
            }
          }
        }
        if (ready) {
          listener_->WorkerReady(probe.index, probe.incarnation,
                                 probe.connection, call->response);
        }
        probes_.End();
      });
}

void Supervisor::Kill(int index, uint64_t incarnation, const std::string& why) {
  rollout::MutexLock lock(&mu_);
  if (index < 0 || index >= static_cast<int>(procs_.size())) return;
  Proc& p = procs_[index];
  if (p.incarnation != incarnation || p.pid <= 0 || !p.kill_reason.empty()) {
    return;
  }
  p.kill_reason = why;
  Log(index, absl::StrCat("killing process ", p.pid, ": ", why));
  kill(p.pid, SIGKILL);
}

std::vector<Supervisor::WorkerSnapshot> Supervisor::Snapshot() const {
  rollout::MutexLock lock(&mu_);
  std::vector<WorkerSnapshot> out(procs_.size());
  for (size_t i = 0; i < procs_.size(); ++i) {
    const Proc& p = procs_[i];
    WorkerSnapshot& s = out[i];
    switch (p.phase) {
      case Phase::kNew:
      case Phase::kStarting:
        s.state = rollout::v1::WORKER_STATE_STARTING;
        break;
      case Phase::kReady:
        s.state = rollout::v1::WORKER_STATE_READY;
        break;
      case Phase::kBackoff:
        s.state = rollout::v1::WORKER_STATE_RESTARTING;
        break;
      case Phase::kStopped:
        s.state = rollout::v1::WORKER_STATE_STOPPED;
        break;
    }
    s.restarts = p.restarts;
    s.crash_loop =
        p.phase == Phase::kBackoff && RestartPolicy::CrashLooping(p.failures);
    s.pid = p.pid;
    s.incarnation = p.incarnation;
  }
  return out;
}

void Supervisor::Stop(absl::Time deadline) {
  {
    rollout::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  std::vector<std::pair<int, pid_t>> running;
  {
    rollout::MutexLock lock(&mu_);
    for (int i = 0; i < static_cast<int>(procs_.size()); ++i) {
      Proc& p = procs_[i];
      if (p.pid > 0) {
        kill(p.pid, SIGTERM);  // drain: refuse new work, end, exit
        kill(p.pid, SIGCONT);  // a stopped process must run to exit
        running.emplace_back(i, p.pid);
      }
      p.phase = Phase::kStopped;
      p.pid = -1;
    }
  }
  while (!running.empty()) {
    for (auto it = running.begin(); it != running.end();) {
      auto exited = TryReap(it->second);
      if (!exited.ok() || exited->has_value()) {
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    if (running.empty()) break;
    if (absl::Now() >= deadline) {
      for (const auto& [index, pid] : running) {
        Log(index, absl::StrCat("process ", pid,
                                " did not exit in time after SIGTERM; killed"));
        kill(pid, SIGKILL);
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  for (const std::string& path : options_.socket_paths) unlink(path.c_str());
  probes_.WaitIdle(absl::Now() + absl::Seconds(10));
}

}  // namespace rollout::server::workers
