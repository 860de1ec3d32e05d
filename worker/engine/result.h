// What the engine returns for a request: per completion a stream of token
// deltas and one final record, then one group summary (result_stream.h
// delivers them in that order).
#ifndef ROLLOUT_WORKER_ENGINE_RESULT_H_
#define ROLLOUT_WORKER_ENGINE_RESULT_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "worker/engine/request.h"

namespace rollout::worker {

struct TopLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;  // raw fp32 log-softmax, like the sampled logprob
};

// Tokens sampled since the previous delta of the same completion (a slow
// reader gets them merged into one delta: buffering stays bounded by the
// request's own output).
struct TokenDelta {
  int completion_index = 0;
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;  // empty unless LogprobOptions::sampled
  std::vector<std::vector<TopLogprob>> top_logprobs;  // empty unless top_k > 0
};

// The weight version under which tokens [first_token, next span's first_token)
// were sampled. A completion generated across an UpdateWeights has several.
struct WeightVersionSpan {
  int64_t version = 0;
  int first_token = 0;
};

struct ReplaySsmReport {
  ReplayMode requested = ReplayMode::kDefault;
  ReplayMode effective = ReplayMode::kOff;  // kDefault resolved by config
  bool applied = false;  // at least one decode step went through the ring
  FallbackReason fallback = FallbackReason::kNone;  // only for effective kOn
  int ring_steps = 0;   // decode steps on the ring path
  int plain_steps = 0;  // decode steps on the plain path
  int flushes = 0;      // checkpoint writes of this completion's ring
};

// Final record of one completion. token_ids/logprobs hold the whole
// completion (deltas are a convenience for streaming).
struct CompletionResult {
  int completion_index = 0;
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;
  std::vector<std::vector<TopLogprob>> top_logprobs;
  FinishReason finish_reason = FinishReason::kLength;
  AbortCause abort_cause = AbortCause::kNone;
  int32_t stop_token_id = -1;  // the stop/EOS id that ended it (kStop)
  std::vector<WeightVersionSpan> weight_versions;  // in token order
  ReplaySsmReport replay_ssm;
  int num_preemptions = 0;
  uint64_t seed = 0;      // the seed the sampler used (requested or assigned)
  bool is_score = false;  // a Score completion: token_ids are the given ones
  absl::Duration time_to_first_token = absl::ZeroDuration();
  absl::Duration e2e = absl::ZeroDuration();  // arrival -> this final
};

// Last event of a request.
struct GroupSummary {
  std::string request_id;
  absl::Status status;    // OK unless the engine failed (then INTERNAL)
  int prompt_tokens = 0;  // prompt length
  int prompt_tokens_computed = 0;  // prefilled (once per group, not n times)
  int completion_tokens = 0;       // sum over completions
  int64_t prefill_weight_version = 0;
  absl::Duration queue_time = absl::ZeroDuration();  // arrival -> admission
  absl::Duration e2e = absl::ZeroDuration();
};

using StreamEvent = std::variant<TokenDelta, CompletionResult, GroupSummary>;

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_RESULT_H_
