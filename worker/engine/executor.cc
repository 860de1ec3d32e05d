#include "worker/engine/executor.h"

#include <atomic>
#include <thread>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "common/status_macros.h"

namespace rollout::worker {
namespace {

struct SubmitCmd {
  GroupRequest request;
  std::shared_ptr<ResultChannel> channel;
};
struct ScoreCmd {
  ScoreRequest request;
  std::shared_ptr<ResultChannel> channel;
};
struct CancelCmd {
  std::string request_id;  // empty: all
};
struct PauseCmd {
  PauseMode mode;
  std::function<void(absl::Status)> done;
};
struct ResumeCmd {};
struct WeightsCmd {
  std::string path;
  std::optional<int64_t> version;
  std::function<void(absl::Status)> done;
};
struct ReconfigCmd {
  EngineReconfig change;
  std::function<void(absl::Status)> done;
};
struct ShutdownCmd {
  ShutdownMode mode;
};
using Command = std::variant<SubmitCmd, ScoreCmd, CancelCmd, PauseCmd,
                             ResumeCmd, WeightsCmd, ReconfigCmd, ShutdownCmd>;

// The commands posted to the engine thread. Shared with ResultStreams (through
// a weak_ptr) so a stream dropped after the executor is gone does nothing.
class Inbox {
 public:
  // False when closed (the engine thread has stopped).
  bool Post(Command c) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return false;
    commands_.push_back(std::move(c));
    return true;
  }
  // Waits until a command arrives or `deadline`, then takes all commands.
  std::vector<Command> Take(bool wait, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (wait) {
      mu_.AwaitWithDeadline(absl::Condition(this, &Inbox::HasCommands),
                            deadline);
    }
    std::vector<Command> out;
    out.swap(commands_);
    return out;
  }
  // Closes and returns what was still queued.
  std::vector<Command> Close() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    closed_ = true;
    std::vector<Command> out;
    out.swap(commands_);
    return out;
  }

 private:
  bool HasCommands() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !commands_.empty();
  }
  Mutex mu_;
  std::vector<Command> commands_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// A group summary for a request the engine refused after the caller's checks
// passed (rare: e.g. a race with the waiting queue bound).
void FailChannel(ResultChannel& ch, int n, const absl::Status& status) {
  for (int i = 0; i < n; ++i) {
    CompletionResult c;
    c.completion_index = i;
    c.finish_reason = FinishReason::kAborted;
    c.abort_cause = AbortCause::kInternal;
    ch.PushCompletion(std::move(c));
  }
  GroupSummary s;
  s.request_id = ch.request_id();
  s.status = status;
  ch.PushGroupDone(std::move(s));
}

}  // namespace

