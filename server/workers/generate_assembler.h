// GenerateAssembler: turns the worker's Generate events of one call into what
// the client gets, across re-runs.
//
// A call may run more than once: when its worker dies, rolloutd re-runs it
// from scratch (same request, same seed) on another or the restarted worker.
// Seeded generation is deterministic, so a re-run produces the same tokens:
//  - unary Generate keeps only the last attempt's output;
//  - GenerateStream has already sent a prefix of each completion: the re-run's
//    tokens are checked against that prefix (never re-sent) and only what
//    comes after it is forwarded. A re-run that contradicts a token already
//    sent is an INTERNAL error (it means the weights changed in between, or
//    generation is not deterministic): the client must not get two versions.
//
//   GenerateAssembler a(n, /*stream=*/true);
//   ASSIGN_OR_RETURN(auto deltas, a.Apply(event));   // send these
//   ... worker died ...
//   a.StartAttempt();                                 // re-run begins
//
// Not thread-safe: the owner serialises calls (one call's events arrive one
// at a time).
#ifndef ROLLOUT_SERVER_WORKERS_GENERATE_ASSEMBLER_H_
#define ROLLOUT_SERVER_WORKERS_GENERATE_ASSEMBLER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "rollout/v1/rollout.pb.h"
#include "rollout/worker/v1/worker.pb.h"

namespace rollout::server::workers {

class GenerateAssembler {
 public:
  GenerateAssembler(int n, bool stream);

  // A new attempt starts: its events count positions from 0 again.
  void StartAttempt();

  // Applies one event of the current attempt. Stream: the deltas to send now
  // (new tokens, completion ends; possibly none). Unary: always empty.
  // INTERNAL when the event is inconsistent or contradicts what was sent.
  absl::StatusOr<std::vector<rollout::v1::CompletionDelta>> Apply(
      const rollout::worker::v1::GenerateEvent& event);

  // The current attempt delivered its `done` event.
  bool done() const { return done_; }
  const rollout::worker::v1::GroupDone& group_done() const {
    return group_done_;
  }

  // The final completions, in index order: the last attempt's (unary), or
  // the tokens sent so far (stream: token ids only; the logprobs went out
  // with the deltas). Unfinished completions are ABORTED.
  std::vector<rollout::v1::Completion> Completions() const;

  // Stream: end deltas (ABORTED) for every completion whose end was not sent
  // yet (a call aborted while no worker runs it).
  std::vector<rollout::v1::CompletionDelta> AbortUnfinished();

  // Some completion of the current attempt ended with this cause.
  bool AnyEndedBy(rollout::worker::v1::AbortCause cause) const;

  // Completion ends of the current attempt (for per-completion metrics).
  std::vector<rollout::worker::v1::CompletionEnd> Ends() const;

  // Sampled tokens: of the last attempt (unary) or sent (stream).
  int64_t completion_tokens() const;

 private:
  struct Slot {
    // Stream: token ids sent to the client, kept to check re-runs.
    std::vector<int32_t> sent;
    bool end_sent = false;
    // Current attempt.
    int received = 0;
    bool ended = false;
    rollout::worker::v1::CompletionEnd end;
    // Unary: the current attempt's output.
    rollout::v1::Completion output;
  };

  const bool stream_;
  std::vector<Slot> slots_;
  bool done_ = false;
  rollout::worker::v1::GroupDone group_done_;
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_GENERATE_ASSEMBLER_H_
