// WorkerPool, the call side: admission to the pool, dispatch, attempts on
// workers, re-runs after a lost worker, cancellation, Abort, finishing.
// (Processes, control fan-out and metrics: worker_pool.cc.)
#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/workers/router.h"
#include "server/workers/worker_pool.h"
#include "server/workers/worker_pool_internal.h"

namespace rollout::server::workers {
namespace {

using rollout::v1::GenerateResponse;
using rollout::v1::GenerateStreamChunk;

int64_t MicrosOrZero(absl::Time t) {
  return t == absl::InfiniteFuture() ? 0 : absl::ToUnixMicros(t);
}

// Errors a worker gives before it runs a request: final, no re-run.
bool IsRequestError(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::UNAUTHENTICATED:
      return true;
    default:
      return false;
  }
}

absl::Status CancelledStatus(const CallContext& context) {
  if (absl::Now() >= context.deadline) {
    return absl::DeadlineExceededError(
        "deadline exceeded; the request was stopped in the engine");
  }
  return absl::CancelledError("cancelled by the client");
}

}  // namespace

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

// ------------------------------------------------------------ AbortCollector

std::optional<rollout::v1::AbortResponse>
WorkerPool::AbortCollector::TakeIfDoneLocked() {
  if (!armed_ || finished_ < expected_ || !done_) return std::nullopt;
  return std::move(response_);
}

void WorkerPool::AbortCollector::Add(const std::string& id,
                                     std::optional<GenerateResponse> response) {
  Done done;
  std::optional<rollout::v1::AbortResponse> answer;
  {
    rollout::MutexLock lock(&mu_);
    response_.add_request_ids(id);
    if (response.has_value()) *response_.add_aborted() = *std::move(response);
    ++finished_;
    answer = TakeIfDoneLocked();
    if (answer.has_value()) done = std::move(done_);
  }
  if (done) done(*std::move(answer));
}

void WorkerPool::AbortCollector::Arm() {
  Done done;
  std::optional<rollout::v1::AbortResponse> answer;
  {
    rollout::MutexLock lock(&mu_);
    armed_ = true;
    answer = TakeIfDoneLocked();
    if (answer.has_value()) done = std::move(done_);
  }
  if (done) done(*std::move(answer));
}

// -------------------------------------------------------------------- Handle

class WorkerPool::Handle final : public CallHandle {
 public:
  Handle(WorkerPool* pool, uint64_t serial) : pool_(pool), serial_(serial) {}
  void Cancel() override { pool_->CancelCall(serial_); }

 private:
  WorkerPool* const pool_;
  const uint64_t serial_;
};

// ---------------------------------------------------------------- Admission

std::unique_ptr<CallHandle> WorkerPool::Generate(
    std::shared_ptr<const rollout::v1::GenerateRequest> request, bool stream,
    const CallContext& context, GenerateSink* sink) {
  const uint64_t serial = next_serial_.fetch_add(1) + 1;
  auto call =
      std::make_shared<Call>(serial, /*is_score=*/false, stream, request->n());
  call->public_id = request->request_id();
  call->min_weight_version = request->min_weight_version();
  call->cost = request->prompt_token_ids_size() +
               int64_t{request->n()} * request->sampling().max_tokens();
  call->generate = std::move(request);
  call->context = context;
  call->sink = sink;
  Submit(call);
  return std::make_unique<Handle>(this, serial);
}

std::unique_ptr<CallHandle> WorkerPool::Score(
    std::shared_ptr<const rollout::v1::ScoreRequest> request,
    const CallContext& context, Callback<rollout::v1::ScoreResponse> done) {
  const uint64_t serial = next_serial_.fetch_add(1) + 1;
  auto call = std::make_shared<Call>(serial, /*is_score=*/true,
                                     /*stream=*/false, 0);
  call->public_id = request->request_id();
  call->min_weight_version = request->min_weight_version();
  call->cost = request->prompt_token_ids_size();
  for (const auto& c : request->completions()) call->cost += c.token_ids_size();
  call->score = std::move(request);
  call->context = context;
  call->score_done = std::move(done);
  Submit(call);
  return std::make_unique<Handle>(this, serial);
}

