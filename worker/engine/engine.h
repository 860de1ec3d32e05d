// The rollout engine core: one object, driven by one thread, that turns GRPO
// groups into batched model steps (DESIGN.md section 5).
//
// Each Step(): expire deadlines, ask the scheduler (scheduler.h) for the next
// step, apply it (preempt = flush + ExportState, swap in = ImportState, admit
// = reserve n state slots + the prompt's KV blocks), copy-on-write shared KV
// blocks, choose each decode row's ReplaySSM path and cursor
// (replay_cursor.h), run Backend::Forward over the mixed batch, then sample
// (sampler.h), fork finished prompts into their n completions, stream deltas
// and finish completions.
//
// GRPO groups: the prompt is prefilled once in completion 0's slot; then
// CopyState copies the GDN/conv state into the other n-1 slots, the prompt's
// KV blocks are shared (reference counted; the partially filled last block is
// copied on the first write), and all n completions sample their first token
// from the same prompt logits with their own random keys.
//
// Threading: NOT thread-safe. One thread (the executor's engine thread) owns
// the Engine and its Backend and calls every method. Results leave through
// the ResultChannels given to Submit (thread-safe).
//
// Tests drive it synchronously:
//   ASSIGN_OR_RETURN(auto engine, Engine::Create(std::move(backend), opts));
//   auto ch = std::make_shared<ResultChannel>("r", n);
//   RETURN_IF_ERROR(engine->Submit(request, ch));
//   while (engine->HasWork()) RETURN_IF_ERROR(engine->Step());
#ifndef ROLLOUT_WORKER_ENGINE_ENGINE_H_
#define ROLLOUT_WORKER_ENGINE_ENGINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "model/backend.h"
#include "worker/engine/engine_options.h"
#include "worker/engine/index_pool.h"
#include "worker/engine/replay_cursor.h"
#include "worker/engine/request.h"
#include "worker/engine/result_stream.h"
#include "worker/engine/scheduler.h"
#include "worker/engine/stats.h"

namespace rollout::worker {

// What Pause does to requests in flight (the API documents the same):
enum class PauseMode {
  // Admitted groups end now: every unfinished completion is returned with
  // finish_reason ABORTED (cause kPaused) and its partial tokens. Groups not
  // yet admitted stay queued and start after Resume.
  kAbort,
  // Nothing new is admitted; admitted groups run to completion. The pause is
  // settled when no admitted group remains.
  kWait,
  // Freeze: no step runs; every request keeps its state, slots and partial
  // output and continues after Resume (e.g. across UpdateWeights, recorded in
  // each completion's weight_versions).
  kKeep,
};

// One row of a step, for tests and debugging (EngineOptions has no hook: see
// Engine::set_step_observer).
struct StepTraceRow {
  std::string request_id;
  int completion_index = 0;
  int start = 0;
  int len = 0;
  bool decode = false;
  int ring_slot = -1;  // >= 0: ring path
  int write_pos = 0;
  bool flush = false;
};

struct StepTrace {
  uint64_t step = 0;
  int decode_rows = 0;
  std::vector<StepTraceRow> rows;
  std::vector<std::pair<std::string, int>> preempted;  // (request, index)
};

class Engine {
 public:
  using Clock = std::function<absl::Time()>;

  // Sizes and initialises the backend's pools from `options`. `clock`
  // defaults to absl::Now (tests inject one for deadlines and timings).
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      std::unique_ptr<model::Backend> backend, EngineOptions options,
      Clock clock = nullptr);
  ~Engine();

  const model::ModelInfo& model_info() const { return backend_->info(); }
  model::BackendCapabilities capabilities() const {
    return backend_->capabilities();
  }
  const PoolPlan& pool_plan() const { return plan_; }
  // The options in effect (Reconfigure changes the replay tuning fields).
  const EngineOptions& options() const { return options_; }
  absl::Status Reconfigure(const EngineReconfig& change);
  RequestLimits limits() const;

  // Validates (INVALID_ARGUMENT naming the field; ALREADY_EXISTS for a live
  // request id; RESOURCE_EXHAUSTED when the waiting queue is full or the
  // group can never fit the pools) and queues. Results go to `channel`, which
  // must have been made for n completions (Score: one per completion).
  absl::Status Submit(GroupRequest request,
                      std::shared_ptr<ResultChannel> channel);
  absl::Status SubmitScore(ScoreRequest request,
                           std::shared_ptr<ResultChannel> channel);

