// WorkerPool: the Dispatcher of a rolloutd with rollout-worker processes
// (DESIGN.md section 2).
//
// - Processes: workers.count workers (device per workers.devices), started
//   and supervised by a Supervisor (fork/exec with a clean environment, a
//   private socket directory, restart with back-off). A worker serves once
//   it answers GetInfo and runs the weights rolloutd serves.
// - Routing: each group goes to the ready worker with the least outstanding
//   work (router.h) and at most its capacity; the rest waits in rolloutd's
//   queue (bounded by admission). No ready worker: UNAVAILABLE.
// - Results: Generate collects the worker's stream into one response;
//   GenerateStream forwards the deltas (generate_assembler.h).
// - Deadlines and cancellation: the deadline travels with the request (the
//   engine aborts it and frees its slots within one step); a cancelled call
//   cancels the worker call, which cancels the request in the engine.
// - Nothing lost: when a worker dies (crash, kill -9, or killed by the
//   progress watchdog because it made no progress for
//   health.watchdog_seconds while it had work, e.g. SIGSTOP), every call it
//   was running is re-run from scratch with the same request and seed on a
//   ready worker (the restarted one or another). Seeded output is identical;
//   a stream skips what it already sent and checks it. A call whose workers
//   die max_reruns times fails (UNAVAILABLE).
// - Fan-out: Abort asks the worker running each call to abort it (partial
//   tokens come back through the call); Pause(KEEP) freezes the workers and
//   holds the queue, Pause(WAIT) lets everything queued and running finish,
//   Pause(ABORT) aborts everything; UpdateWeights loads the checkpoint on
//   every ready worker at one version, and workers (re)started later load it
//   too; repeating the last update (same explicit version, same path) is an
//   OK no-op, so that a client may retry it.
// - Metrics: worker stats snapshots are polled and merged into rolloutd's
//   registry (worker_metrics.h); latency histograms are measured here.
//
// Threading: every Dispatcher method returns without blocking (Shutdown
// excepted). State is guarded by one mutex; sinks and callbacks are invoked
// without it, from gRPC threads, the supervisor thread or an internal
// executor (never inline from CallHandle::Cancel).
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_POOL_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_POOL_H_

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "server/dispatcher.h"
#include "server/rollout_server.h"
#include "server/serial_executor.h"
#include "server/workers/socket_dir.h"
#include "server/workers/supervisor.h"
#include "server/workers/worker_client.h"
#include "server/workers/worker_metrics.h"

namespace rollout::server::workers {

struct WorkerPoolOptions {
  // The rollout-worker executable (worker_binary.h finds it).
  std::string binary;
  // How often each ready worker's stats are pulled into the metrics (and
  // count as progress for the watchdog).
  absl::Duration stats_period = absl::Seconds(1);
  // Supervisor period: process checks, watchdog, queue timeouts.
  absl::Duration supervisor_period = absl::Milliseconds(50);
  // A call whose worker died this many times fails instead of running again
  // (a request that crashes every worker must not crash them forever).
  int max_reruns = 3;
  // CPU threads to share among CPU workers; 0: the machine's.
  int hardware_threads = 0;

  absl::Status Validate() const;
};

class WorkerPool final : public Dispatcher, private Supervisor::Listener {
 public:
  // Creates the socket directory and starts the workers (returns at once;
  // they become ready in the background). `env.config` gives workers.*,
  // `env.model_dir` the model; `env.metrics` may be null.
  static absl::StatusOr<std::unique_ptr<WorkerPool>> Create(
      const DispatcherEnv& env, WorkerPoolOptions options);
  ~WorkerPool() override;

  std::unique_ptr<CallHandle> Generate(
      std::shared_ptr<const rollout::v1::GenerateRequest> request, bool stream,
      const CallContext& context, GenerateSink* sink) override;
  std::unique_ptr<CallHandle> Score(
      std::shared_ptr<const rollout::v1::ScoreRequest> request,
      const CallContext& context,
      Callback<rollout::v1::ScoreResponse> done) override;
  void Abort(const rollout::v1::AbortRequest& request,
             Callback<rollout::v1::AbortResponse> done) override;
  void Pause(rollout::v1::PauseMode mode, absl::Time deadline,
             Callback<rollout::v1::PauseResponse> done) override;
  void Resume(Callback<rollout::v1::ResumeResponse> done) override;
  void UpdateWeights(
      const rollout::v1::UpdateWeightsRequest& request, absl::Time deadline,
      Callback<rollout::v1::UpdateWeightsResponse> done) override;
  void ApplyConfig(std::shared_ptr<const ConfigSnapshot> config) override;
  DispatcherState State() const override;
  std::shared_ptr<const rollout::v1::ModelInfo> Model() const override;
  void Shutdown(absl::Time deadline) override;

 private:
  struct Call;
  struct Attempt;
  struct Worker;
  struct Actions;
  class Handle;
  class AbortCollector;
  enum class Hold;

  WorkerPool(const DispatcherEnv& env, WorkerPoolOptions options,
             std::unique_ptr<SocketDir> sockets);

  // Supervisor::Listener.
  void WorkerStarting(int index, uint64_t incarnation, bool restart) override;
  void WorkerReady(int index, uint64_t incarnation,
                   std::shared_ptr<WorkerConnection> connection,
                   const rollout::worker::v1::WorkerInfo& info) override;
  void WorkerLost(int index, uint64_t incarnation, const std::string& why,
                  bool crash_loop) override;
  void Tick(absl::Time now) override;