void WorkerPool::Submit(std::shared_ptr<Call> call) {
  Actions actions;
  absl::Status rejected;
  {
    rollout::MutexLock lock(&mu_);
    std::vector<WorkerLoad> loads;
    for (const Worker& w : workers_) {
      loads.push_back({w.ready, 0, 1, 0, w.weight_version});
    }
    const Route route = PickWorker(loads, call->min_weight_version);
    if (shutting_down_) {
      rejected = absl::UnavailableError("server is shutting down");
    } else if (route.outcome == Route::kNoWorker) {
      rejected = absl::UnavailableError("no worker is serving");
    } else if (route.outcome == Route::kVersionTooOld) {
      rejected = absl::FailedPreconditionError(
          absl::StrCat("min_weight_version: ", call->min_weight_version,
                       " not reached; the workers serve weight version ",
                       route.newest_version));
    } else {
      calls_[call->serial] = call;
      pending_.push_back(call);
      DispatchLocked(&actions);
    }
  }
  if (!rejected.ok()) {
    call->end = Call::End::kError;
    call->error = rejected;
    if (call->is_score) {
      FinishScore(*call);
    } else {
      FinishGenerate(*call);
    }
    return;
  }
  Run(std::move(actions));
}

// ----------------------------------------------------------------- Dispatch

void WorkerPool::DispatchLocked(Actions* actions) {
  if (hold_ == Hold::kKeep || hold_ == Hold::kAbort || shutting_down_) {
    if (metrics_ != nullptr) metrics_->SetFrontendWaiting(pending_.size());
    return;
  }
  while (!pending_.empty()) {
    std::vector<WorkerLoad> loads;
    loads.reserve(workers_.size());
    for (const Worker& w : workers_) {
      WorkerLoad l;
      l.ready = w.ready && !w.suspect && !w.full;
      l.outstanding_requests = w.outstanding;
      l.capacity = std::max(1, w.info.capacity());
      l.outstanding_tokens = w.outstanding_tokens;
      l.weight_version = w.weight_version;
      loads.push_back(l);
    }
    std::shared_ptr<Call> call = pending_.front();
    const Route route = PickWorker(loads, call->min_weight_version);
    if (route.outcome == Route::kRouted) {
      pending_.pop_front();
      AssignLocked(call, route.worker, actions);
    } else if (route.outcome == Route::kVersionTooOld) {
      pending_.pop_front();
      call->end = Call::End::kError;
      call->error = absl::FailedPreconditionError(
          absl::StrCat("min_weight_version: ", call->min_weight_version,
                       " not reached; the workers serve weight version ",
                       route.newest_version));
      RetireLocked(call, actions);
    } else {
      break;  // no room (or no worker) now: wait, in order
    }
  }
  if (metrics_ != nullptr) metrics_->SetFrontendWaiting(pending_.size());
}

void WorkerPool::AssignLocked(const std::shared_ptr<Call>& call, int index,
                              Actions* actions) {
  Worker& w = workers_[index];
  const absl::Time now = absl::Now();
  auto attempt = std::make_shared<Attempt>();
  attempt->number = ++call->attempts;
  attempt->worker = index;
  attempt->incarnation = w.incarnation;
  attempt->connection = w.connection;
  attempt->id =
      absl::StrCat(call->public_id, "#", call->serial, ".", attempt->number);
  attempt->dispatched = now;
  call->attempt = attempt;
  if (w.outstanding == 0) w.busy_since = now;
  ++w.outstanding;
  call->charged = call->cost;
  w.outstanding_tokens += call->charged;
  actions->starts.emplace_back(call, std::move(attempt));
}

void WorkerPool::ReleaseLocked(Call& call) {
  if (call.attempt == nullptr) return;
  Worker& w = workers_[call.attempt->worker];
  if (w.incarnation == call.attempt->incarnation) {
    --w.outstanding;
    w.outstanding_tokens -= call.charged;
    w.full = false;
  }
  call.charged = 0;
  call.attempt = nullptr;
}

void WorkerPool::RetireLocked(const std::shared_ptr<Call>& call,
                              Actions* actions) {
  if (call->retired) return;
  call->retired = true;
  calls_.erase(call->serial);
  auto it = std::find(pending_.begin(), pending_.end(), call);
  if (it != pending_.end()) pending_.erase(it);
  actions->finishes.push_back(call);
  if (calls_.empty() && !drain_waiters_.empty()) {
    // Pause(WAIT): nothing is left.
    for (PauseWaiter& waiter : drain_waiters_) {
      actions->later.push_back([done = std::move(waiter.done)]() mutable {
        done(rollout::v1::PauseResponse());
      });
    }
    drain_waiters_.clear();
  }
}