  // Ends every unfinished completion of the request (ABORTED, `cause`, with
  // partial tokens) and frees its slots now. NOT_FOUND if not live.
  absl::Status Cancel(absl::string_view request_id,
                      AbortCause cause = AbortCause::kCancelled);
  // Aborts every live request (queued ones too), e.g. at shutdown.
  void AbortAll(AbortCause cause);

  void Pause(PauseMode mode);
  void Resume();
  std::optional<PauseMode> paused() const { return pause_; }
  // The requested pause has taken full effect (kWait: nothing admitted left).
  bool PauseSettled() const;

  // Loads a checkpoint of the same architecture between steps. On success the
  // weight version becomes `version` (which must exceed the current one) or
  // current + 1; on failure the old weights keep serving, the version is
  // unchanged and the error says why.
  absl::Status UpdateWeights(const std::string& path,
                             std::optional<int64_t> version = std::nullopt);
  int64_t weight_version() const { return weight_version_; }

  // Runs one engine step (possibly empty). Backend errors abort the requests
  // of the failed step (cause kInternal, summary status INTERNAL) and are
  // counted; the engine keeps serving. A non-OK return means an engine bug.
  absl::Status Step();
  // Whether Step() would do something now.
  bool HasWork() const;
  // No live request at all.
  bool Idle() const { return groups_.empty(); }
  // The earliest deadline of a live request (InfiniteFuture if none).
  absl::Time NextDeadline() const;

  EngineStats stats() const;
  void set_step_observer(std::function<void(const StepTrace&)> observer) {
    observer_ = std::move(observer);
  }
  // Called (on the engine thread) with the request id when a request ends,
  // just before its GroupSummary is pushed.
  void set_group_done_observer(std::function<void(const std::string&)> f) {
    group_done_observer_ = std::move(f);
  }
  // Called (on the engine thread) with the request id when a request is
  // admitted for the first time (it stops counting as waiting).
  void set_admission_observer(std::function<void(const std::string&)> f) {
    admission_observer_ = std::move(f);
  }

 private:
  struct Group;
  struct Sequence;

  Engine(std::unique_ptr<model::Backend> backend, EngineOptions options,
         PoolPlan plan, Clock clock);

  absl::Status SubmitGroup(std::unique_ptr<Group> group);
  int NumTokens(const Sequence& s) const;
  SchedulerInput BuildInput() const;
  void ExpireDeadlines(absl::Time now);
  void Preempt(Sequence* s);
  absl::Status SwapIn(Sequence* s);
  absl::Status Admit(Group* g);
  absl::Status PrepareRowBlocks(Sequence* s, const ScheduledRow& row);
  model::ReplayRow DecideReplay(Sequence* s, int decode_rows, RowDecision* d);
  absl::Status EnsureFlushed(Sequence* s);
  absl::Status Fork(Group* g, absl::Span<const float> logits);
  void SampleNext(Sequence* s, absl::Span<const float> logits, bool ring);
  void ScoreRows(Sequence* s, int start, absl::Span<const float> logits,
                 int count);
  void Append(Sequence* s, int32_t token, float logprob,
              std::vector<TopLogprob> top, bool ring);
  void Finish(Sequence* s, FinishReason reason, AbortCause cause,
              int32_t stop_token = -1);
  void AbortGroup(Group* g, AbortCause cause,
                  const absl::Status& status = absl::OkStatus());
  void ReleaseResources(Sequence* s);
  void FinishGroup(Group* g);
  void ReapGroups();
  void RemoveWaiting(Group* g);
  void InsertWaiting(Group* g);

  std::unique_ptr<model::Backend> backend_;
  EngineOptions options_;
  const PoolPlan plan_;
  Clock clock_;
  SchedulerConfig sched_cfg_;
  FallbackReason static_fallback_;
  std::vector<int32_t> eos_ids_;

  IndexPool slots_;
  IndexPool rings_;
  IndexPool kv_;

  int64_t next_group_id_ = 1;
  int64_t next_seq_id_ = 1;
  std::map<int64_t, std::unique_ptr<Group>> groups_;  // live, by id
  std::unordered_map<std::string, Group*> by_request_id_;
  std::vector<Group*> waiting_;  // not admitted, by id (= arrival order)
  std::map<int64_t, Sequence*> live_seqs_;  // running or swapped, by id
  std::vector<Group*> finished_groups_;     // reaped after the step

  std::optional<PauseMode> pause_;
  int64_t weight_version_ = 0;
  absl::BitGen seed_gen_;
  EngineStats stats_;
  std::function<void(const StepTrace&)> observer_;
  std::function<void(const std::string&)> group_done_observer_;
  std::function<void(const std::string&)> admission_observer_;
};

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_ENGINE_H_
