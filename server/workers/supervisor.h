// Supervisor: the rollout-worker processes of one rolloutd.
//
// One thread (started by Start) owns the processes: it spawns each worker
// (fork + exec of the launch spec the owner builds), probes its socket with
// GetInfo until it answers (ready) or workers.startup_timeout_seconds pass
// (then it is killed), reaps exits, and restarts an exited worker after the
// RestartPolicy's back-off. Every period it also calls Listener::Tick, where
// the owner runs its watchdog, stats polls and timeouts.
//
// Kill() is the owner's way to replace a worker (e.g. a hung one: the
// progress watchdog). The exit is then handled like a crash: Listener::
// WorkerLost, back-off, restart.
//
// Threading: Start, Kill, Snapshot and Stop are thread-safe. Listener
// callbacks run on the supervisor thread or on gRPC threads, never with the
// supervisor's lock held, so the listener may call Kill/Snapshot from them;
// the owner may hold its own lock while calling Kill/Snapshot (its lock comes
// first). Incarnations (one per process) tell stale callbacks apart.
#ifndef ROLLOUT_SERVER_WORKERS_SUPERVISOR_H_
#define ROLLOUT_SERVER_WORKERS_SUPERVISOR_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "rollout/v1/rollout.pb.h"
#include "rollout/worker/v1/worker.pb.h"
#include "server/workers/restart_policy.h"
#include "server/workers/spawn.h"
#include "server/workers/worker_client.h"

namespace rollout::server::workers {

struct SupervisorOptions {
  // Unix socket of each worker (the vector's size is the worker count).
  std::vector<std::string> socket_paths;
  // Builds worker `index`'s command line and environment (called on the
  // supervisor thread, without the supervisor's lock: it may lock the
  // owner's state).
  std::function<absl::StatusOr<SpawnSpec>(int index)> launch;
  absl::Duration startup_timeout = absl::Seconds(600);
  RestartPolicy restart;
  // How often processes are checked and the listener ticked.
  absl::Duration period = absl::Milliseconds(50);
  // GetInfo probes of a starting worker: interval and deadline.
  absl::Duration probe_interval = absl::Milliseconds(100);
  absl::Duration probe_timeout = absl::Seconds(2);
};

class Supervisor {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // A process was started (`restart`: after an exit of the previous one).
    virtual void WorkerStarting(int index, uint64_t incarnation,
                                bool restart) = 0;
    // The process answered GetInfo.
    virtual void WorkerReady(int index, uint64_t incarnation,
                             std::shared_ptr<WorkerConnection> connection,
                             const rollout::worker::v1::WorkerInfo& info) = 0;
    // The process is gone (exited, killed, failed to start). `crash_loop`:
    // it is now in back-off after repeated failures.
    virtual void WorkerLost(int index, uint64_t incarnation,
                            const std::string& why, bool crash_loop) = 0;
    virtual void Tick(absl::Time now) = 0;
  };

  struct WorkerSnapshot {
    rollout::v1::WorkerState state = rollout::v1::WORKER_STATE_UNSPECIFIED;
    int restarts = 0;
    bool crash_loop = false;
    pid_t pid = -1;
    uint64_t incarnation = 0;
  };

  Supervisor(SupervisorOptions options, Listener* listener);
  ~Supervisor();  // Stop(now) if not stopped

  void Start();
  // SIGKILLs worker `index` if it still runs `incarnation`.
  void Kill(int index, uint64_t incarnation, const std::string& why)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<WorkerSnapshot> Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the thread, SIGTERMs every worker, waits for them until `deadline`,
  // SIGKILLs the rest and reaps them; waits for outstanding probes.
  // Idempotent. No listener callback runs after it returns.
  void Stop(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Phase {
    kNew,       // not started yet
    kStarting,  // process running, not answering yet
    kReady,     // answered GetInfo
    kBackoff,   // exited; waiting to restart
    kStopped,   // shutting down
  };
  struct Proc {
    Phase phase = Phase::kNew;
    pid_t pid = -1;
    uint64_t incarnation = 0;
    absl::Time started = absl::InfinitePast();
    absl::Time ready_since = absl::InfinitePast();
    absl::Time restart_at = absl::InfinitePast();
    absl::Time next_probe = absl::InfinitePast();
    bool probing = false;
    bool timeout_killed = false;
    int failures = 0;  // in a row
    int restarts = 0;
    std::string kill_reason;
    std::shared_ptr<WorkerConnection> connection;
  };
  struct Lost {
    int index;
    uint64_t incarnation;
    std::string why;
    bool crash_loop;
  };
  struct Probe {
    int index;
    uint64_t incarnation;
    std::shared_ptr<WorkerConnection> connection;
  };

  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  void CheckOnce(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  void SpawnWorker(int index) ABSL_LOCKS_EXCLUDED(mu_);
  // Records a process exit or start failure; returns what to tell the
  // listener.
  Lost FailLocked(int index, absl::Time now, std::string why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartProbe(Probe probe);

  const SupervisorOptions options_;
  Listener* const listener_;
  mutable rollout::Mutex mu_;
  std::vector<Proc> procs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  InFlight probes_;
  std::thread thread_;
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_SUPERVISOR_H_