void WorkerPool::RequeueLocked(const std::shared_ptr<Call>& call,
                               absl::Status why, Actions* actions) {
  ++call->reruns;
  if (shutting_down_) {
    call->end = Call::End::kError;
    call->error = absl::UnavailableError("server is shutting down");
    RetireLocked(call, actions);
    return;
  }
  if (call->reruns > options_.max_reruns) {
    call->end = Call::End::kError;
    call->error = absl::UnavailableError(
        absl::StrCat("the worker running this request failed ", call->reruns,
                     " times (last: ", why.message(), "); not retrying"));
    RetireLocked(call, actions);
    return;
  }
  // First in line: it has waited longest.
  pending_.push_front(call);
  DispatchLocked(actions);
}

void WorkerPool::Run(Actions actions) {
  for (const std::shared_ptr<Call>& call : actions.finishes) {
    if (call->is_score) {
      FinishScore(*call);
    } else {
      FinishGenerate(*call);
    }
  }
  for (auto& [call, attempt] : actions.starts) StartAttempt(call, attempt);
  for (auto& task : actions.later) task();
  if (actions.state_changed) NotifyStateChanged();
}

// ----------------------------------------------------------------- Attempts

void WorkerPool::StartAttempt(const std::shared_ptr<Call>& call,
                              const std::shared_ptr<Attempt>& attempt) {
  if (call->is_score) {
    auto unary =
        std::make_shared<UnaryCall<wv1::ScoreRequest, wv1::ScoreResult>>();
    *unary->request.mutable_request() = *call->score;
    unary->request.mutable_request()->set_request_id(attempt->id);
    unary->request.set_deadline_unix_micros(
        MicrosOrZero(call->context.deadline));
    bool cancel_now;
    {
      rollout::MutexLock lock(&mu_);
      attempt->score = unary;
      cancel_now = call->cancelled || call->abort_requested;
    }
    in_flight_.Begin();
    attempt->connection->stub()->async()->Score(
        &unary->context, &unary->request, &unary->response,
        [this, call, attempt, unary](grpc::Status status) {
          OnAttemptEnd(
              call, attempt, status,
              std::shared_ptr<wv1::ScoreResult>(unary, &unary->response));
          in_flight_.End();
        });
    if (cancel_now) unary->context.TryCancel();
    return;
  }
  {
    rollout::MutexLock lock(&call->out_mu);
    call->assembler.StartAttempt();
  }
  wv1::GenerateRequest request;
  *request.mutable_request() = *call->generate;
  request.mutable_request()->set_request_id(attempt->id);
  request.set_deadline_unix_micros(MicrosOrZero(call->context.deadline));
  std::shared_ptr<WorkerGenerateCall> stream = WorkerGenerateCall::Start(
      *attempt->connection, std::move(request),
      [this, call, attempt](const wv1::GenerateEvent& event) {
        OnGenerateEvent(call, attempt, event);
      },
      [this, call, attempt](const grpc::Status& status) {
        OnAttemptEnd(call, attempt, status, nullptr);
      },
      &in_flight_);
  bool cancel_now;
  {
    rollout::MutexLock lock(&mu_);
    attempt->stream = stream;
    // Cancelled, or already failed (e.g. a diverging re-run) meanwhile.
    cancel_now = (call->cancelled || call->retired) && !attempt->ended;
  }
  if (cancel_now) stream->Cancel();
}

