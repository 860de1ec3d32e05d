#include "worker/service/worker_service.h"

#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/mutex.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/grpc_status.h"
#include "worker/service/conversions.h"

namespace rollout::worker::service {
namespace {

namespace wv1 = ::rollout::worker::v1;
using rollout::server::ToGrpcStatus;

// An event batch stops growing at about this many tokens (a message of a few
// MiB with top logprobs); the rest goes in the next write.
constexpr int kMaxTokensPerEvent = 1 << 16;

// Forwards result-stream notifications (engine thread) to a reactor until the
// reactor detaches in OnDone. The stream may notify after the reactor is
// gone, so its listener holds this, never the reactor itself.
template <typename Reactor>
class ListenerBridge {
 public:
  explicit ListenerBridge(Reactor* reactor) : reactor_(reactor) {}
  void Notify() ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    if (reactor_ != nullptr) reactor_->OnStreamEvents();
  }
  void Detach() ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  rollout::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_);
};

// ----------------------------------------------------------------- Generate

class GenerateReactor final
    : public grpc::ServerWriteReactor<wv1::GenerateEvent> {
 public:
  GenerateReactor(Executor* executor, bool draining,
                  std::shared_ptr<std::atomic<int64_t>> weight_version,
                  const wv1::GenerateRequest& request)
      : weight_version_(std::move(weight_version)) {
    if (draining) {
      Finish(ToGrpcStatus(absl::UnavailableError("worker is draining")));
      return;
    }
    GroupRequest group =
        ToGroupRequest(request.request(), request.deadline_unix_micros());
    offsets_.assign(std::max(group.n, 0), 0);
    auto stream = executor->Enqueue(std::move(group));
    if (!stream.ok()) {
      Finish(ToGrpcStatus(stream.status()));
      return;
    }
    stream_ = *std::move(stream);
    {
      // Before the listener: the `accepted` event is always the first write.
      rollout::MutexLock lock(&mu_);
      writing_ = true;
      event_.set_accepted(true);
    }
    bridge_ = std::make_shared<ListenerBridge<GenerateReactor>>(this);
    stream_->SetListener(
        [bridge = bridge_] { bridge->Notify(); });  // engine thread
    StartWrite(&event_);
  }

  // The engine produced events (engine thread, through the bridge).
  void OnStreamEvents() { Pump(); }

  void OnWriteDone(bool ok) override {
    {
      rollout::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        cancelled_ = true;  // the client is gone
      } else if (done_in_flight_) {
        done_written_ = true;
      }
    }
    if (!ok) stream_->Cancel();
    Pump();
  }

  void OnCancel() override {
    {
      rollout::MutexLock lock(&mu_);
      cancelled_ = true;
    }
    // The engine aborts the request within one step and frees its slots.
    if (stream_ != nullptr) stream_->Cancel();
    Pump();
  }

  void OnDone() override {
    if (bridge_ != nullptr) bridge_->Detach();
    delete this;  // drops the stream (cancelling the request if unfinished)
  }

 private:
  // Writes what the stream has (one write at a time), or finishes.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_) {
    enum class Action { kNothing, kWrite, kFinish };
    Action action = Action::kNothing;
    grpc::Status finish;
    {
      rollout::MutexLock lock(&mu_);
      if (finish_called_ || writing_) return;
      if (cancelled_ || done_written_) {
        finish_called_ = true;
        action = Action::kFinish;
        if (cancelled_) {
          finish = grpc::Status(grpc::StatusCode::CANCELLED,
                                "generate call cancelled");
        }
      } else if (FillEventLocked()) {
        writing_ = true;
        action = Action::kWrite;
      }
    }
    // Outside the lock: gRPC may run reactions on other threads meanwhile.
    if (action == Action::kWrite) StartWrite(&event_);
    if (action == Action::kFinish) Finish(finish);
  }

  // Moves what the stream has into event_; false if there was nothing.
  bool FillEventLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    event_.Clear();
    int tokens = 0;
    bool any = false;
    while (tokens < kMaxTokensPerEvent) {
      std::optional<StreamEvent> next = stream_->TryPop();
      if (!next.has_value()) break;
      any = true;
      if (auto* delta = std::get_if<TokenDelta>(&*next)) {
        const int index = delta->completion_index;
        if (index < 0 || index >= static_cast<int>(offsets_.size())) continue;
        AppendDelta(*delta, offsets_[index], weight_version_->load(), &event_);
        offsets_[index] += static_cast<int>(delta->token_ids.size());
        tokens += static_cast<int>(delta->token_ids.size());
      } else if (auto* end = std::get_if<CompletionResult>(&*next)) {
        *event_.add_ends() = ToCompletionEnd(*end);
      } else if (auto* summary = std::get_if<GroupSummary>(&*next)) {
        *event_.mutable_done() = ToGroupDone(*summary);
        done_in_flight_ = true;
        break;
      }
    }
    return any;
  }

  const std::shared_ptr<std::atomic<int64_t>> weight_version_;
  std::unique_ptr<ResultStream> stream_;
  std::shared_ptr<ListenerBridge<GenerateReactor>> bridge_;
  rollout::Mutex mu_;
  // Filled under mu_, then read by gRPC while writing_ (one write at a time).
  wv1::GenerateEvent event_;
  std::vector<int> offsets_ ABSL_GUARDED_BY(mu_);  // tokens sent per
                                                   // completion
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool done_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool done_written_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
};