  absl::StatusOr<SpawnSpec> Launch(int index) ABSL_LOCKS_EXCLUDED(mu_);

  // Admission of a new call (Generate/Score): routes it or queues it.
  void Submit(std::shared_ptr<Call> call) ABSL_LOCKS_EXCLUDED(mu_);
  void DispatchLocked(Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AssignLocked(const std::shared_ptr<Call>& call, int worker,
                    Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseLocked(Call& call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the call's life in the pool (it is then finished by Run).
  void RetireLocked(const std::shared_ptr<Call>& call, Actions* actions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A call lost its worker: re-run it, or fail it after max_reruns.
  void RequeueLocked(const std::shared_ptr<Call>& call, absl::Status why,
                     Actions* actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run(Actions actions) ABSL_LOCKS_EXCLUDED(mu_);

  void StartAttempt(const std::shared_ptr<Call>& call,
                    const std::shared_ptr<Attempt>& attempt)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnGenerateEvent(const std::shared_ptr<Call>& call,
                       const std::shared_ptr<Attempt>& attempt,
                       const rollout::worker::v1::GenerateEvent& event)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnAttemptEnd(const std::shared_ptr<Call>& call,
                    const std::shared_ptr<Attempt>& attempt,
                    const grpc::Status& status,
                    std::shared_ptr<rollout::worker::v1::ScoreResult> score)
      ABSL_LOCKS_EXCLUDED(mu_);
  void CancelCall(uint64_t serial) ABSL_LOCKS_EXCLUDED(mu_);

  // Finishing (no pool lock held).
  void FinishGenerate(Call& call);
  void FinishScore(Call& call);
  // rolloutd's latency histograms (queue, time to first token, time per
  // output token, end to end) for a finished group.
  void ObserveLatencies(
      const Call& call, const rollout::v1::Timing& timing,
      const std::vector<rollout::worker::v1::CompletionEnd>& ends);

  void PollStats(int index, uint64_t incarnation,
                 std::shared_ptr<WorkerConnection> connection);
  void SendCancels(int worker, uint64_t incarnation,
                   std::vector<std::string> ids, bool all)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Sends Pause (mode) or Resume (mode UNSPECIFIED) to every ready worker;
  // `done` runs once all answered.
  void FanOutPause(rollout::v1::PauseMode mode, absl::Time deadline,
                   absl::AnyInvocable<void(absl::Status)> done)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Sends the hot engine settings of `config` (replay_ssm.enabled,
  // auto_min_batch_size) to a worker; fire and forget (a worker that misses
  // it is restarted with the current config anyway).
  void SendReconfigure(const std::shared_ptr<WorkerConnection>& connection,
                       const ConfigSnapshot& config) ABSL_LOCKS_EXCLUDED(mu_);
  // Loads the weights rolloutd serves on a worker that came up with older
  // ones, then marks it ready.
  void CatchUp(int index, uint64_t incarnation,
               std::shared_ptr<WorkerConnection> connection, std::string path,
               uint64_t version) ABSL_LOCKS_EXCLUDED(mu_);
  void MakeRoutableLocked(int index, Actions* actions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyStateChanged();
  WorkerMetrics& MetricsOf(int index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(metrics_mu_);

  const WorkerPoolOptions options_;
  metrics::RolloutMetrics* const metrics_;
  const std::string model_dir_;
  const std::function<void()> state_changed_;
  std::unique_ptr<SocketDir> sockets_;

  mutable rollout::Mutex mu_;
  std::shared_ptr<const ConfigSnapshot> config_ ABSL_GUARDED_BY(mu_);
  std::vector<Worker> workers_ ABSL_GUARDED_BY(mu_);
  // Every call not finished yet, by serial; pending_ holds those waiting
  // for a worker (new, or re-runs), in order.
  absl::flat_hash_map<uint64_t, std::shared_ptr<Call>> calls_
      ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<Call>> pending_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> next_serial_{0};
  Hold hold_ ABSL_GUARDED_BY(mu_);
  struct PauseWaiter {
    absl::Time deadline;
    Callback<rollout::v1::PauseResponse> done;
  };
  std::vector<PauseWaiter> drain_waiters_ ABSL_GUARDED_BY(mu_);
  // The weights every worker must serve (after Admin.UpdateWeights).
  std::string weights_path_ ABSL_GUARDED_BY(mu_);
  uint64_t weights_version_ ABSL_GUARDED_BY(mu_) = 0;
  bool updating_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const rollout::v1::ModelInfo> model_ ABSL_GUARDED_BY(mu_);
  std::string backend_ ABSL_GUARDED_BY(mu_) = "none";
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;

  rollout::Mutex metrics_mu_;
  std::vector<std::unique_ptr<WorkerMetrics>> worker_metrics_
      ABSL_GUARDED_BY(metrics_mu_);

  // Outstanding async calls to workers (waited for at shutdown).
  InFlight in_flight_;
  // Runs what must not run on the caller's thread (finishing cancelled
  // calls, TryCancel); destroyed after the supervisor.
  std::unique_ptr<SerialExecutor> deferred_;
  std::unique_ptr<Supervisor> supervisor_;
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_POOL_H_