void WorkerPool::OnGenerateEvent(const std::shared_ptr<Call>& call,
                                 const std::shared_ptr<Attempt>& attempt,
                                 const wv1::GenerateEvent& event) {
  int64_t tokens = 0;
  for (const auto& d : event.deltas()) tokens += d.token_ids_size();
  bool send_abort = false;
  {
    rollout::MutexLock lock(&mu_);
    if (call->attempt != attempt || call->retired) return;
    const absl::Time now = absl::Now();
    Worker& w = workers_[attempt->worker];
    if (tokens > 0) {
      if (w.incarnation == attempt->incarnation) {
        w.last_token = now;
        const int64_t done = std::min(tokens, call->charged);
        w.outstanding_tokens -= done;
        call->charged -= done;
      }
      if (call->first_token == absl::InfinitePast()) call->first_token = now;
    }
    if (event.accepted()) {
      attempt->accepted = true;
      if (call->abort_requested && !attempt->abort_sent) {
        attempt->abort_sent = true;
        send_abort = true;
      }
    }
    if (event.has_done()) {
      attempt->done = true;
      attempt->worker_queue_seconds = event.done().queue_seconds();
    }
  }
  if (send_abort) {
    SendCancels(attempt->worker, attempt->incarnation, {attempt->id}, false);
  }
  absl::Status broken;
  {
    rollout::MutexLock lock(&call->out_mu);
    if (call->finished) return;
    auto deltas = call->assembler.Apply(event);
    if (!deltas.ok()) {
      broken = deltas.status();
    } else if (call->stream && !deltas->empty()) {
      GenerateStreamChunk chunk;
      chunk.set_request_id(call->public_id);
      if (!call->first_chunk_sent) {
        call->first_chunk_sent = true;
        chunk.set_seed(call->generate->sampling().seed());
        chunk.set_replay_ssm_mode(call->generate->replay_ssm());
      }
      for (auto& d : *deltas) *chunk.add_deltas() = std::move(d);
      call->sink->Write(std::move(chunk));
    }
  }
  if (broken.ok()) return;
  // The client must not get two versions of a completion: fail the call and
  // stop the worker's run of it.
  Actions actions;
  std::shared_ptr<WorkerGenerateCall> stream;
  {
    rollout::MutexLock lock(&mu_);
    stream = attempt->stream;
    if (call->attempt == attempt && !call->retired) {
      ReleaseLocked(*call);
      call->end = Call::End::kError;
      call->error = broken;
      RetireLocked(call, &actions);
      DispatchLocked(&actions);
    }
  }
  if (stream != nullptr) stream->Cancel();
  Run(std::move(actions));
}

void WorkerPool::OnAttemptEnd(const std::shared_ptr<Call>& call,
                              const std::shared_ptr<Attempt>& attempt,
                              const grpc::Status& status,
                              std::shared_ptr<wv1::ScoreResult> score) {
  Actions actions;
  {
    rollout::MutexLock lock(&mu_);
    attempt->ended = true;
    if (call->attempt != attempt || call->retired) return;
    ReleaseLocked(*call);
    call->final_worker = attempt->worker;
    call->queue_seconds =
        absl::ToDoubleSeconds(attempt->dispatched - call->context.arrival);
    Worker& w = workers_[attempt->worker];
    const bool same_process = w.incarnation == attempt->incarnation;
    bool retire = true;
    if (!call->is_score && attempt->done) {
      call->end = Call::End::kResult;
      call->queue_seconds += attempt->worker_queue_seconds;
    } else if (call->is_score && status.ok()) {
      call->end = Call::End::kResult;
      call->score_result = std::move(score);
      call->queue_seconds += call->score_result->queue_seconds();
    } else if (call->cancelled) {
      call->end = Call::End::kCancelled;
    } else if (IsRequestError(status.error_code()) &&
               (call->is_score || !attempt->accepted)) {
      call->end = Call::End::kError;
      call->error = FromGrpc(status);
    } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
               !attempt->accepted && !call->is_score) {
      if (same_process && w.outstanding > 0) {
        // The worker's own queue is full: wait for one of its calls to end.
        w.full = true;
        pending_.push_front(call);
        retire = false;
      } else {
        // Refused by an idle worker: the group can never fit its pools.
        call->end = Call::End::kError;
        call->error = FromGrpc(status);
      }
    } else if (call->abort_requested) {
      call->end = Call::End::kAborted;
    } else {
      // The worker is gone (or the call broke): do not route to it until it
      // answers again or is replaced, and run the call again.
      if (same_process) {
        w.suspect = true;
        ++w.lost_calls;
      }
      RequeueLocked(call, FromGrpc(status), &actions);
      retire = false;
    }
    if (retire) RetireLocked(call, &actions);
    DispatchLocked(&actions);
  }
  Run(std::move(actions));
}

// ------------------------------------------------------------- Cancellation

void WorkerPool::CancelCall(uint64_t serial) {
  Actions actions;
  {
    rollout::MutexLock lock(&mu_);
    auto it = calls_.find(serial);
    if (it == calls_.end()) return;  // already finished
    std::shared_ptr<Call> call = it->second;
    if (call->cancelled || call->retired) return;
    call->cancelled = true;
    if (call->attempt != nullptr) {
      // The worker cancels the request in its engine; the attempt then ends
      // (OnAttemptEnd finishes the call).
      if (call->attempt->stream != nullptr) {
        actions.later.push_back(
            [stream = call->attempt->stream] { stream->Cancel(); });
      }
      if (call->attempt->score != nullptr) {
        actions.later.push_back(
            [unary = call->attempt->score] { unary->context.TryCancel(); });
      }
    } else {
      call->end = Call::End::kCancelled;
      RetireLocked(call, &actions);
    }
  }
  // Never on the caller's thread (CallHandle contract).
  deferred_->Schedule([this, actions = std::move(actions)]() mutable {
    Run(std::move(actions));
  });
}

