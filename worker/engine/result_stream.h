// The per-request result stream between the engine thread (producer) and a
// caller (consumer).
//
// Order: for each completion, its deltas then its CompletionResult; after all
// completions, one GroupSummary, then the stream is done. Deltas of one
// completion that the reader has not taken yet are merged, so buffering is
// bounded by the request's own output however slow the reader is.
//
// Threading: every method is thread-safe. The listener (if set) runs on the
// producer's thread (the engine thread) after new events arrive: it must not
// block (e.g. it schedules a gRPC write); it may call TryPop. It can still be
// running after the consumer has popped the GroupSummary, so what it captures
// must outlive the stream's producer (reset it with SetListener(nullptr) and
// make the listener tolerate a late call, or stop the executor first).
//
//   std::unique_ptr<ResultStream> s = ...;  // from Executor::Enqueue
//   while (true) {
//     absl::StatusOr<StreamEvent> ev = s->Next(absl::Seconds(1));
//     if (absl::IsOutOfRange(ev.status())) break;      // done
//     if (absl::IsDeadlineExceeded(ev.status())) continue;  // no event yet
//     ...
//   }
// Destroying an unfinished ResultStream cancels its request.
#ifndef ROLLOUT_WORKER_ENGINE_RESULT_STREAM_H_
#define ROLLOUT_WORKER_ENGINE_RESULT_STREAM_H_

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "worker/engine/result.h"

namespace rollout::worker {

// Shared state of one stream. The engine pushes; ResultStream pops.
class ResultChannel {
 public:
  ResultChannel(std::string request_id, int num_completions);

  const std::string& request_id() const { return request_id_; }

  // Producer side (engine thread).
  void PushDelta(TokenDelta delta) ABSL_LOCKS_EXCLUDED(mu_);
  void PushCompletion(CompletionResult result) ABSL_LOCKS_EXCLUDED(mu_);
  void PushGroupDone(GroupSummary summary) ABSL_LOCKS_EXCLUDED(mu_);

  // Consumer side.
  std::optional<StreamEvent> TryPop() ABSL_LOCKS_EXCLUDED(mu_);
  // The next event; DEADLINE_EXCEEDED after `timeout` without one;
  // OUT_OF_RANGE once the GroupSummary has been taken.
  absl::StatusOr<StreamEvent> Next(absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool done() const ABSL_LOCKS_EXCLUDED(mu_);  // summary taken
  // Tokens pushed but not yet popped (deltas and finals): lets a server
  // detect a reader that does not keep up and cancel it.
  int64_t buffered_tokens() const ABSL_LOCKS_EXCLUDED(mu_);
  bool closed() const ABSL_LOCKS_EXCLUDED(mu_);  // summary pushed
  void SetListener(std::function<void()> listener) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Kind { kDelta, kCompletion, kSummary };
  struct Entry {
    Kind kind;
    int completion_index;
  };
  std::optional<StreamEvent> PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);

  const std::string request_id_;
  mutable Mutex mu_;
  std::deque<Entry> order_ ABSL_GUARDED_BY(mu_);
  // Pending (not yet popped) delta per completion; has_delta_ marks whether
  // an Entry for it is queued.
  std::vector<TokenDelta> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> has_delta_ ABSL_GUARDED_BY(mu_);
  std::deque<CompletionResult> completions_ ABSL_GUARDED_BY(mu_);
  std::optional<GroupSummary> summary_ ABSL_GUARDED_BY(mu_);
  int64_t buffered_tokens_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<std::function<void()>> listener_ ABSL_GUARDED_BY(mu_);
};

// The caller's handle. Move-only; cancels the request when destroyed before
// the stream is done.
class ResultStream {
 public:
  ResultStream(std::shared_ptr<ResultChannel> channel,
               std::function<void()> cancel);
  ~ResultStream();
  ResultStream(const ResultStream&) = delete;
  ResultStream& operator=(const ResultStream&) = delete;

  const std::string& request_id() const { return channel_->request_id(); }
  absl::StatusOr<StreamEvent> Next(absl::Duration timeout) {
    return channel_->Next(timeout);
  }
  std::optional<StreamEvent> TryPop() { return channel_->TryPop(); }
  bool done() const { return channel_->done(); }
  int64_t buffered_tokens() const { return channel_->buffered_tokens(); }
  void SetListener(std::function<void()> listener) {
    channel_->SetListener(std::move(listener));
  }
  // Requests cancellation (completions end kAborted/kCancelled with their
  // partial tokens; the stream still delivers them and the summary).
  void Cancel();

 private:
  std::shared_ptr<ResultChannel> channel_;
  std::function<void()> cancel_;
};

// Convenience for tests and unary callers: drains a stream until done.
struct CollectedResults {
  std::vector<TokenDelta> deltas;
  std::vector<CompletionResult> completions;  // sorted by completion_index
  GroupSummary summary;
};
absl::StatusOr<CollectedResults> CollectAll(ResultStream& stream,
                                            absl::Duration timeout);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_RESULT_STREAM_H_
