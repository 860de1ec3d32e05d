// The rollout executor: the engine's public, thread-safe face (shaped like
// TensorRT-LLM's Executor and llama.cpp's server queue). The worker process
// (issue 5) wraps it in its gRPC service.
//
// Threading contract:
//  - One engine thread, started by Create, owns the Engine and the Backend
//    and runs the loop: take commands from the inbox, run one engine step,
//    publish stats. It sleeps (no polling) while there is no work, waking on
//    a command or the next request deadline.
//  - Every public method is thread-safe and returns quickly: requests and
//    commands are validated on the caller's thread against immutable limits
//    and posted to the inbox. The only blocking calls are the explicitly
//    blocking wrappers (Pause with a timeout, UpdateWeights, Shutdown); each
//    has an async form whose callback runs on the engine thread (it must not
//    block).
//  - Results flow through one ResultStream per request (result_stream.h):
//    per completion token deltas then a CompletionResult, then one
//    GroupSummary. Dropping the stream cancels the request.
//
//   ASSIGN_OR_RETURN(auto exec, Executor::Create(std::move(backend), opts));
//   ASSIGN_OR_RETURN(auto stream, exec->Enqueue(request));
//   ASSIGN_OR_RETURN(CollectedResults all,
//                    CollectAll(*stream, absl::Minutes(5)));
#ifndef ROLLOUT_WORKER_ENGINE_EXECUTOR_H_
#define ROLLOUT_WORKER_ENGINE_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "model/backend.h"
#include "worker/engine/engine.h"
#include "worker/engine/engine_options.h"
#include "worker/engine/request.h"
#include "worker/engine/result_stream.h"
#include "worker/engine/stats.h"

namespace rollout::worker {

enum class ShutdownMode {
  kDrain,  // stop accepting; finish every request (queued ones too; a pause
           // is lifted); then stop
  kAbort,  // stop accepting; abort everything (cause kShutdown) and stop
};

// What GetServerInfo needs; immutable for the executor's life.
struct ExecutorInfo {
  model::ModelInfo model;
  model::BackendCapabilities capabilities;
  RequestLimits limits;
  PoolPlan pools;
  ReplaySsmOptions replay;
  // Requests queued but not yet admitted; Enqueue beyond: RESOURCE_EXHAUSTED.
  int max_waiting_requests = 0;
};

class Executor {
 public:
  // Sizes the pools (fails like Engine::Create) and starts the engine thread.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(
      std::unique_ptr<model::Backend> backend, EngineOptions options,
      Engine::Clock clock = nullptr);
  ~Executor();  // Shutdown(kAbort)
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const ExecutorInfo& info() const;

  // Queues a GRPO group. Errors (nothing queued): INVALID_ARGUMENT naming
  // the field, ALREADY_EXISTS (request id live), RESOURCE_EXHAUSTED (the
  // waiting queue is full, or the group can never fit the pools), UNAVAILABLE
  // (shutting down). An empty request_id gets "auto-<n>".
  absl::StatusOr<std::unique_ptr<ResultStream>> Enqueue(GroupRequest request);
  // Teacher-forced logprobs (Score); results arrive like a group's, one
  // CompletionResult (is_score) per given completion.
  absl::StatusOr<std::unique_ptr<ResultStream>> EnqueueScore(
      ScoreRequest request);

  // Aborts a live request (its completions end ABORTED/kCancelled with their
  // partial tokens, within one engine step). NOT_FOUND if not live.
  absl::Status Cancel(const std::string& request_id);
  // Aborts every live request (cause kCancelled).
  void CancelAll();

  // Pause (PauseMode in engine.h). `done` runs on the engine thread once the
  // pause has settled (kWait: no admitted request left), or with ABORTED if
  // Resume came first, or CANCELLED at shutdown. A new Pause replaces the
  // mode.
  void PauseAsync(PauseMode mode, std::function<void(absl::Status)> done);
  // Blocks up to `timeout` for the pause to settle: DEADLINE_EXCEEDED if not
  // yet (the pause stays in effect).
  absl::Status Pause(PauseMode mode, absl::Duration timeout);
  void Resume();

  // Loads a checkpoint between engine steps (Engine::UpdateWeights). `done`
  // runs on the engine thread with the result. The blocking form waits for
  // it (a load takes as long as reading the checkpoint).
  void UpdateWeightsAsync(std::string path, std::optional<int64_t> version,
                          std::function<void(absl::Status)> done);
  absl::Status UpdateWeights(std::string path,
                             std::optional<int64_t> version = std::nullopt);

  // Applies hot option changes between engine steps (config reload); `done`
  // runs on the engine thread.
  void ReconfigureAsync(EngineReconfig change,
                        std::function<void(absl::Status)> done);

  // A snapshot taken after the latest engine step (plus live gauges).
  EngineStats Stats() const;

  // Stops the engine thread (see ShutdownMode) and waits for it. Idempotent.
  void Shutdown(ShutdownMode mode);

 private:
  class Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_EXECUTOR_H_