void WorkerPool::SendCancels(int worker, uint64_t incarnation,
                             std::vector<std::string> ids, bool all) {
  std::shared_ptr<WorkerConnection> connection;
  {
    rollout::MutexLock lock(&mu_);
    const Worker& w = workers_[worker];
    if (w.incarnation != incarnation || w.connection == nullptr) return;
    connection = w.connection;
  }
  auto unary =
      std::make_shared<UnaryCall<wv1::CancelRequest, wv1::CancelResponse>>();
  for (std::string& id : ids) unary->request.add_request_ids(std::move(id));
  unary->request.set_all(all);
  unary->context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  in_flight_.Begin();
  connection->stub()->async()->Cancel(
      &unary->context, &unary->request, &unary->response,
      [this, unary](grpc::Status) { in_flight_.End(); });
}

// -------------------------------------------------------------------- Abort

void WorkerPool::Abort(const rollout::v1::AbortRequest& request,
                       Callback<rollout::v1::AbortResponse> done) {
  const bool all = request.target_case() == rollout::v1::AbortRequest::kAll;
  std::shared_ptr<AbortCollector> collector;
  Actions actions;
  // Per worker process: the attempt ids to abort there.
  std::map<std::pair<int, uint64_t>, std::vector<std::string>> cancels;
  {
    rollout::MutexLock lock(&mu_);
    std::vector<std::shared_ptr<Call>> targets;
    for (const auto& [serial, call] : calls_) {
      if (all || call->public_id == request.request_id()) {
        targets.push_back(call);
      }
    }
    if (!all && targets.empty()) {
      actions.later.push_back(
          [done = std::move(done), id = request.request_id()]() mutable {
            done(absl::NotFoundError(
                absl::StrCat("no running request has id \"", id, "\"")));
          });
      targets.clear();
    } else {
      collector = std::make_shared<AbortCollector>(
          [done = std::move(done)](rollout::v1::AbortResponse r) mutable {
            done(std::move(r));
          });
    }
    for (const std::shared_ptr<Call>& call : targets) {
      collector->Expect();
      call->abort_waiters.push_back(collector);
      if (call->abort_requested) continue;  // already being aborted
      call->abort_requested = true;
      const std::shared_ptr<Attempt>& attempt = call->attempt;
      if (attempt == nullptr) {
        call->end = Call::End::kAborted;  // nothing runs: end it here
        RetireLocked(call, &actions);
      } else if (call->is_score) {
        actions.later.push_back([unary = attempt->score] {
          if (unary != nullptr) unary->context.TryCancel();
        });
      } else if (attempt->accepted && !attempt->abort_sent) {
        attempt->abort_sent = true;
        cancels[{attempt->worker, attempt->incarnation}].push_back(attempt->id);
      }
      // Not accepted yet: the abort goes out with the accepted event.
    }
  }
  for (auto& [worker, ids] : cancels) {
    SendCancels(worker.first, worker.second, std::move(ids), false);
  }
  Run(std::move(actions));
  if (collector != nullptr) collector->Arm();
}

// ---------------------------------------------------------------- Finishing