// -------------------------------------------------------------------- Score

class ScoreReactor final : public grpc::ServerUnaryReactor {
 public:
  ScoreReactor(Executor* executor, bool draining,
               std::shared_ptr<std::atomic<int64_t>> weight_version,
               const wv1::ScoreRequest& request, wv1::ScoreResult* response)
      : weight_version_(std::move(weight_version)), response_(response) {
    if (draining) {
      Finish(ToGrpcStatus(absl::UnavailableError("worker is draining")));
      return;
    }
    auto stream = executor->EnqueueScore(
        ToScoreRequest(request.request(), request.deadline_unix_micros()));
    if (!stream.ok()) {
      Finish(ToGrpcStatus(stream.status()));
      return;
    }
    stream_ = *std::move(stream);
    bridge_ = std::make_shared<ListenerBridge<ScoreReactor>>(this);
    stream_->SetListener([bridge = bridge_] { bridge->Notify(); });
    OnStreamEvents();  // events that came before the listener was set
  }

  void OnStreamEvents() ABSL_LOCKS_EXCLUDED(mu_) {
    grpc::Status status;
    {
      rollout::MutexLock lock(&mu_);
      if (finish_called_) return;
      bool done = false;
      while (std::optional<StreamEvent> next = stream_->TryPop()) {
        if (auto* c = std::get_if<CompletionResult>(&*next)) {
          results_.push_back(std::move(*c));
        } else if (auto* s = std::get_if<GroupSummary>(&*next)) {
          summary_ = std::move(*s);
          done = true;
          break;
        }
      }
      if (!done) return;
      finish_called_ = true;
      status = ToGrpcStatus(summary_.status);
      if (status.ok()) BuildResponseLocked();
    }
    Finish(status);
  }

  void OnCancel() override {
    if (stream_ != nullptr) stream_->Cancel();
  }

  void OnDone() override {
    if (bridge_ != nullptr) bridge_->Detach();
    delete this;
  }

 private:
  void BuildResponseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::sort(results_.begin(), results_.end(),
              [](const CompletionResult& a, const CompletionResult& b) {
                return a.completion_index < b.completion_index;
              });
    for (const CompletionResult& r : results_) {
      *response_->add_completions() = ToScoredCompletion(r);
      if (r.finish_reason == FinishReason::kAborted) {
        response_->set_aborted(true);
        response_->set_abort_cause(ToProto(r.abort_cause));
      }
    }
    response_->set_weight_version(
        static_cast<uint64_t>(weight_version_->load()));
    response_->set_prompt_tokens(summary_.prompt_tokens);
    response_->set_prompt_tokens_computed(summary_.prompt_tokens_computed);
    response_->set_scored_tokens(summary_.completion_tokens);
    response_->set_queue_seconds(absl::ToDoubleSeconds(summary_.queue_time));
  }

  const std::shared_ptr<std::atomic<int64_t>> weight_version_;
  wv1::ScoreResult* const response_;
  std::unique_ptr<ResultStream> stream_;
  std::shared_ptr<ListenerBridge<ScoreReactor>> bridge_;
  rollout::Mutex mu_;
  std::vector<CompletionResult> results_ ABSL_GUARDED_BY(mu_);
  GroupSummary summary_ ABSL_GUARDED_BY(mu_);
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
};

PauseMode ToEngine(rollout::v1::PauseMode mode) {
  switch (mode) {
    case rollout::v1::PAUSE_MODE_ABORT:
      return PauseMode::kAbort;
    case rollout::v1::PAUSE_MODE_KEEP:
      return PauseMode::kKeep;
    default:
      return PauseMode::kWait;
  }
}

}  // namespace

