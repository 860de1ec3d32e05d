// WorkerPool, the process and control side: creation, the supervisor's
// events (starting, ready, lost), the periodic tick (progress watchdog, stats
// polls, queue timeouts), Pause/Resume/UpdateWeights fan-out, state, metrics
// and shutdown. (Calls: worker_pool_calls.cc.)
#include "server/workers/worker_pool.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/build_info.h"
#include "server/workers/worker_args.h"
#include "server/workers/worker_pool_internal.h"

namespace rollout::server::workers {
namespace {

// Runs `done` with the first error (or OK) once `n` results came in.
class Countdown {
 public:
  Countdown(int n, absl::AnyInvocable<void(absl::Status)> done)
      : remaining_(n), done_(std::move(done)) {}
  void Done(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::AnyInvocable<void(absl::Status)> done;
    absl::Status result;
    {
      rollout::MutexLock lock(&mu_);
      if (!status.ok() && first_error_.ok()) first_error_ = status;
      if (--remaining_ > 0) return;
      done = std::move(done_);
      result = first_error_;
    }
    if (done) done(result);
  }

 private:
  rollout::Mutex mu_;
  int remaining_ ABSL_GUARDED_BY(mu_);
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  absl::AnyInvocable<void(absl::Status)> done_ ABSL_GUARDED_BY(mu_);
};

void SetDeadline(grpc::ClientContext* context, absl::Time deadline) {
  if (deadline != absl::InfiniteFuture()) {
    context->set_deadline(absl::ToChronoTime(deadline));
  }
}

// An idle worker that answers no stats poll for this long (or
// health.watchdog_seconds if longer) is replaced.
constexpr absl::Duration kUnansweredLimit = absl::Seconds(10);

void Log(const std::string& message) {
  std::cerr << "rolloutd: " << message << std::endl;
}

}  // namespace

absl::Status WorkerPoolOptions::Validate() const {
  if (binary.empty()) {
    return absl::InvalidArgumentError("worker pool: no rollout-worker binary");
  }
  if (stats_period <= absl::ZeroDuration() ||
      supervisor_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("worker pool: periods must be > 0");
  }
  if (max_reruns < 0) {
    return absl::InvalidArgumentError("worker pool: max_reruns must be >= 0");
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------------- Set-up

absl::StatusOr<std::unique_ptr<WorkerPool>> WorkerPool::Create(
    const DispatcherEnv& env, WorkerPoolOptions options) {
  RETURN_IF_ERROR(options.Validate());
  if (env.config == nullptr) {
    return absl::InvalidArgumentError("worker pool: no config");
  }
  if (env.model_dir.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("model.path: \"", env.config->config.model().path(),
                     "\" not found; the workers have no model to load"));
  }
  const rollout::v1::WorkersConfig& w = env.config->config.workers();
  ASSIGN_OR_RETURN(std::unique_ptr<SocketDir> sockets,
                   SocketDir::Create(w.socket_dir(), w.count()));
  std::unique_ptr<WorkerPool> pool(
      new WorkerPool(env, std::move(options), std::move(sockets)));
  pool->supervisor_->Start();
  return pool;
}

WorkerPool::WorkerPool(const DispatcherEnv& env, WorkerPoolOptions options,
                       std::unique_ptr<SocketDir> sockets)
    : options_(std::move(options)),
      metrics_(env.metrics),
      model_dir_(env.model_dir),
      state_changed_(env.state_changed),
      sockets_(std::move(sockets)),
      config_(env.config),
      hold_(Hold::kNone),
      deferred_(std::make_unique<SerialExecutor>()) {
  const rollout::v1::WorkersConfig& w = env.config->config.workers();
  const int count = w.count();
  {
    rollout::MutexLock lock(&mu_);
    workers_.resize(count);
  }
  {
    rollout::MutexLock lock(&metrics_mu_);
    for (int i = 0; i < count; ++i) {
      worker_metrics_.push_back(std::make_unique<WorkerMetrics>(metrics_, i));
    }
  }
  SupervisorOptions s;
  for (int i = 0; i < count; ++i) {
    s.socket_paths.push_back(sockets_->SocketPath(i));
  }
  s.launch = [this](int index) { return Launch(index); };
  s.startup_timeout = absl::Seconds(w.startup_timeout_seconds());
  s.restart.max_backoff = absl::Seconds(w.restart_backoff_max_seconds());
  s.period = options_.supervisor_period;
  supervisor_ = std::make_unique<Supervisor>(
      std::move(s), static_cast<Supervisor::Listener*>(this));
}

WorkerPool::~WorkerPool() {
  Shutdown(absl::Now());
  // The executor's last tasks may still use the pool; the supervisor is
  // already stopped.
  deferred_.reset();
  supervisor_.reset();
}

absl::StatusOr<SpawnSpec> WorkerPool::Launch(int index) {
  std::shared_ptr<const ConfigSnapshot> config;
  WorkerLaunch launch;
  {
    rollout::MutexLock lock(&mu_);
    config = config_;
    launch.weights_dir = weights_path_;
    launch.weight_version = weights_version_;
  }
  const rollout::v1::ServerConfig& c = config->config;
  int cpu_workers = 0;
  for (int i = 0; i < c.workers().count(); ++i) {
    if (!absl::StartsWith(DeviceOf(c, i), "cuda:")) ++cpu_workers;
  }
  const int hardware =
      options_.hardware_threads > 0
          ? options_.hardware_threads
          : static_cast<int>(std::thread::hardware_concurrency());
  launch.index = index;
  launch.binary = options_.binary;
  launch.socket_path = sockets_->SocketPath(index);
  launch.model_dir = model_dir_;
  launch.device = DeviceOf(c, index);
  // Every worker runs the CPU backend today (also on a GPU): share the cores.
  launch.threads = CpuThreadsPerWorker(hardware, std::max(1, cpu_workers));
  SpawnSpec spec;
  spec.argv = WorkerArgv(c, launch);
  spec.env = WorkerEnvironment(CurrentEnvironment(), launch.threads);
  return spec;
}

WorkerMetrics& WorkerPool::MetricsOf(int index) {
  return *worker_metrics_[index];
}

void WorkerPool::NotifyStateChanged() {
  if (state_changed_) state_changed_();
}

// -------------------------------------------------------- Supervisor events

void WorkerPool::WorkerStarting(int index, uint64_t incarnation, bool restart) {
  rollout::MutexLock lock(&metrics_mu_);
  WorkerMetrics& m = MetricsOf(index);
  m.NewProcess();
  m.SetCrashLoop(false);
  if (restart) m.CountRestart();
}

void WorkerPool::MakeRoutableLocked(int index, Actions* actions) {
  workers_[index].ready = true;
  std::set<std::string> backends;
  for (const Worker& w : workers_) {
    if (w.ready) backends.insert(w.info.backend());
  }
  const std::string backend =
      backends.empty() ? "none" : absl::StrJoin(backends, "+");
  if (backend != backend_) {
    backend_ = backend;
    if (metrics_ != nullptr) {
      actions->later.push_back([m = metrics_, backend] {
        m->SetBuildInfo({kVersion, kCommit, backend});
      });
    }
  }
  actions->state_changed = true;
  DispatchLocked(actions);
}

void WorkerPool::WorkerReady(int index, uint64_t incarnation,
                             std::shared_ptr<WorkerConnection> connection,
                             const wv1::WorkerInfo& info) {
  Actions actions;
  bool catch_up = false;
  std::string path;
  uint64_t version = 0;
  std::shared_ptr<const ConfigSnapshot> config;
  {
    rollout::MutexLock lock(&mu_);
    if (shutting_down_) return;
    Worker& w = workers_[index];
    w = Worker();
    w.incarnation = incarnation;
    w.process_ready = true;
    w.connection = connection;
    w.info = info;
    w.weight_version = info.weight_version();
    w.last_step_change = absl::Now();
    w.last_answer = absl::Now();
    w.next_stats = absl::Now();
    if (model_ == nullptr) {
      model_ = std::make_shared<const rollout::v1::ModelInfo>(info.model());
    }
    // Started before an UpdateWeights finished: load what rolloutd serves.
    catch_up = weights_version_ > info.weight_version();
    path = weights_path_;
    version = weights_version_;
    if (catch_up) {
      w.updating = true;
    } else {
      MakeRoutableLocked(index, &actions);
    }
    config = config_;
  }
  // Launched with the config of its start; a reload may have come since.
  SendReconfigure(connection, *config);
  {
    rollout::MutexLock lock(&metrics_mu_);
    WorkerMetrics& m = MetricsOf(index);
    m.SetDevice(info.device());
    m.SetReady(!catch_up);
    m.SetWeightVersion(info.weight_version());
  }
  if (!info.device_note().empty()) {
    Log(absl::StrCat("worker ", index, ": ", info.device(), ": ",
                     info.device_note()));
  }
  if (catch_up) {
    CatchUp(index, incarnation, std::move(connection), std::move(path),
            version);
  }
  Run(std::move(actions));
}

void WorkerPool::CatchUp(int index, uint64_t incarnation,
                         std::shared_ptr<WorkerConnection> connection,
                         std::string path, uint64_t version) {
  using Call = UnaryCall<wv1::UpdateWeightsRequest, wv1::UpdateWeightsResponse>;
  auto unary = std::make_shared<Call>();
  unary->request.set_path(path);
  unary->request.set_version(version);
  in_flight_.Begin();
  connection->stub()->async()->UpdateWeights(
      &unary->context, &unary->request, &unary->response,
      [this, index, incarnation, version, unary](grpc::Status status) {
        Actions actions;
        bool routable = false;
        {
          rollout::MutexLock lock(&mu_);
          Worker& w = workers_[index];
          if (w.incarnation == incarnation && w.process_ready) {
            w.updating = false;
            if (status.ok()) {
              w.weight_version = version;
              MakeRoutableLocked(index, &actions);
              routable = true;
            } else {
              supervisor_->Kill(
                  index, incarnation,
                  absl::StrCat("cannot load weight version ", version, ": ",
                               status.error_message()));
            }
          }
        }
        if (routable) {
          rollout::MutexLock lock(&metrics_mu_);
          MetricsOf(index).SetReady(true);
          MetricsOf(index).SetWeightVersion(version);
        }
        Run(std::move(actions));
        in_flight_.End();
      });
}

void WorkerPool::WorkerLost(int index, uint64_t incarnation,
                            const std::string& why, bool crash_loop) {
  Actions actions;
  {
    rollout::MutexLock lock(&mu_);
    Worker& w = workers_[index];
    // Its calls end with the process (their streams break); cancel them in
    // case the socket lingers, so they are re-run now.
    int in_flight = w.incarnation == incarnation ? w.lost_calls : 0;
    for (const auto& [serial, call] : calls_) {
      const std::shared_ptr<Attempt>& a = call->attempt;
      if (a == nullptr || a->worker != index || a->incarnation != incarnation) {
        continue;
      }
      ++in_flight;
      if (a->stream != nullptr) {
        actions.later.push_back([stream = a->stream] { stream->Cancel(); });
      }
      if (a->score != nullptr) {
        actions.later.push_back(
            [unary = a->score] { unary->context.TryCancel(); });
      }
    }
    if (in_flight > 0) {
      Log(absl::StrCat(
          "worker ", index, ": ", in_flight,
          " request(s) in flight on it are re-run from the start"));
    }
    wv1::WorkerInfo info = std::move(w.info);
    const bool was_ready = w.ready;
    w = Worker();  // incarnation 0: replies of the old process are ignored
    w.info = std::move(info);
    if (was_ready) {
      std::set<std::string> backends;
      for (const Worker& other : workers_) {
        if (other.ready) backends.insert(other.info.backend());
      }
      backend_ = backends.empty() ? "none" : absl::StrJoin(backends, "+");
    }
    actions.state_changed = true;
  }
  {
    rollout::MutexLock lock(&metrics_mu_);
    WorkerMetrics& m = MetricsOf(index);
    m.SetReady(false);
    m.ProcessGone();
    m.SetCrashLoop(crash_loop);
  }
  Run(std::move(actions));
}

// --------------------------------------------------------------------- Tick

void WorkerPool::Tick(absl::Time now) {
  Actions actions;
  struct Hung {
    int index;
    uint64_t incarnation;
    std::string why;
  };
  std::vector<Hung> hung;
  std::vector<std::pair<int, double>> ages;
  std::vector<std::tuple<int, uint64_t, std::shared_ptr<WorkerConnection>>>
      polls;
  int watchdog = 0;
  {
    rollout::MutexLock lock(&mu_);
    if (shutting_down_) return;
    watchdog = config_->config.health().watchdog_seconds();
    for (int i = 0; i < static_cast<int>(workers_.size()); ++i) {
      Worker& w = workers_[i];
      if (!w.process_ready) continue;
      const bool busy = w.outstanding > 0;
      // The progress watchdog: work, but no token and no engine step for
      // health.watchdog_seconds (a hung or stopped process still accepts
      // connections). Off while frozen by Pause(KEEP) or loading weights.
      if (busy && watchdog > 0 && hold_ != Hold::kKeep && !w.updating &&
          now - w.Progress() > absl::Seconds(watchdog)) {
        hung.push_back({i, w.incarnation,
                        absl::StrCat("progress watchdog: no progress for ",
                                     absl::FormatDuration(now - w.Progress()),
                                     " while it had work")});
      } else if (watchdog > 0 && !w.updating &&
                 now - w.last_answer >
                     std::max(absl::Seconds(watchdog), kUnansweredLimit)) {
        // Idle, but its stats polls time out (e.g. a stopped process): it
        // could not take work either.
        hung.push_back(
            {i, w.incarnation,
             absl::StrCat("not answering: no reply to stats polls for ",
                          absl::FormatDuration(now - w.last_answer))});
      }
      ages.emplace_back(i, busy
                               ? absl::ToDoubleSeconds(
                                     now - std::max(w.last_token, w.busy_since))
                               : 0.0);
      if (!w.stats_in_flight && now >= w.next_stats) {
        w.stats_in_flight = true;
        w.next_stats = now + options_.stats_period;
        polls.emplace_back(i, w.incarnation, w.connection);
      }
    }
    // Queued calls whose deadline passed (gRPC cancels them too; this also
    // covers callers without a gRPC deadline).
    std::vector<std::shared_ptr<Call>> expired;
    for (const std::shared_ptr<Call>& call : pending_) {
      if (now >= call->context.deadline) expired.push_back(call);
    }
    for (const std::shared_ptr<Call>& call : expired) {
      call->cancelled = true;
      call->end = Call::End::kCancelled;
      RetireLocked(call, &actions);
    }
    for (auto it = drain_waiters_.begin(); it != drain_waiters_.end();) {
      if (now < it->deadline) {
        ++it;
        continue;
      }
      actions.later.push_back([done = std::move(it->done)]() mutable {
        done(absl::DeadlineExceededError(
            "pause requested; running requests did not finish before the "
            "deadline (the server stays paused)"));
      });
      it = drain_waiters_.erase(it);
    }
    DispatchLocked(&actions);
  }
  for (const Hung& h : hung) {
    supervisor_->Kill(
        h.index, h.incarnation,
        absl::StrCat(h.why, " (health.watchdog_seconds = ", watchdog, ")"));
  }
  {
    rollout::MutexLock lock(&metrics_mu_);
    for (const auto& [index, age] : ages) MetricsOf(index).SetLastTokenAge(age);
  }
  for (auto& [index, incarnation, connection] : polls) {
    PollStats(index, incarnation, std::move(connection));
  }
  Run(std::move(actions));
}

void WorkerPool::PollStats(int index, uint64_t incarnation,
                           std::shared_ptr<WorkerConnection> connection) {
  using Call = UnaryCall<wv1::GetStatsRequest, wv1::WorkerStats>;
  auto unary = std::make_shared<Call>();
  unary->context.set_deadline(absl::ToChronoTime(
      absl::Now() + std::max(absl::Seconds(2), 2 * options_.stats_period)));
  in_flight_.Begin();
  connection->stub()->async()->GetStats(
      &unary->context, &unary->request, &unary->response,
      [this, index, incarnation, unary](grpc::Status status) {
        bool merge = false;
        {
          rollout::MutexLock lock(&mu_);
          Worker& w = workers_[index];
          if (w.incarnation == incarnation && w.process_ready) {
            w.stats_in_flight = false;
            if (status.ok()) {
              merge = true;
              w.suspect = false;  // it answers
              w.last_answer = absl::Now();
              const wv1::WorkerStats& s = unary->response;
              if (s.steps() != w.last_steps) {
                w.last_steps = s.steps();
                w.last_step_change = absl::Now();
              }
              w.running = s.requests_running();
              w.waiting = s.requests_waiting();
              w.weight_version = std::max(w.weight_version, s.weight_version());
            }
          }
        }
        if (merge) {
          rollout::MutexLock lock(&metrics_mu_);
          MetricsOf(index).Merge(unary->response);
        }
        in_flight_.End();
      });
}

// ------------------------------------------------------- Pause and weights

void WorkerPool::FanOutPause(rollout::v1::PauseMode mode, absl::Time deadline,
                             absl::AnyInvocable<void(absl::Status)> done) {
  std::vector<std::shared_ptr<WorkerConnection>> targets;
  {
    rollout::MutexLock lock(&mu_);
    for (const Worker& w : workers_) {
      if (w.process_ready && w.connection != nullptr) {
        targets.push_back(w.connection);
      }
    }
  }
  if (targets.empty()) {
    done(absl::OkStatus());
    return;
  }
  auto countdown = std::make_shared<Countdown>(static_cast<int>(targets.size()),
                                               std::move(done));
  for (const auto& connection : targets) {
    in_flight_.Begin();
    if (mode == rollout::v1::PAUSE_MODE_UNSPECIFIED) {
      auto unary = std::make_shared<
          UnaryCall<wv1::ResumeRequest, wv1::ResumeResponse>>();
      SetDeadline(&unary->context, deadline);
      connection->stub()->async()->Resume(
          &unary->context, &unary->request, &unary->response,
          [this, unary, countdown](grpc::Status status) {
            countdown->Done(FromGrpc(status));
            in_flight_.End();
          });
    } else {
      auto unary =
          std::make_shared<UnaryCall<wv1::PauseRequest, wv1::PauseResponse>>();
      unary->request.set_mode(mode);
      SetDeadline(&unary->context, deadline);
      connection->stub()->async()->Pause(
          &unary->context, &unary->request, &unary->response,
          [this, unary, countdown](grpc::Status status) {
            countdown->Done(FromGrpc(status));
            in_flight_.End();
          });
    }
  }
}

void WorkerPool::Pause(rollout::v1::PauseMode mode, absl::Time deadline,
                       Callback<rollout::v1::PauseResponse> done) {
  Actions actions;
  Hold previous;
  int live = 0;
  {
    rollout::MutexLock lock(&mu_);
    previous = hold_;
    live = static_cast<int>(calls_.size());
    switch (mode) {
      case rollout::v1::PAUSE_MODE_KEEP:
        hold_ = Hold::kKeep;
        break;
      case rollout::v1::PAUSE_MODE_ABORT:
        hold_ = Hold::kAbort;
        break;
      default:
        hold_ = Hold::kWait;
        DispatchLocked(&actions);  // queued calls run too
        if (calls_.empty()) {
          actions.later.push_back([done = std::move(done)]() mutable {
            done(rollout::v1::PauseResponse());
          });
        } else {
          drain_waiters_.push_back({deadline, std::move(done)});
        }
        break;
    }
  }
  if (mode == rollout::v1::PAUSE_MODE_KEEP) {
    FanOutPause(rollout::v1::PAUSE_MODE_KEEP, deadline,
                [done = std::move(done), live](absl::Status status) mutable {
                  if (!status.ok()) {
                    done(status);
                    return;
                  }
                  rollout::v1::PauseResponse response;
                  response.set_requests_kept(live);
                  done(std::move(response));
                });
    return;
  }
  if (previous == Hold::kKeep) {
    // Frozen workers must run again: to finish (WAIT) or to end (ABORT).
    FanOutPause(rollout::v1::PAUSE_MODE_UNSPECIFIED, deadline,
                [](absl::Status) {});
  }
  if (mode == rollout::v1::PAUSE_MODE_ABORT) {
    rollout::v1::AbortRequest all;
    all.set_all(true);
    Abort(all, [done = std::move(done)](
                   absl::StatusOr<rollout::v1::AbortResponse> r) mutable {
      if (!r.ok()) {
        done(r.status());
        return;
      }
      rollout::v1::PauseResponse response;
      response.set_requests_aborted(r->request_ids_size());
      done(std::move(response));
    });
    return;
  }
  Run(std::move(actions));
}

void WorkerPool::Resume(Callback<rollout::v1::ResumeResponse> done) {
  Actions actions;
  int resumed = 0;
  {
    rollout::MutexLock lock(&mu_);
    if (hold_ == Hold::kKeep) resumed = static_cast<int>(calls_.size());
    hold_ = Hold::kNone;
    for (PauseWaiter& waiter : drain_waiters_) {
      actions.later.push_back([done = std::move(waiter.done)]() mutable {
        done(absl::AbortedError("resumed before the pause settled"));
      });
    }
    drain_waiters_.clear();
    DispatchLocked(&actions);
  }
  Run(std::move(actions));
  FanOutPause(rollout::v1::PAUSE_MODE_UNSPECIFIED,
              absl::Now() + absl::Seconds(30),
              [done = std::move(done), resumed](absl::Status) mutable {
                // A worker that does not answer is replaced; the pause is
                // over for rolloutd either way.
                rollout::v1::ResumeResponse response;
                response.set_requests_resumed(resumed);
                done(std::move(response));
              });
}

void WorkerPool::UpdateWeights(
    const rollout::v1::UpdateWeightsRequest& request, absl::Time deadline,
    Callback<rollout::v1::UpdateWeightsResponse> done) {
  struct Target {
    int index;
    uint64_t incarnation;
    std::shared_ptr<WorkerConnection> connection;
  };
  std::vector<Target> targets;
  uint64_t version = 0;
  bool unchanged = false;
  absl::Status refused;
  {
    rollout::MutexLock lock(&mu_);
    uint64_t current = weights_version_;
    for (int i = 0; i < static_cast<int>(workers_.size()); ++i) {
      const Worker& w = workers_[i];
      if (!w.process_ready || w.connection == nullptr) continue;
      current = std::max(current, w.weight_version);
      targets.push_back({i, w.incarnation, w.connection});
    }
    version = request.version() > 0 ? request.version() : current + 1;
    // A retry of an update that in fact succeeded (its answer was lost): the
    // same explicit version and the same (canonical) path as the weights
    // rolloutd serves. Answer OK with that version and load nothing, so a
    // retry neither bumps the version twice nor looks like a failure.
    // Version 0 ("next") is never a retry.
    if (request.version() > 0 && request.version() == current &&
        current == weights_version_ && request.path() == weights_path_) {
      unchanged = true;
    } else if (updating_) {
      refused = absl::FailedPreconditionError(
          "an UpdateWeights is already running; retry when it is done");
    } else if (targets.empty()) {
      refused = absl::UnavailableError(
          "no worker is serving: no worker to load the weights");
    } else if (request.version() > 0 && request.version() <= current) {
      refused = absl::InvalidArgumentError(absl::StrCat(
          "version: must be greater than the current weight version ", current,
          ", got ", request.version()));
    } else {
      updating_ = true;
      for (const Target& t : targets) workers_[t.index].updating = true;
    }
  }
  if (!refused.ok()) {
    done(refused);
    return;
  }
  if (unchanged) {
    rollout::v1::UpdateWeightsResponse response;
    response.set_weight_version(version);
    response.set_seconds(0);
    done(std::move(response));
    return;
  }
  if (metrics_ != nullptr) {
    metrics_->families().weight_update_in_progress.Add({}).Set(1);
  }
  const absl::Time start = absl::Now();
  struct Results {
    rollout::Mutex mu;
    int remaining ABSL_GUARDED_BY(mu);
    std::vector<std::pair<int, absl::Status>> outcomes ABSL_GUARDED_BY(mu);
  };
  auto results = std::make_shared<Results>();
  {
    rollout::MutexLock lock(&results->mu);
    results->remaining = static_cast<int>(targets.size());
  }
  auto shared_done =
      std::make_shared<Callback<rollout::v1::UpdateWeightsResponse>>(
          std::move(done));
  const std::string path = request.path();
  for (const Target& t : targets) {
    using Call =
        UnaryCall<wv1::UpdateWeightsRequest, wv1::UpdateWeightsResponse>;
    auto unary = std::make_shared<Call>();
    unary->request.set_path(path);
    unary->request.set_version(version);
    SetDeadline(&unary->context, deadline);
    in_flight_.Begin();
    t.connection->stub()->async()->UpdateWeights(
        &unary->context, &unary->request, &unary->response,
        [this, t, unary, results, shared_done, version, path,
         start](grpc::Status status) {
          std::vector<std::pair<int, absl::Status>> outcomes;
          {
            rollout::MutexLock lock(&results->mu);
            results->outcomes.emplace_back(t.index, FromGrpc(status));
            if (--results->remaining > 0) {
              in_flight_.End();
              return;
            }
            outcomes = results->outcomes;
          }
          // Every worker answered.
          absl::Status first_error;
          int ok = 0;
          {
            rollout::MutexLock lock(&mu_);
            updating_ = false;
            for (const auto& [index, s] : outcomes) {
              workers_[index].updating = false;
              if (s.ok()) {
                ++ok;
                workers_[index].weight_version =
                    std::max(workers_[index].weight_version, version);
              } else if (first_error.ok()) {
                first_error = s;
              }
            }
            if (ok > 0) {
              // Workers (re)started from now on load these weights.
              weights_path_ = path;
              weights_version_ = version;
              // One version everywhere: a worker that failed while others
              // succeeded is replaced (it restarts with the new weights).
              for (const auto& [index, s] : outcomes) {
                if (!s.ok()) {
                  supervisor_->Kill(
                      index, workers_[index].incarnation,
                      absl::StrCat("failed to load weight version ", version,
                                   " that other workers serve: ", s.message()));
                }
              }
            }
          }
          const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
          if (metrics_ != nullptr) {
            const auto& f = metrics_->families();
            f.weight_update_in_progress.Add({}).Set(0);
            f.weight_update_seconds.Add({}, metrics::LatencyBuckets())
                .Observe(seconds);
          }
          if (ok > 0) {
            rollout::MutexLock lock(&metrics_mu_);
            for (const auto& [index, s] : outcomes) {
              if (s.ok()) MetricsOf(index).SetWeightVersion(version);
            }
          }
          if (ok == 0) {
            (*shared_done)(first_error);
          } else {
            rollout::v1::UpdateWeightsResponse response;
            response.set_weight_version(version);
            response.set_seconds(seconds);
            (*shared_done)(std::move(response));
          }
          in_flight_.End();
        });
  }
}

// -------------------------------------------------------------------- State

void WorkerPool::ApplyConfig(std::shared_ptr<const ConfigSnapshot> config) {
  // Hot fields read here: health.watchdog_seconds (each tick). The engine
  // settings (replay_ssm.enabled, auto_min_batch_size) go to every live
  // worker now; workers that start later get them on their command line and
  // again when ready (WorkerReady), so none misses a reload.
  std::vector<std::shared_ptr<WorkerConnection>> targets;
  {
    rollout::MutexLock lock(&mu_);
    const auto& before = config_->config.replay_ssm();
    const auto& after = config->config.replay_ssm();
    const bool engine_changed =
        before.enabled() != after.enabled() ||
        before.auto_min_batch_size() != after.auto_min_batch_size();
    config_ = config;
    if (engine_changed) {
      for (const Worker& w : workers_) {
        if (w.process_ready && w.connection != nullptr) {
          targets.push_back(w.connection);
        }
      }
    }
  }
  for (const auto& connection : targets) SendReconfigure(connection, *config);
}

void WorkerPool::SendReconfigure(
    const std::shared_ptr<WorkerConnection>& connection,
    const ConfigSnapshot& config) {
  using Call = UnaryCall<wv1::ReconfigureRequest, wv1::ReconfigureResponse>;
  auto unary = std::make_shared<Call>();
  const auto& replay = config.config.replay_ssm();
  unary->request.set_config_generation(config.generation);
  unary->request.set_replay_ssm_enabled(replay.enabled());
  unary->request.set_replay_auto_min_batch(replay.auto_min_batch_size());
  SetDeadline(&unary->context, absl::Now() + absl::Seconds(30));
  in_flight_.Begin();
  connection->stub()->async()->Reconfigure(
      &unary->context, &unary->request, &unary->response,
      [this, unary](grpc::Status status) {
        if (!status.ok() &&
            status.error_code() != grpc::StatusCode::CANCELLED) {
          Log(absl::StrCat(
              "config generation ", unary->request.config_generation(),
              " not applied on a worker: ", status.error_message()));
        }
        in_flight_.End();
      });
}

DispatcherState WorkerPool::State() const {
  const std::vector<Supervisor::WorkerSnapshot> procs = supervisor_->Snapshot();
  DispatcherState state;
  rollout::MutexLock lock(&mu_);
  uint64_t min_version = 0;
  bool any_ready = false;
  absl::Time oldest_progress = absl::InfiniteFuture();
  for (int i = 0; i < static_cast<int>(workers_.size()); ++i) {
    const Worker& w = workers_[i];
    rollout::v1::WorkerInfo info;
    info.set_index(i);
    info.set_device(w.info.device().empty() ? DeviceOf(config_->config, i)
                                            : w.info.device());
    info.set_backend(w.info.backend());
    rollout::v1::WorkerState s = i < static_cast<int>(procs.size())
                                     ? procs[i].state
                                     : rollout::v1::WORKER_STATE_STARTING;
    // Loading the served weights before it takes work.
    if (s == rollout::v1::WORKER_STATE_READY && !w.ready) {
      s = rollout::v1::WORKER_STATE_STARTING;
    }
    info.set_state(s);
    info.set_weight_version(w.weight_version);
    info.set_restarts(i < static_cast<int>(procs.size()) ? procs[i].restarts
                                                         : 0);
    info.set_requests_running(w.running);
    info.set_requests_waiting(w.waiting);
    state.workers.push_back(std::move(info));
    if (w.ready) {
      ++state.ready_workers;
      min_version = any_ready ? std::min(min_version, w.weight_version)
                              : w.weight_version;
      any_ready = true;
      state.replay_ssm_available =
          state.replay_ssm_available || w.info.replay_ssm_available();
    }
    if (w.process_ready && w.outstanding > 0) {
      state.requests_running += w.outstanding;
      // A weight load makes no tokens for a while, on purpose.
      if (!w.updating)
        oldest_progress = std::min(oldest_progress, w.Progress());
    }
  }
  state.weight_version = min_version;
  if (hold_ == Hold::kKeep) state.requests_running = 0;  // frozen on purpose
  state.last_token_time =
      state.requests_running > 0 ? oldest_progress : absl::InfinitePast();
  state.backend = backend_;
  return state;
}

std::shared_ptr<const rollout::v1::ModelInfo> WorkerPool::Model() const {
  rollout::MutexLock lock(&mu_);
  return model_;
}

// ----------------------------------------------------------------- Metrics

void WorkerPool::ObserveLatencies(const Call& call,
                                  const rollout::v1::Timing& timing,
                                  const std::vector<wv1::CompletionEnd>& ends) {
  if (metrics_ == nullptr) return;
  const auto& f = metrics_->families();
  f.queue_seconds.Add({}, metrics::LatencyBuckets())
      .Observe(timing.queue_seconds());
  if (timing.time_to_first_token_seconds() > 0) {
    f.time_to_first_token_seconds.Add({}, metrics::LatencyBuckets())
        .Observe(timing.time_to_first_token_seconds());
  }
  f.e2e_request_seconds.Add({}, metrics::LatencyBuckets())
      .Observe(timing.total_seconds());
  prometheus::Histogram& tpot =
      f.time_per_output_token_seconds.Add({}, metrics::StepBuckets());
  for (const wv1::CompletionEnd& end : ends) {
    if (end.num_tokens() < 2) continue;
    tpot.Observe(
        std::max(0.0, end.e2e_seconds() - end.time_to_first_token_seconds()) /
        (end.num_tokens() - 1));
  }
}

// ----------------------------------------------------------------- Shutdown

void WorkerPool::Shutdown(absl::Time deadline) {
  Actions actions;
  {
    rollout::MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    std::vector<std::shared_ptr<Call>> waiting;
    for (const auto& [serial, call] : calls_) {
      if (call->attempt == nullptr) {
        waiting.push_back(call);
        continue;
      }
      call->cancelled = true;
      if (call->attempt->stream != nullptr) {
        actions.later.push_back(
            [stream = call->attempt->stream] { stream->Cancel(); });
      }
      if (call->attempt->score != nullptr) {
        actions.later.push_back(
            [unary = call->attempt->score] { unary->context.TryCancel(); });
      }
    }
    for (const std::shared_ptr<Call>& call : waiting) {
      call->end = Call::End::kError;
      call->error = absl::UnavailableError("server is shutting down");
      RetireLocked(call, &actions);
    }
    for (PauseWaiter& waiter : drain_waiters_) {
      actions.later.push_back([done = std::move(waiter.done)]() mutable {
        done(absl::UnavailableError("server is shutting down"));
      });
    }
    drain_waiters_.clear();
  }
  Run(std::move(actions));
  // Cancelled calls end at once (their worker calls are cancelled locally).
  {
    rollout::MutexLock lock(&mu_);
    auto none_left = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return calls_.empty();
    };
    mu_.AwaitWithDeadline(absl::Condition(&none_left),
                          std::max(deadline, absl::Now()) + absl::Seconds(5));
  }
  // Workers drain (nothing is left to drain) and exit; then no callback of
  // ours is outstanding.
  supervisor_->Stop(absl::Now() + absl::Seconds(10));
  if (!in_flight_.WaitIdle(absl::Now() + absl::Seconds(10))) {
    Log("worker pool: calls to workers still outstanding at shutdown");
  }
}

}  // namespace rollout::server::workers
