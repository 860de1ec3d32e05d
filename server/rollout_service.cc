#include "server/rollout_service.h"

#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "common/status_macros.h"
#include "server/grpc_status.h"
#include "server/reactor_util.h"
#include "server/request_defaults.h"
#include "server/request_limits.h"
#include "server/request_validator.h"
#include "server/server_info.h"

namespace rollout::server {
namespace {

using rollout::v1::GenerateRequest;
using rollout::v1::GenerateResponse;
using rollout::v1::GenerateStreamChunk;

// A Generate/GenerateStream call that passed validation and admission.
struct AdmittedGenerate {
  std::shared_ptr<const GenerateRequest> request;
  Admission::Ticket ticket;
  CallContext context;
};

// The key admission.max_requests_per_client counts the call under.
absl::StatusOr<std::string> ClientKeyOf(
    const grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  absl::string_view client_id;
  if (auto it = metadata.find(kClientIdKey); it != metadata.end()) {
    client_id = absl::string_view(it->second.data(), it->second.size());
  }
  return Admission::ClientKey(client_id, context->peer());
}

absl::StatusOr<AdmittedGenerate> AdmitGenerate(
    const ServiceEnv& env, const grpc::CallbackServerContext* context,
    const GenerateRequest& raw, bool unary, absl::Time arrival) {
  thread_local absl::BitGen rng;
  std::shared_ptr<const ConfigSnapshot> snapshot = env.config->Current();
  const auto model = env.CurrentModel();
  const RequestLimits limits =
      RequestLimits::From(snapshot->config, model.get());
  auto request = std::make_shared<const GenerateRequest>(
      ResolveGenerateRequest(raw, snapshot->config, limits, rng));
  RETURN_IF_ERROR(ValidateGenerateRequest(*request, limits, unary));
  RETURN_IF_ERROR(env.pause->CheckNotPaused());
  ASSIGN_OR_RETURN(const std::string client, ClientKeyOf(context));
  ASSIGN_OR_RETURN(
      Admission::Ticket ticket,
      env.admission->Admit(
          Admission::GroupCost(request->prompt_token_ids_size(), request->n(),
                               request->sampling().max_tokens()),
          snapshot->config.admission(), client));
  AdmittedGenerate admitted;
  admitted.request = std::move(request);
  admitted.ticket = std::move(ticket);
  admitted.context.arrival = arrival;
  admitted.context.deadline = DeadlineOf(context);
  admitted.context.config = std::move(snapshot);
  return admitted;
}

// ---------------------------------------------------------------- Generate

class GenerateCall final
    : public SelfDeletingReactor<grpc::ServerUnaryReactor> {
 public:
  GenerateCall(const ServiceEnv& env, grpc::CallbackServerContext* context,
               const GenerateRequest& request, GenerateResponse* response)
      : env_(env), response_(response), sink_(this) {
    auto admitted =
        AdmitGenerate(env, context, request, /*unary=*/true, absl::Now());
    if (!admitted.ok()) {
      AddRetryHint(context, admitted.status());
      Complete(admitted.status());
    } else {
      ticket_ = std::move(admitted->ticket);
      cancel_.Set(env.dispatcher->Generate(std::move(admitted->request),
                                           /*stream=*/false, admitted->context,
                                           &sink_));
    }
    Unref();
  }

  void OnCancel() override { cancel_.Cancel(); }

 private:
  class Sink final : public GenerateSink {
   public:
    explicit Sink(GenerateCall* call) : call_(call) {}
    void Write(GenerateStreamChunk chunk) override {}  // unary: not used
    void Finish(absl::StatusOr<GenerateResponse> result) override {
      if (result.ok()) *call_->response_ = *std::move(result);
      call_->Complete(result.status());
    }

   private:
    GenerateCall* const call_;
  };

  void Complete(const absl::Status& status) {
    ticket_.Release();
    RecordFinish(env_, "Generate", status);
    Finish(ToGrpcStatus(status));
  }

  const ServiceEnv& env_;
  GenerateResponse* const response_;
  Sink sink_;
  Admission::Ticket ticket_;
  CancelSlot cancel_;
};

// ---------------------------------------------------------- GenerateStream

class GenerateStreamCall final
    : public SelfDeletingReactor<
          grpc::ServerWriteReactor<GenerateStreamChunk>> {
 public:
  GenerateStreamCall(const ServiceEnv& env,
                     grpc::CallbackServerContext* context,
                     const GenerateRequest& request)
      : env_(env), sink_(this) {
    auto admitted =
        AdmitGenerate(env, context, request, /*unary=*/false, absl::Now());
    if (!admitted.ok()) {
      AddRetryHint(context, admitted.status());
      Complete(admitted.status());
    } else {
      ticket_ = std::move(admitted->ticket);
      max_buffered_bytes_ =
          admitted->context.config->config.admission().max_response_bytes();
      cancel_.Set(env.dispatcher->Generate(std::move(admitted->request),
                                           /*stream=*/true, admitted->context,
                                           &sink_));
    }
    Unref();
  }

  void OnCancel() override { cancel_.Cancel(); }

  void OnWriteDone(bool ok) override {
    const GenerateStreamChunk* next = nullptr;
    bool finish_now = false;
    absl::Status status;
    {
      rollout::MutexLock lock(&mu_);
      buffered_bytes_ -= queue_.front().second;
      queue_.pop_front();
      if (!ok) {  // the client is gone: drop what is buffered
        client_gone_ = true;
        queue_.clear();
        buffered_bytes_ = 0;
      }
      if (!queue_.empty()) {
        next = &queue_.front().first;
      } else {
        writing_ = false;
        finish_now = finished_;
        status = final_status_;
      }
    }
    if (!ok) cancel_.Cancel();
    if (next != nullptr) {
      StartWrite(next);
    } else if (finish_now) {
      Complete(status);
    }
  }

 private:
  class Sink final : public GenerateSink {
   public:
    explicit Sink(GenerateStreamCall* call) : call_(call) {}
    void Write(GenerateStreamChunk chunk) override {
      call_->Enqueue(std::move(chunk));
    }
    void Finish(absl::StatusOr<GenerateResponse> result) override {
      call_->DispatcherFinished(result.status());
    }

   private:
    GenerateStreamCall* const call_;
  };

  void Enqueue(GenerateStreamChunk chunk) {
    const GenerateStreamChunk* next = nullptr;
    bool overflow = false;
    {
      rollout::MutexLock lock(&mu_);
      if (client_gone_ || overflowed_) return;
      const int64_t size = static_cast<int64_t>(chunk.ByteSizeLong());
      if (buffered_bytes_ + size > max_buffered_bytes_) {
        // A client that does not read must not make rolloutd buffer without
        // bound: cancel the work, end the stream with a clear status. The
        // stream ends in that error, so chunks not yet handed to gRPC are of
        // no use to the client: keep only the one being written, so an open
        // call of a client that never reads pins one chunk, not
        // max_response_bytes, until it reads or its deadline ends it.
        overflowed_ = true;
        overflow = true;
        while (queue_.size() > 1) {
          buffered_bytes_ -= queue_.back().second;
          queue_.pop_back();
        }
      } else {
        queue_.emplace_back(std::move(chunk), size);
        buffered_bytes_ += size;
        if (!writing_) {
          writing_ = true;
          next = &queue_.back().first;  // deque: references stay valid
        }
      }
    }
    if (overflow) cancel_.Cancel();
    if (next != nullptr) StartWrite(next);
  }

  void DispatcherFinished(absl::Status status) {
    // The work is over: its admission budget goes back now, not when the
    // last buffered chunk is written. A client that stopped reading may keep
    // the call open until its deadline; it then holds one chunk (see
    // Enqueue), never queue slots or tokens. (Complete()
    // runs after this, on this thread or after OnWriteDone saw finished_
    // under mu_, so the ticket is not touched concurrently.)
    ticket_.Release();
    {
      rollout::MutexLock lock(&mu_);
      if (overflowed_) {
        status = absl::ResourceExhaustedError(absl::StrCat(
            "stream cancelled: the client did not read it and more than "
            "admission.max_response_bytes (",
            max_buffered_bytes_, ") were waiting"));
      }
      finished_ = true;
      final_status_ = status;
      if (writing_) return;  // OnWriteDone finishes after the last write
    }
    Complete(status);
  }

  void Complete(const absl::Status& status) {
    ticket_.Release();
    RecordFinish(env_, "GenerateStream", status);
    Finish(ToGrpcStatus(status));
  }

  const ServiceEnv& env_;
  Sink sink_;
  Admission::Ticket ticket_;
  CancelSlot cancel_;
  int64_t max_buffered_bytes_ = 0;
  rollout::Mutex mu_;
  // Chunks not yet written, with their sizes; front() is being written
  // while writing_.
  std::deque<std::pair<GenerateStreamChunk, int64_t>> queue_
      ABSL_GUARDED_BY(mu_);
  int64_t buffered_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool client_gone_ ABSL_GUARDED_BY(mu_) = false;
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
};

// ------------------------------------------------------------------- Score

class ScoreCall final : public SelfDeletingReactor<grpc::ServerUnaryReactor> {
 public:
  ScoreCall(const ServiceEnv& env, grpc::CallbackServerContext* context,
            const rollout::v1::ScoreRequest& request,
            rollout::v1::ScoreResponse* response)
      : env_(env), response_(response) {
    absl::Status status = Start(context, request);
    if (!status.ok()) {
      AddRetryHint(context, status);
      Complete(status);
    }
    Unref();
  }