void WorkerPool::FinishGenerate(Call& call) {
  const absl::Time now = absl::Now();
  absl::Status status;
  GenerateResponse response;
  {
    rollout::MutexLock lock(&call.out_mu);
    if (call.finished) return;
    call.finished = true;
    switch (call.end) {
      case Call::End::kResult: {
        const wv1::GroupDone& done = call.assembler.group_done();
        if (done.code() != 0) {
          status = absl::Status(static_cast<absl::StatusCode>(done.code()),
                                done.message());
        } else if (call.cancelled) {
          status = CancelledStatus(call.context);
        } else if (call.assembler.AnyEndedBy(wv1::ABORT_CAUSE_DEADLINE)) {
          status = absl::DeadlineExceededError(
              "deadline exceeded; the request was stopped in the engine");
        }
        break;
      }
      case Call::End::kError:
        status = call.error;
        break;
      case Call::End::kCancelled:
        status = CancelledStatus(call.context);
        break;
      case Call::End::kAborted:
        break;  // OK: ABORTED completions with what was produced
    }
    if (status.ok()) {
      response.set_request_id(call.public_id);
      for (auto& c : call.assembler.Completions()) {
        *response.add_completions() = std::move(c);
      }
      response.set_seed(call.generate->sampling().seed());
      response.set_replay_ssm_mode(call.generate->replay_ssm());
      auto* usage = response.mutable_usage();
      usage->set_prompt_tokens(call.generate->prompt_token_ids_size());
      usage->set_prompt_tokens_computed(
          call.assembler.group_done().prompt_tokens_computed());
      usage->set_completion_tokens(call.assembler.completion_tokens());
      auto* timing = response.mutable_timing();
      timing->set_queue_seconds(call.queue_seconds);
      if (call.first_token != absl::InfinitePast()) {
        timing->set_time_to_first_token_seconds(
            absl::ToDoubleSeconds(call.first_token - call.context.arrival));
      }
      timing->set_total_seconds(
          absl::ToDoubleSeconds(now - call.context.arrival));
      if (call.final_worker >= 0) {
        response.set_worker(absl::StrCat(call.final_worker));
      }
      if (call.stream) {
        GenerateStreamChunk last;
        last.set_request_id(call.public_id);
        if (call.end == Call::End::kAborted) {
          for (auto& d : call.assembler.AbortUnfinished()) {
            *last.add_deltas() = std::move(d);
          }
        }
        if (!call.first_chunk_sent) {
          call.first_chunk_sent = true;
          last.set_seed(response.seed());
          last.set_replay_ssm_mode(response.replay_ssm_mode());
        }
        last.set_done(true);
        *last.mutable_usage() = response.usage();
        *last.mutable_timing() = response.timing();
        last.set_worker(response.worker());
        call.sink->Write(std::move(last));
      }
      if (call.end == Call::End::kResult) {
        ObserveLatencies(call, response.timing(), call.assembler.Ends());
      }
    }
  }
  for (const auto& waiter : call.abort_waiters) {
    waiter->Add(call.public_id, status.ok()
                                    ? std::optional<GenerateResponse>(response)
                                    : std::nullopt);
  }
  call.abort_waiters.clear();
  if (status.ok()) {
    call.sink->Finish(std::move(response));
  } else {
    call.sink->Finish(status);
  }
}

void WorkerPool::FinishScore(Call& call) {
  const absl::Time now = absl::Now();
  absl::Status status;
  rollout::v1::ScoreResponse response;
  {
    rollout::MutexLock lock(&call.out_mu);
    if (call.finished) return;
    call.finished = true;
  }
  switch (call.end) {
    case Call::End::kResult: {
      const wv1::ScoreResult& r = *call.score_result;
      if (call.cancelled) {
        status = CancelledStatus(call.context);
      } else if (r.aborted()) {
        status = r.abort_cause() == wv1::ABORT_CAUSE_DEADLINE
                     ? absl::DeadlineExceededError(
                           "deadline exceeded; the request was stopped in "
                           "the engine")
                     : absl::AbortedError(
                           "Score aborted (Rollout.Abort or "
                           "Admin.Pause(ABORT))");
      }
      break;
    }
    case Call::End::kError:
      status = call.error;
      break;
    case Call::End::kCancelled:
      status = CancelledStatus(call.context);
      break;
    case Call::End::kAborted:
      status = absl::AbortedError(
          "Score aborted (Rollout.Abort or Admin.Pause(ABORT))");
      break;
  }
  if (status.ok()) {
    const wv1::ScoreResult& r = *call.score_result;
    response.set_request_id(call.public_id);
    for (const auto& c : r.completions()) *response.add_completions() = c;
    response.set_weight_version(r.weight_version());
    auto* usage = response.mutable_usage();
    usage->set_prompt_tokens(r.prompt_tokens());
    usage->set_prompt_tokens_computed(r.prompt_tokens_computed());
    usage->set_completion_tokens(r.scored_tokens());
    auto* timing = response.mutable_timing();
    timing->set_queue_seconds(call.queue_seconds);
    timing->set_total_seconds(
        absl::ToDoubleSeconds(now - call.context.arrival));
    if (call.final_worker >= 0) {
      response.set_worker(absl::StrCat(call.final_worker));
    }
  }
  for (const auto& waiter : call.abort_waiters) {
    waiter->Add(call.public_id, std::nullopt);
  }
  call.abort_waiters.clear();
  Callback<rollout::v1::ScoreResponse> done = std::move(call.score_done);
  if (status.ok()) {
    done(std::move(response));
  } else {
    done(status);
  }
}

}  // namespace rollout::server::workers
