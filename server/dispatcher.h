// Dispatcher: where rolloutd sends validated, admitted work. The gRPC services
// are written against this interface only.
//
// Implementations:
//   NoWorkerDispatcher  no workers (this build): Generate/Score answer
//                       UNAVAILABLE "no worker is serving".
//   (issue 5)           the worker pool: starts and supervises rollout-worker
//                       processes, routes each group to the least-loaded one,
//                       streams results back, re-runs work of a dead worker.
//
// Threading contract (the gRPC handlers must never block):
//  - Every method returns promptly; work completes later through the sink or
//    the callback, on any thread. Callbacks and sinks must not block either.
//  - A sink/callback may be invoked before the method that received it
//    returns (e.g. an immediate error).
//  - State() and Model() are cheap, non-blocking snapshots (health checks and
//    GetServerInfo call them often).
//
// Requests arrive validated and resolved (ResolveGenerateRequest): every
// SamplingParams field set, replay_ssm is ON/OFF/AUTO, request_id and seed set.
// The dispatcher still owns the checks only it can make: min_weight_version
// (FAILED_PRECONDITION), model-specific limits when the front end did not know
// the model yet (INVALID_ARGUMENT naming the field).
#ifndef ROLLOUT_SERVER_DISPATCHER_H_
#define ROLLOUT_SERVER_DISPATCHER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rollout/v1/admin.pb.h"
#include "rollout/v1/rollout.pb.h"
#include "server/config/config_manager.h"

namespace rollout::server {

// What rolloutd knows about one call when it hands it over.
struct CallContext {
  absl::Time arrival = absl::Now();  // for Timing and latency metrics
  absl::Time deadline = absl::InfiniteFuture();
  // The config in effect when the call was admitted (a reload during the
  // call does not change it).
  std::shared_ptr<const ConfigSnapshot> config;
};

// Receives the results of one Generate or GenerateStream call.
// The dispatcher calls Write zero or more times (streaming calls only), then
// Finish exactly once; never two calls at the same time, never after Finish.
// Neither blocks: the sink buffers what the client has not read yet.
class GenerateSink {
 public:
  virtual ~GenerateSink() = default;
  // Streaming only: the next chunk, in order. The last chunk (done = true)
  // carries usage and timing.
  virtual void Write(rollout::v1::GenerateStreamChunk chunk) = 0;
  // OK: a unary call's complete response (ignored for a stream: everything
  // went through Write). An abort is OK with ABORTED completions, not an
  // error. Error: the call fails with that status.
  virtual void Finish(absl::StatusOr<rollout::v1::GenerateResponse> result) = 0;
};

// Handle of a dispatched call, owned by the caller.
class CallHandle {
 public:
  virtual ~CallHandle() = default;
  // Stops the call's work (client cancelled, deadline passed, client too
  // slow): the engine frees its slots, and the dispatcher finishes the call
  // promptly (CANCELLED). Any thread, any time, also after the call finished
  // (then a no-op). Must not block, and must not invoke the call's sink or
  // callback inline (the caller may hold a lock): finish it from another
  // thread.
  virtual void Cancel() = 0;
};

template <typename T>
using Callback = absl::AnyInvocable<void(absl::StatusOr<T>)>;

// A cheap snapshot for health, metrics and GetServerInfo.
struct DispatcherState {
  int ready_workers = 0;
  std::vector<rollout::v1::WorkerInfo> workers;
  // Lowest weight version over ready workers (0: none ready).
  uint64_t weight_version = 0;
  // Groups running on workers (the progress watchdog looks at these).
  int64_t requests_running = 0;
  // When any worker last produced a token (InfinitePast: never).
  absl::Time last_token_time = absl::InfinitePast();
  // A ready worker can decode on the ReplaySSM ring.
  bool replay_ssm_available = false;
  // Backends of the workers: "cpu", "cuda", "cpu+cuda"; "none" without any.
  std::string backend = "none";
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;

  // One GRPO group. `stream`: results go through sink->Write (GenerateStream);
  // otherwise the complete response through sink->Finish (Generate).
  virtual std::unique_ptr<CallHandle> Generate(
      std::shared_ptr<const rollout::v1::GenerateRequest> request, bool stream,
      const CallContext& context, GenerateSink* sink) = 0;

  virtual std::unique_ptr<CallHandle> Score(
      std::shared_ptr<const rollout::v1::ScoreRequest> request,
      const CallContext& context,
      Callback<rollout::v1::ScoreResponse> done) = 0;

  // NOT_FOUND for an unknown request_id.
  virtual void Abort(const rollout::v1::AbortRequest& request,
                     Callback<rollout::v1::AbortResponse> done) = 0;

  // The front end has already stopped admitting new work when this is called
  // (and resumes admitting after Resume's callback).
  virtual void Pause(rollout::v1::PauseMode mode, absl::Time deadline,
                     Callback<rollout::v1::PauseResponse> done) = 0;
  virtual void Resume(Callback<rollout::v1::ResumeResponse> done) = 0;

  // `request.path` is already confined to the model roots and canonical
  // (realpath), so equal strings name the same checkpoint. An explicit
  // version equal to the serving one with the serving path is a retry of an
  // update that succeeded: OK, the version unchanged, nothing loaded.
  virtual void UpdateWeights(
      const rollout::v1::UpdateWeightsRequest& request, absl::Time deadline,
      Callback<rollout::v1::UpdateWeightsResponse> done) = 0;

  // A reload applied a new config (hot fields changed). Forward what workers
  // need (e.g. replay_ssm.auto_min_batch_size) between engine steps.
  virtual void ApplyConfig(std::shared_ptr<const ConfigSnapshot> config) = 0;

  virtual DispatcherState State() const = 0;

  // The served model as the workers loaded it; null until one is ready.
  virtual std::shared_ptr<const rollout::v1::ModelInfo> Model() const = 0;

  // Stops everything: running calls end (CANCELLED after `deadline`), workers
  // exit. Blocking; called once, off the gRPC threads, at shutdown.
  virtual void Shutdown(absl::Time deadline) = 0;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_DISPATCHER_H_
