#include "worker/engine/request.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace rollout::worker {

absl::string_view ReplayModeName(ReplayMode mode) {
  switch (mode) {
    case ReplayMode::kDefault:
      return "default";
    case ReplayMode::kOn:
      return "on";
    case ReplayMode::kOff:
      return "off";
    case ReplayMode::kAuto:
      return "auto";
  }
  return "unknown";
}

absl::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAborted:
      return "aborted";
  }
  return "unknown";
}

absl::string_view AbortCauseName(AbortCause cause) {
  switch (cause) {
    case AbortCause::kNone:
      return "none";
    case AbortCause::kCancelled:
      return "cancelled";
    case AbortCause::kDeadline:
      return "deadline";
    case AbortCause::kPaused:
      return "paused";
    case AbortCause::kShutdown:
      return "shutdown";
    case AbortCause::kInternal:
      return "internal";
  }
  return "unknown";
}

absl::string_view FallbackReasonName(FallbackReason reason) {
  switch (reason) {
    case FallbackReason::kNone:
      return "none";
    case FallbackReason::kNoGdnLayers:
      return "no_gdn_layers";
    case FallbackReason::kRingPoolExhausted:
      return "ring_pool_exhausted";
    case FallbackReason::kBackendUnsupported:
      return "backend_unsupported";
    case FallbackReason::kDisabledByConfig:
      return "disabled_by_config";
    case FallbackReason::kPrefillOnly:
      return "prefill_only";
  }
  return "unknown";
}

namespace {

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

absl::Status ValidateTokens(absl::string_view field,
                            const std::vector<int32_t>& tokens,
                            int vocab_size) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab_size) {
      return Invalid(field, absl::StrCat("token ", tokens[i], " at index ", i,
                                         " is outside [0, ", vocab_size, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateGroupRequest(const GroupRequest& r,
                                  const RequestLimits& limits) {
  if (r.prompt.empty()) return Invalid("prompt_token_ids", "empty");
  if (absl::Status s =
          ValidateTokens("prompt_token_ids", r.prompt, limits.vocab_size);
      !s.ok()) {
    return s;
  }
  if (r.n < 1 || r.n > limits.max_n) {
    return Invalid("n", absl::StrCat(r.n, " is outside [1, ", limits.max_n,
                                     "] (max_n = state slots)"));
  }
  const SamplingParams& s = r.sampling;
  if (!(s.temperature >= 0.0f) || !std::isfinite(s.temperature)) {
    return Invalid("sampling.temperature", "must be finite and >= 0");
  }
  if (s.top_k < 0) return Invalid("sampling.top_k", "must be >= 0");
  if (!(s.top_p > 0.0f && s.top_p <= 1.0f)) {
    return Invalid("sampling.top_p", "must be in (0, 1]");
  }
  if (!(s.min_p >= 0.0f && s.min_p <= 1.0f)) {
    return Invalid("sampling.min_p", "must be in [0, 1]");
  }
  if (s.max_tokens < 1) return Invalid("sampling.max_tokens", "must be >= 1");
  if (s.min_tokens < 0 || s.min_tokens > s.max_tokens) {
    return Invalid("sampling.min_tokens", "must be in [0, max_tokens]");
  }
  const int64_t total = static_cast<int64_t>(r.prompt.size()) +
                        static_cast<int64_t>(s.max_tokens);
  if (total > limits.max_model_len) {
    return Invalid("sampling.max_tokens",
                   absl::StrCat("prompt (", r.prompt.size(), ") + max_tokens (",
                                s.max_tokens, ") exceeds max_model_len ",
                                limits.max_model_len));
  }
  if (absl::Status st = ValidateTokens("sampling.stop_token_ids",
                                       s.stop_token_ids, limits.vocab_size);
      !st.ok()) {
    return st;
  }
  if (r.logprobs.top_k < 0 || r.logprobs.top_k > limits.max_top_logprobs) {
    return Invalid("logprobs.top_k",
                   absl::StrCat(r.logprobs.top_k, " is outside [0, ",
                                limits.max_top_logprobs, "]"));
  }
  if (r.min_weight_version < 0) {
    return Invalid("min_weight_version", "must be >= 0");
  }
  return absl::OkStatus();
}

absl::Status ValidateScoreRequest(const ScoreRequest& r,
                                  const RequestLimits& limits) {
  if (r.prompt.empty()) return Invalid("prompt_token_ids", "empty");
  if (absl::Status s =
          ValidateTokens("prompt_token_ids", r.prompt, limits.vocab_size);
      !s.ok()) {
    return s;
  }
  if (r.completions.empty() ||
      static_cast<int>(r.completions.size()) > limits.max_n) {
    return Invalid("completions",
                   absl::StrCat("count must be in [1, ", limits.max_n, "]"));
  }
  for (size_t i = 0; i < r.completions.size(); ++i) {
    const std::string field = absl::StrCat("completions[", i, "]");
    if (r.completions[i].empty()) return Invalid(field, "empty");
    if (absl::Status s =
            ValidateTokens(field, r.completions[i], limits.vocab_size);
        !s.ok()) {
      return s;
    }
    if (r.prompt.size() + r.completions[i].size() >
        static_cast<size_t>(limits.max_model_len)) {
      return Invalid(field, absl::StrCat("prompt + completion exceeds "
                                         "max_model_len ",
                                         limits.max_model_len));
    }
  }
  if (r.top_logprobs < 0 || r.top_logprobs > limits.max_top_logprobs) {
    return Invalid("top_logprobs",
                   absl::StrCat(r.top_logprobs, " is outside [0, ",
                                limits.max_top_logprobs, "]"));
  }
  if (r.min_weight_version < 0) {
    return Invalid("min_weight_version", "must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace rollout::worker