  void OnCancel() override { cancel_.Cancel(); }

 private:
  absl::Status Start(grpc::CallbackServerContext* context,
                     const rollout::v1::ScoreRequest& raw) {
    thread_local absl::BitGen rng;
    std::shared_ptr<const ConfigSnapshot> snapshot = env_.config->Current();
    const auto model = env_.CurrentModel();
    const RequestLimits limits =
        RequestLimits::From(snapshot->config, model.get());
    auto request = std::make_shared<const rollout::v1::ScoreRequest>(
        ResolveScoreRequest(raw, rng));
    RETURN_IF_ERROR(ValidateScoreRequest(*request, limits));
    RETURN_IF_ERROR(env_.pause->CheckNotPaused());
    int64_t tokens = request->prompt_token_ids_size();
    for (const auto& c : request->completions()) tokens += c.token_ids_size();
    ASSIGN_OR_RETURN(const std::string client, ClientKeyOf(context));
    ASSIGN_OR_RETURN(
        ticket_,
        env_.admission->Admit(tokens, snapshot->config.admission(), client));
    CallContext call;
    call.deadline = DeadlineOf(context);
    call.config = std::move(snapshot);
    cancel_.Set(env_.dispatcher->Score(
        std::move(request), call,
        [this](absl::StatusOr<rollout::v1::ScoreResponse> result) {
          if (result.ok()) *response_ = *std::move(result);
          Complete(result.status());
        }));
    return absl::OkStatus();
  }