WorkerService::WorkerService(Executor* executor,
                             rollout::worker::v1::WorkerInfo info)
    : executor_(executor),
      info_(std::move(info)),
      weight_version_(std::make_shared<std::atomic<int64_t>>(
          static_cast<int64_t>(info_.weight_version()))) {}

grpc::ServerUnaryReactor* WorkerService::GetInfo(
    grpc::CallbackServerContext* context, const wv1::GetInfoRequest* request,
    wv1::WorkerInfo* response) {
  *response = info_;
  response->set_weight_version(static_cast<uint64_t>(weight_version()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<wv1::GenerateEvent>* WorkerService::Generate(
    grpc::CallbackServerContext* context, const wv1::GenerateRequest* request) {
  return new GenerateReactor(executor_, draining_.load(), weight_version_,
                             *request);
}

grpc::ServerUnaryReactor* WorkerService::Score(
    grpc::CallbackServerContext* context, const wv1::ScoreRequest* request,
    wv1::ScoreResult* response) {
  return new ScoreReactor(executor_, draining_.load(), weight_version_,
                          *request, response);
}

grpc::ServerUnaryReactor* WorkerService::Cancel(
    grpc::CallbackServerContext* context, const wv1::CancelRequest* request,
    wv1::CancelResponse* response) {
  if (request->all()) {
    const EngineStats stats = executor_->Stats();
    executor_->CancelAll();
    response->set_cancelled(stats.requests_running + stats.requests_waiting);
  } else {
    int cancelled = 0;
    for (const std::string& id : request->request_ids()) {
      // NOT_FOUND: it has just finished; nothing to do.
      if (executor_->Cancel(id).ok()) ++cancelled;
    }
    response->set_cancelled(cancelled);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Pause(
    grpc::CallbackServerContext* context, const wv1::PauseRequest* request,
    wv1::PauseResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Executor* executor = executor_;
  // Runs on the engine thread once the pause has settled.
  executor_->PauseAsync(ToEngine(request->mode()),
                        [reactor, response, executor](absl::Status status) {
                          if (status.ok()) {
                            const EngineStats stats = executor->Stats();
                            response->set_requests_live(stats.requests_running +
                                                        stats.requests_waiting);
                          }
                          reactor->Finish(ToGrpcStatus(status));
                        });
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Resume(
    grpc::CallbackServerContext* context, const wv1::ResumeRequest* request,
    wv1::ResumeResponse* response) {
  executor_->Resume();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::UpdateWeights(
    grpc::CallbackServerContext* context,
    const wv1::UpdateWeightsRequest* request,
    wv1::UpdateWeightsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const absl::Time start = absl::Now();
  std::optional<int64_t> version;
  if (request->version() > 0) {
    version = static_cast<int64_t>(request->version());
  }
  std::shared_ptr<std::atomic<int64_t>> serving = weight_version_;
  // The load runs on the engine thread between steps; so does this callback.
  executor_->UpdateWeightsAsync(
      request->path(), version,
      [reactor, response, serving, version, start](absl::Status status) {
        if (status.ok()) {
          serving->store(version.has_value() ? *version : serving->load() + 1);
          response->set_weight_version(static_cast<uint64_t>(serving->load()));
          response->set_seconds(absl::ToDoubleSeconds(absl::Now() - start));
        }
        reactor->Finish(ToGrpcStatus(status));
      });
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Reconfigure(
    grpc::CallbackServerContext* context,
    const wv1::ReconfigureRequest* request,
    wv1::ReconfigureResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  EngineReconfig change;
  change.replay_enabled = request->replay_ssm_enabled();
  change.replay_auto_min_batch = request->replay_auto_min_batch();
  if (absl::Status s = change.Validate(); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  rollout::MutexLock lock(&reconfig_mu_);
  if (request->config_generation() <= reconfig_generation_) {
    response->set_applied(false);  // overtaken by a newer generation
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  reconfig_generation_ = request->config_generation();
  executor_->ReconfigureAsync(std::move(change),
                              [reactor, response](absl::Status status) {
                                response->set_applied(status.ok());
                                reactor->Finish(ToGrpcStatus(status));
                              });
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::GetStats(
    grpc::CallbackServerContext* context, const wv1::GetStatsRequest* request,
    wv1::WorkerStats* response) {
  *response = ToWorkerStats(executor_->Stats(), absl::Now());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

absl::StatusOr<std::unique_ptr<grpc::Server>> StartWorkerServer(
    WorkerService* service, const std::string& socket_path) {
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(absl::StrCat("unix:", socket_path),
                           grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve on unix:", socket_path));
  }
  return server;
}

}  // namespace rollout::worker::service
