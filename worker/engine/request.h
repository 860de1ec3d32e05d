// Request types of the rollout engine, independent of protobuf: the worker
// process (issue 5) maps rollout.v1 messages to and from these.
//
//   GroupRequest req;
//   req.request_id = "grpo-17";
//   req.prompt = {1, 2, 3};
//   req.n = 8;                          // one GRPO group: 8 completions
//   req.sampling.temperature = 1.0f;
//   req.sampling.seed = 42;             // reproducible: see sampler.h
//   req.replay_ssm = ReplayMode::kAuto;
//   RETURN_IF_ERROR(ValidateGroupRequest(req, limits));
#ifndef ROLLOUT_WORKER_ENGINE_REQUEST_H_
#define ROLLOUT_WORKER_ENGINE_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rollout::worker {

// ReplaySSM decode mode requested per group (gdn_replayssm.md section 4).
enum class ReplayMode {
  kDefault,  // the engine's configured default (EngineOptions::replay)
  kOn,       // ring path for every decode step; a failure is a counted
             // fallback
  kOff,      // plain decode (state read + written every step)
  kAuto,     // ring path only while the decode batch is large enough
};

// Why a completion ended.
enum class FinishReason {
  kStop,     // sampled a stop token id or EOS (the token is included)
  kLength,   // max_tokens reached, or the model's maximum length
  kAborted,  // see AbortCause; partial tokens are returned
};

// Why an aborted completion was aborted (kNone for other finish reasons).
enum class AbortCause {
  kNone,
  kCancelled,  // Cancel(request_id) or the result stream was dropped
  kDeadline,   // the request's deadline passed
  kPaused,     // Pause(kAbort)
  kShutdown,   // Shutdown(kAbort)
  kInternal,   // a backend error during a step the request was part of
};

// Why a requested ReplaySSM ON was not honoured (docs/METRICS.md: closed set,
// also the `fallback_reason` enum of the API).
enum class FallbackReason {
  kNone,
  kNoGdnLayers,         // the model has no GDN layers: nothing to replay
  kRingPoolExhausted,   // no free ring when the completion started decoding
  kBackendUnsupported,  // the backend has no ring path
  kDisabledByConfig,    // ReplaySSM disabled (or no rings) in the config
  kPrefillOnly,         // the completion ended before any decode step
};

absl::string_view ReplayModeName(ReplayMode mode);  // "default", "on", ...
absl::string_view FinishReasonName(FinishReason reason);  // "stop", ...
absl::string_view AbortCauseName(AbortCause cause);  // "none", "cancelled"...
absl::string_view FallbackReasonName(FallbackReason reason);  // "none", ...

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy (argmax; ties -> lowest id)
  int top_k = 0;             // keep the k most likely tokens; 0 = all
  float top_p = 1.0f;        // nucleus mass in (0, 1]; 1 = all
  float min_p = 0.0f;        // keep p >= min_p * p_max; in [0, 1]; 0 = all
  int max_tokens = 16;       // >= 1 sampled tokens at most
  int min_tokens = 0;        // stop ids and EOS are masked before this many
  std::vector<int32_t> stop_token_ids;  // end the completion (included)
  bool ignore_eos = false;              // EOS neither stops nor is masked
  // Keys the random stream with the completion index and step. Unset: the
  // engine picks one and reports it on the completion.
  std::optional<uint64_t> seed;
};

// Logprobs are always of the RAW model distribution: the fp32 log-softmax of
// the logits before temperature, top-k/top-p/min-p and min_tokens masking.
struct LogprobOptions {
  bool sampled = true;  // logprob of each sampled token
  int top_k = 0;        // also the top-k (by raw logit) tokens per position
};

// One GRPO group: n completions of one prompt, prefilled once.
struct GroupRequest {
  std::string request_id;  // unique among live requests; "" = engine assigns
  std::vector<int32_t> prompt;
  int n = 1;
  SamplingParams sampling;
  LogprobOptions logprobs;
  ReplayMode replay_ssm = ReplayMode::kDefault;
  absl::Time deadline = absl::InfiniteFuture();  // then aborted (kDeadline)
  int64_t min_weight_version = 0;  // not admitted before this version serves
  bool stream_deltas = true;       // token deltas as they are sampled
};

// Teacher-forced logprobs of given completions of one prompt (Score). The
// prompt is prefilled once and forked, like a group.
struct ScoreRequest {
  std::string request_id;
  std::vector<int32_t> prompt;
  std::vector<std::vector<int32_t>> completions;  // each non-empty
  int top_logprobs = 0;
  absl::Time deadline = absl::InfiniteFuture();
  int64_t min_weight_version = 0;  // as GroupRequest
};

// What a request may ask for, from the model and the engine's options.
struct RequestLimits {
  int vocab_size = 0;
  int max_model_len = 0;  // prompt + completion tokens
  int max_n = 0;          // completions per group (= state slots)
  int max_top_logprobs = 0;
};

// INVALID_ARGUMENT naming the offending field, or OK.
absl::Status ValidateGroupRequest(const GroupRequest& request,
                                  const RequestLimits& limits);
absl::Status ValidateScoreRequest(const ScoreRequest& request,
                                  const RequestLimits& limits);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_REQUEST_H_