  void Complete(const absl::Status& status) {
    ticket_.Release();
    RecordFinish(env_, "Score", status);
    Finish(ToGrpcStatus(status));
  }

  const ServiceEnv& env_;
  rollout::v1::ScoreResponse* const response_;
  Admission::Ticket ticket_;
  CancelSlot cancel_;
};

// Finishes a unary call with a status, counting it.
grpc::ServerUnaryReactor* FinishNow(const ServiceEnv& env,
                                    grpc::CallbackServerContext* context,
                                    absl::string_view rpc,
                                    const absl::Status& status) {
  RecordFinish(env, rpc, status);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* RolloutService::Generate(
    grpc::CallbackServerContext* context, const GenerateRequest* request,
    GenerateResponse* response) {
  return new GenerateCall(env_, context, *request, response);
}

grpc::ServerWriteReactor<GenerateStreamChunk>* RolloutService::GenerateStream(
    grpc::CallbackServerContext* context, const GenerateRequest* request) {
  return new GenerateStreamCall(env_, context, *request);
}

grpc::ServerUnaryReactor* RolloutService::Score(
    grpc::CallbackServerContext* context,
    const rollout::v1::ScoreRequest* request,
    rollout::v1::ScoreResponse* response) {
  return new ScoreCall(env_, context, *request, response);
}

grpc::ServerUnaryReactor* RolloutService::Abort(
    grpc::CallbackServerContext* context,
    const rollout::v1::AbortRequest* request,
    rollout::v1::AbortResponse* response) {
  const absl::Status valid = ValidateAbortRequest(*request);
  if (!valid.ok()) return FinishNow(env_, context, "Abort", valid);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const ServiceEnv* env = &env_;
  env_.dispatcher->Abort(
      *request, [env, reactor,
                 response](absl::StatusOr<rollout::v1::AbortResponse> result) {
        if (result.ok()) *response = *std::move(result);
        RecordFinish(*env, "Abort", result.status());
        reactor->Finish(ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* RolloutService::GetServerInfo(
    grpc::CallbackServerContext* context,
    const rollout::v1::GetServerInfoRequest* request,
    rollout::v1::ServerInfo* response) {
  const auto model = env_.CurrentModel();
  *response = BuildServerInfo(*env_.config->Current(), env_.dispatcher->State(),
                              model.get(), env_.pause->paused());
  return FinishNow(env_, context, "GetServerInfo", absl::OkStatus());
}

}  // namespace rollout::server