class Executor::Impl {
 public:
  Impl(std::unique_ptr<Engine> engine, ExecutorInfo info)
      : inbox_(std::make_shared<Inbox>()),
        engine_(std::move(engine)),
        info_(std::move(info)) {
    engine_->set_group_done_observer(
        [this](const std::string& id) { ForgetId(id); });
    engine_->set_admission_observer(
        [this](const std::string& id) { Admitted(id); });
    PublishStats();
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() { Shutdown(ShutdownMode::kAbort); }

  const ExecutorInfo& info() const { return info_; }

  absl::StatusOr<std::unique_ptr<ResultStream>> Enqueue(GroupRequest r) {
    if (absl::Status s = ValidateGroupRequest(r, info_.limits); !s.ok()) {
      return Reject(s);
    }
    RETURN_IF_ERROR(CheckFits(static_cast<int>(r.prompt.size()), r.n));
    RETURN_IF_ERROR(Reserve(&r.request_id));
    auto ch = std::make_shared<ResultChannel>(r.request_id, r.n);
    const std::string id = r.request_id;
    return Post(id, ch, SubmitCmd{std::move(r), ch});
  }

  absl::StatusOr<std::unique_ptr<ResultStream>> EnqueueScore(ScoreRequest r) {
    if (absl::Status s = ValidateScoreRequest(r, info_.limits); !s.ok()) {
      return Reject(s);
    }
    const int n = static_cast<int>(r.completions.size());
    RETURN_IF_ERROR(CheckFits(static_cast<int>(r.prompt.size()), n));
    RETURN_IF_ERROR(Reserve(&r.request_id));
    auto ch = std::make_shared<ResultChannel>(r.request_id, n);
    const std::string id = r.request_id;
    return Post(id, ch, ScoreCmd{std::move(r), ch});
  }

  absl::Status Cancel(const std::string& id) {
    {
      MutexLock lock(&ids_mu_);
      if (live_ids_.count(id) == 0) {
        return absl::NotFoundError(absl::StrCat("no live request ", id));
      }
    }
    inbox_->Post(CancelCmd{id});
    return absl::OkStatus();
  }

  void CancelAll() { inbox_->Post(CancelCmd{""}); }

  void PauseAsync(PauseMode mode, std::function<void(absl::Status)> done) {
    if (!inbox_->Post(PauseCmd{mode, done}) && done) {
      done(absl::CancelledError("executor stopped"));
    }
  }

  void Resume() { inbox_->Post(ResumeCmd{}); }

  void UpdateWeightsAsync(std::string path, std::optional<int64_t> version,
                          std::function<void(absl::Status)> done) {
    if (!inbox_->Post(WeightsCmd{std::move(path), version, done}) && done) {
      done(absl::UnavailableError("executor stopped"));
    }
  }

  void ReconfigureAsync(EngineReconfig change,
                        std::function<void(absl::Status)> done) {
    if (!inbox_->Post(ReconfigCmd{std::move(change), done}) && done) {
      done(absl::UnavailableError("executor stopped"));
    }
  }

  EngineStats Stats() const {
    EngineStats s;
    {
      MutexLock lock(&stats_mu_);
      s = stats_;
    }
    s.weight_update_in_progress = update_in_progress_.load();
    s.rejected_requests += rejected_.load();
    return s;
  }

  void Shutdown(ShutdownMode mode) {
    {
      MutexLock lock(&ids_mu_);
      accepting_ = false;
    }
    inbox_->Post(ShutdownCmd{mode});
    MutexLock lock(&join_mu_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Status Reject(absl::Status s) {
    rejected_.fetch_add(1);
    return s;
  }

  absl::Status CheckFits(int prompt_len, int n) {
    const PoolPlan& p = info_.pools;
    const int need = BlocksFor(prompt_len, p.pools.kv_block_size) +
                     n * admission_headroom_blocks_;
    if (need > p.pools.num_kv_blocks) {
      return Reject(absl::ResourceExhaustedError(absl::StrCat(
          "request needs ", need, " KV blocks at admission; the pool has ",
          p.pools.num_kv_blocks)));
    }
    return absl::OkStatus();
  }

  // Assigns an id if empty and marks it live and waiting.
  absl::Status Reserve(std::string* id) ABSL_LOCKS_EXCLUDED(ids_mu_) {
    MutexLock lock(&ids_mu_);
    if (!accepting_) {
      return Reject(absl::UnavailableError("executor is shutting down"));
    }
    if (static_cast<int>(waiting_ids_.size()) >= max_waiting_groups_) {
      return Reject(absl::ResourceExhaustedError(absl::StrCat(
          "waiting queue full (max_waiting_groups = ", max_waiting_groups_,
          ")")));
    }
    if (id->empty()) {
      do {
        *id = absl::StrCat("auto-", ++next_auto_id_);
      } while (live_ids_.count(*id) > 0);
    } else if (live_ids_.count(*id) > 0) {
      return Reject(absl::AlreadyExistsError(
          absl::StrCat("request_id ", *id, " is live")));
    }
    live_ids_.insert(*id);
    waiting_ids_.insert(*id);
    return absl::OkStatus();
  }

  void Admitted(const std::string& id) ABSL_LOCKS_EXCLUDED(ids_mu_) {
    MutexLock lock(&ids_mu_);
    waiting_ids_.erase(id);
  }

  void ForgetId(const std::string& id) ABSL_LOCKS_EXCLUDED(ids_mu_) {
    MutexLock lock(&ids_mu_);
    live_ids_.erase(id);
    waiting_ids_.erase(id);
  }

  absl::StatusOr<std::unique_ptr<ResultStream>> Post(
      const std::string& id, std::shared_ptr<ResultChannel> ch, Command cmd) {
    if (!inbox_->Post(std::move(cmd))) {
      ForgetId(id);
      return Reject(absl::UnavailableError("executor is shutting down"));
    }
    std::weak_ptr<Inbox> weak = inbox_;
    return std::make_unique<ResultStream>(std::move(ch), [weak, id] {
      if (std::shared_ptr<Inbox> inbox = weak.lock()) {
        inbox->Post(CancelCmd{id});
      }
    });
  }

  // ---- Engine thread -------------------------------------------------------

  void Loop() {
    std::optional<ShutdownMode> stopping;
    while (true) {
      // Sleep until a command or the next deadline when there is no work.
      std::vector<Command> cmds =
          inbox_->Take(!engine_->HasWork() && !stopping.has_value(),
                       engine_->NextDeadline());
      for (Command& c : cmds) Apply(c, &stopping);
      if (stopping == ShutdownMode::kAbort) break;
      if (stopping == ShutdownMode::kDrain && !engine_->HasWork()) {
        // Drained, or what is left can never run (e.g. it waits for a
        // weight version that will not come): end it.
        break;
      }
      if (absl::Status s = engine_->Step(); !s.ok()) {
        // An engine bug: fail everything rather than spin.
        engine_->AbortAll(AbortCause::kInternal);
      }
      PublishStats();
      SettlePauses();  // after publishing: a waiter sees the new stats
    }
    engine_->AbortAll(AbortCause::kShutdown);
    // Whatever was posted after the shutdown command.
    for (Command& c : inbox_->Close()) Refuse(c);
    for (auto& done : pause_waiters_) done(absl::CancelledError("shutdown"));
    pause_waiters_.clear();
    PublishStats();
  }

  void Apply(Command& c, std::optional<ShutdownMode>* stopping) {
    if (auto* s = std::get_if<SubmitCmd>(&c)) {
      const int n = s->request.n;
      const std::string id = s->request.request_id;
      if (absl::Status st = engine_->Submit(std::move(s->request), s->channel);
          !st.ok()) {
        FailChannel(*s->channel, n, st);
        ForgetId(id);
      }
    } else if (auto* s = std::get_if<ScoreCmd>(&c)) {
      const int n = static_cast<int>(s->request.completions.size());
      const std::string id = s->request.request_id;
      if (absl::Status st =
              engine_->SubmitScore(std::move(s->request), s->channel);
          !st.ok()) {
        FailChannel(*s->channel, n, st);
        ForgetId(id);
      }
    } else if (auto* s = std::get_if<CancelCmd>(&c)) {
      if (s->request_id.empty()) {
        engine_->AbortAll(AbortCause::kCancelled);
      } else {
        engine_->Cancel(s->request_id).IgnoreError();  // may have finished
      }
    } else if (auto* s = std::get_if<PauseCmd>(&c)) {
      if (*stopping == ShutdownMode::kDrain) {
        if (s->done) s->done(absl::UnavailableError("draining"));
        return;
      }
      engine_->Pause(s->mode);
      if (s->done) pause_waiters_.push_back(std::move(s->done));
    } else if (std::holds_alternative<ResumeCmd>(c)) {
      engine_->Resume();
      for (auto& done : pause_waiters_) {
        done(absl::AbortedError("resumed before the pause settled"));
      }
      pause_waiters_.clear();
    } else if (auto* s = std::get_if<WeightsCmd>(&c)) {
      update_in_progress_.store(true);
      absl::Status st = engine_->UpdateWeights(s->path, s->version);
      update_in_progress_.store(false);
      PublishStats();
      if (s->done) s->done(st);
    } else if (auto* s = std::get_if<ReconfigCmd>(&c)) {
      absl::Status st = engine_->Reconfigure(s->change);
      if (s->done) s->done(st);
    } else if (auto* s = std::get_if<ShutdownCmd>(&c)) {
      if (!stopping->has_value() || s->mode == ShutdownMode::kAbort) {
        *stopping = s->mode;
      }
      if (s->mode == ShutdownMode::kDrain) engine_->Resume();
    }
  }

  void Refuse(Command& c) {
    if (auto* s = std::get_if<SubmitCmd>(&c)) {
      FailChannel(*s->channel, s->request.n,
                  absl::UnavailableError("executor stopped"));
    } else if (auto* s = std::get_if<ScoreCmd>(&c)) {
      FailChannel(*s->channel, static_cast<int>(s->request.completions.size()),
                  absl::UnavailableError("executor stopped"));
    } else if (auto* s = std::get_if<PauseCmd>(&c)) {
      if (s->done) s->done(absl::CancelledError("executor stopped"));
    } else if (auto* s = std::get_if<WeightsCmd>(&c)) {
      if (s->done) s->done(absl::UnavailableError("executor stopped"));
    } else if (auto* s = std::get_if<ReconfigCmd>(&c)) {
      if (s->done) s->done(absl::UnavailableError("executor stopped"));
    }
  }

  void SettlePauses() {
    if (pause_waiters_.empty() || !engine_->PauseSettled()) return;
    for (auto& done : pause_waiters_) done(absl::OkStatus());
    pause_waiters_.clear();
  }

  void PublishStats() ABSL_LOCKS_EXCLUDED(stats_mu_) {
    EngineStats s = engine_->stats();
    MutexLock lock(&stats_mu_);
    stats_ = std::move(s);
  }

  std::shared_ptr<Inbox> inbox_;
  std::unique_ptr<Engine> engine_;  // engine thread only (after start)
  const ExecutorInfo info_;
  const int admission_headroom_blocks_ =
      engine_->options().admission_headroom_blocks;

  // Engine thread only.
  std::vector<std::function<void(absl::Status)>> pause_waiters_;

  // The executor's copy of the waiting bound, checked on the caller's thread
  // (the engine's own check then never fires for executor requests).
  const int max_waiting_groups_ = engine_->options().max_waiting_groups;
  Mutex ids_mu_;
  std::unordered_set<std::string> live_ids_ ABSL_GUARDED_BY(ids_mu_);
  std::unordered_set<std::string> waiting_ids_ ABSL_GUARDED_BY(ids_mu_);
  int64_t next_auto_id_ ABSL_GUARDED_BY(ids_mu_) = 0;
  bool accepting_ ABSL_GUARDED_BY(ids_mu_) = true;

  mutable Mutex stats_mu_;
  EngineStats stats_ ABSL_GUARDED_BY(stats_mu_);
  std::atomic<bool> update_in_progress_{false};
  std::atomic<uint64_t> rejected_{0};

  Mutex join_mu_;  // serialises concurrent Shutdown calls
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(
    std::unique_ptr<model::Backend> backend, EngineOptions options,
    Engine::Clock clock) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<Engine> engine,
      Engine::Create(std::move(backend), std::move(options), std::move(clock)));
  ExecutorInfo info;
  info.model = engine->model_info();
  info.capabilities = engine->capabilities();
  info.limits = engine->limits();
  info.pools = engine->pool_plan();
  info.replay = engine->options().replay;
  info.max_waiting_requests = engine->options().max_waiting_groups;
  return std::unique_ptr<Executor>(
      new Executor(std::make_unique<Impl>(std::move(engine), std::move(info))));
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

const ExecutorInfo& Executor::info() const { return impl_->info(); }

absl::StatusOr<std::unique_ptr<ResultStream>> Executor::Enqueue(
    GroupRequest request) {
  return impl_->Enqueue(std::move(request));
}

absl::StatusOr<std::unique_ptr<ResultStream>> Executor::EnqueueScore(
    ScoreRequest request) {
  return impl_->EnqueueScore(std::move(request));
}

absl::Status Executor::Cancel(const std::string& request_id) {
  return impl_->Cancel(request_id);
}

void Executor::CancelAll() { impl_->CancelAll(); }

void Executor::PauseAsync(PauseMode mode,
                          std::function<void(absl::Status)> done) {
  impl_->PauseAsync(mode, std::move(done));
}

namespace {

// The result of an async command for a blocking wrapper. Shared with the
// callback: Notify() may still be running on the engine thread when the
// waiter wakes, so the waiter must not own it alone.
struct Waiter {
  Notification done;
  absl::Status status;
};

std::function<void(absl::Status)> Completer(std::shared_ptr<Waiter> w) {
  return [w = std::move(w)](absl::Status s) {
    w->status = std::move(s);
    w->done.Notify();
  };
}

}  // namespace

absl::Status Executor::Pause(PauseMode mode, absl::Duration timeout) {
  auto w = std::make_shared<Waiter>();
  impl_->PauseAsync(mode, Completer(w));
  if (!w->done.WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError(
        "pause requested; not settled yet (it stays in effect)");
  }
  return w->status;
}

void Executor::Resume() { impl_->Resume(); }

void Executor::UpdateWeightsAsync(std::string path,
                                  std::optional<int64_t> version,
                                  std::function<void(absl::Status)> done) {
  impl_->UpdateWeightsAsync(std::move(path), version, std::move(done));
}

absl::Status Executor::UpdateWeights(std::string path,
                                     std::optional<int64_t> version) {
  auto w = std::make_shared<Waiter>();
  impl_->UpdateWeightsAsync(std::move(path), version, Completer(w));
  w->done.WaitForNotification();
  return w->status;
}

void Executor::ReconfigureAsync(EngineReconfig change,
                                std::function<void(absl::Status)> done) {
  impl_->ReconfigureAsync(std::move(change), std::move(done));
}

EngineStats Executor::Stats() const { return impl_->Stats(); }

void Executor::Shutdown(ShutdownMode mode) { impl_->Shutdown(mode); }

}  // namespace rollout::worker
