#include "server/request_validator.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/repeated_field.h"
#include "server/field_error.h"

namespace rollout::server {
namespace {

using google::protobuf::RepeatedField;

constexpr int kMaxRequestIdLength = 256;

absl::Status CheckRequestId(const std::string& id) {
  if (id.size() > kMaxRequestIdLength) {
    return InvalidFieldError(
        "request_id", absl::StrCat("must be at most ", kMaxRequestIdLength,
                                   " characters, got ", id.size()));
  }
  for (size_t i = 0; i < id.size(); ++i) {
    if (id[i] < ' ' || id[i] > '~') {
      return InvalidFieldError(
          "request_id",
          absl::StrCat("must be printable ASCII; character ", i, " is not"));
    }
  }
  return absl::OkStatus();
}

// Every id in [0, vocab) when the vocabulary is known.
absl::Status CheckTokenIds(const char* field, const RepeatedField<int32_t>& ids,
                           const RequestLimits& limits,
                           absl::string_view entry_prefix = "entry ") {
  for (int i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (id < 0 || (limits.vocab_size > 0 && id >= limits.vocab_size)) {
      return InvalidFieldError(
          field,
          limits.vocab_size > 0
              ? absl::StrCat(entry_prefix, i, " must be in [0, ",
                             limits.vocab_size,
                             ") (the model's vocabulary), got ", id)
              : absl::StrCat(entry_prefix, i, " must be >= 0, got ", id));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPrompt(const RepeatedField<int32_t>& prompt,
                         const RequestLimits& limits) {
  if (prompt.empty()) {
    return InvalidFieldError(
        "prompt_token_ids",
        absl::StrCat("must not be empty (1 to ", limits.max_prompt_tokens,
                     " token ids)"));
  }
  if (prompt.size() > limits.max_prompt_tokens) {
    return InvalidFieldError(
        "prompt_token_ids",
        absl::StrCat("at most ", limits.max_prompt_tokens,
                     " tokens (admission.max_prompt_tokens), got ",
                     prompt.size()));
  }
  if (limits.context_length > 0 && prompt.size() >= limits.context_length) {
    return InvalidFieldError(
        "prompt_token_ids",
        absl::StrCat("must be shorter than the model's context of ",
                     limits.context_length, " tokens, got ", prompt.size()));
  }
  return CheckTokenIds("prompt_token_ids", prompt, limits);
}

absl::Status CheckTopLogprobs(const char* field, int32_t k,
                              const RequestLimits& limits) {
  if (k < 0 || k > limits.max_top_logprobs) {
    return InvalidFieldError(
        field, absl::StrCat("must be in [0, ", limits.max_top_logprobs,
                            "] (admission.max_top_logprobs), got ", k));
  }
  if (limits.vocab_size > 0 && k > limits.vocab_size) {
    return InvalidFieldError(
        field, absl::StrCat("must be at most the vocabulary size ",
                            limits.vocab_size, ", got ", k));
  }
  return absl::OkStatus();
}

absl::Status CheckSampling(const rollout::v1::SamplingParams& s,
                           int prompt_tokens, const RequestLimits& limits) {
  if (!std::isfinite(s.temperature()) || s.temperature() < 0) {
    return InvalidFieldError(
        "sampling.temperature",
        absl::StrCat("must be >= 0 and finite (0 = greedy), got ",
                     s.temperature()));
  }
  if (!(s.top_p() > 0 && s.top_p() <= 1)) {  // also catches NaN
    return InvalidFieldError(
        "sampling.top_p", absl::StrCat("must be in (0, 1], got ", s.top_p()));
  }
  if (s.top_k() < 0) {
    return InvalidFieldError(
        "sampling.top_k",
        absl::StrCat("must be >= 0 (0 = off), got ", s.top_k()));
  }
  if (!(s.min_p() >= 0 && s.min_p() <= 1)) {
    return InvalidFieldError(
        "sampling.min_p", absl::StrCat("must be in [0, 1], got ", s.min_p()));
  }
  if (s.max_tokens() < 1 || s.max_tokens() > limits.max_tokens) {
    return InvalidFieldError(
        "sampling.max_tokens",
        absl::StrCat("must be in [1, ", limits.max_tokens,
                     "] (admission.max_tokens), got ", s.max_tokens()));
  }
  if (limits.context_length > 0 &&
      static_cast<int64_t>(prompt_tokens) + s.max_tokens() >
          limits.context_length) {
    return InvalidFieldError(
        "sampling.max_tokens",
        absl::StrCat("prompt (", prompt_tokens, " tokens) + max_tokens (",
                     s.max_tokens(), ") exceeds the model's context of ",
                     limits.context_length, " tokens; at most ",
                     limits.context_length - prompt_tokens));
  }
  if (s.min_tokens() < 0 || s.min_tokens() > s.max_tokens()) {
    return InvalidFieldError(
        "sampling.min_tokens",
        absl::StrCat("must be in [0, max_tokens = ", s.max_tokens(), "], got ",
                     s.min_tokens()));
  }
  if (s.stop_token_ids_size() > limits.max_stop_token_ids) {
    return InvalidFieldError(
        "sampling.stop_token_ids",
        absl::StrCat("at most ", limits.max_stop_token_ids,
                     " entries (admission.max_stop_token_ids), got ",
                     s.stop_token_ids_size()));
  }
  return CheckTokenIds("sampling.stop_token_ids", s.stop_token_ids(), limits);
}

}  // namespace

int64_t EstimateResponseBytes(int32_t n, int32_t max_tokens, bool sampled,
                              int32_t top_k) {
  // Per token: a varint id (<= 5 bytes), a float logprob, and per top-k
  // entry a varint id + a float. Plus a small per-completion overhead.
  const int64_t per_token = 5 + (sampled ? 4 : 0) + int64_t{9} * top_k;
  return int64_t{n} * (int64_t{max_tokens} * per_token + 64) + 256;
}

absl::Status ValidateGenerateRequest(const rollout::v1::GenerateRequest& r,
                                     const RequestLimits& limits, bool unary) {
  if (absl::Status s = CheckRequestId(r.request_id()); !s.ok()) return s;
  if (absl::Status s = CheckPrompt(r.prompt_token_ids(), limits); !s.ok()) {
    return s;
  }
  if (r.n() < 1 || r.n() > limits.max_n) {
    return InvalidFieldError("n",
                             absl::StrCat("must be in [1, ", limits.max_n,
                                          "] (admission.max_n), got ", r.n()));
  }
  if (absl::Status s =
          CheckSampling(r.sampling(), r.prompt_token_ids_size(), limits);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckTopLogprobs("logprobs.top_k", r.logprobs().top_k(), limits);
      !s.ok()) {
    return s;
  }
  if (!rollout::v1::ReplaySsmMode_IsValid(r.replay_ssm())) {
    return InvalidFieldError(
        "replay_ssm",
        absl::StrCat("must be one of REPLAY_SSM_MODE_DEFAULT, _ON, _OFF, "
                     "_AUTO (0-3), got ",
                     r.replay_ssm()));
  }
  if (unary) {
    const int64_t bytes =
        EstimateResponseBytes(r.n(), r.sampling().max_tokens(),
                              r.logprobs().sampled(), r.logprobs().top_k());
    if (bytes > limits.max_response_bytes) {
      return InvalidFieldError(
          "response_size",
          absl::StrCat("n x sampling.max_tokens with these logprobs may need ",
                       bytes, " bytes, over admission.max_response_bytes (",
                       limits.max_response_bytes,
                       "); use GenerateStream, or lower n, max_tokens or "
                       "logprobs.top_k"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateScoreRequest(const rollout::v1::ScoreRequest& r,
                                  const RequestLimits& limits) {
  if (absl::Status s = CheckRequestId(r.request_id()); !s.ok()) return s;
  if (absl::Status s = CheckPrompt(r.prompt_token_ids(), limits); !s.ok()) {
    return s;
  }
  if (r.completions_size() < 1 || r.completions_size() > limits.max_n) {
    return InvalidFieldError(
        "completions",
        absl::StrCat("must have 1 to ", limits.max_n,
                     " entries (admission.max_n), got ", r.completions_size()));
  }
  for (int i = 0; i < r.completions_size(); ++i) {
    const auto& ids = r.completions(i).token_ids();
    if (ids.empty() || ids.size() > limits.max_tokens) {
      return InvalidFieldError(
          "completions.token_ids",
          absl::StrCat("completion ", i, " must have 1 to ", limits.max_tokens,
                       " tokens (admission.max_tokens), got ", ids.size()));
    }
    if (limits.context_length > 0 &&
        r.prompt_token_ids_size() + ids.size() > limits.context_length) {
      return InvalidFieldError(
          "completions.token_ids",
          absl::StrCat("completion ", i, ": prompt + completion (",
                       r.prompt_token_ids_size() + ids.size(),
                       " tokens) exceeds the model's context of ",
                       limits.context_length, " tokens"));
    }
    if (absl::Status s =
            CheckTokenIds("completions.token_ids", ids, limits,
                          absl::StrCat("completion ", i, " entry "));
        !s.ok()) {
      return s;
    }
  }
  return CheckTopLogprobs("top_logprobs", r.top_logprobs(), limits);
}

absl::Status ValidateAbortRequest(const rollout::v1::AbortRequest& r) {
  switch (r.target_case()) {
    case rollout::v1::AbortRequest::kRequestId:
      if (r.request_id().empty()) {
        return InvalidFieldError("request_id", "must not be empty");
      }
      return CheckRequestId(r.request_id());
    case rollout::v1::AbortRequest::kAll:
      if (!r.all()) return InvalidFieldError("all", "must be true when set");
      return absl::OkStatus();
    default:
      return InvalidFieldError("target", "set request_id or all = true");
  }
}

absl::Status ValidatePauseRequest(const rollout::v1::PauseRequest& r) {
  if (!rollout::v1::PauseMode_IsValid(r.mode())) {
    return InvalidFieldError(
        "mode", absl::StrCat("must be PAUSE_MODE_ABORT, _WAIT or _KEEP "
                             "(or unset = WAIT), got ",
                             r.mode()));
  }
  return absl::OkStatus();
}

absl::Status ValidateUpdateWeightsRequest(
    const rollout::v1::UpdateWeightsRequest& r) {
  if (r.path().empty() || r.path()[0] != '/') {
    return InvalidFieldError(
        "path", absl::StrCat("must be an absolute directory path, got \"",
                             r.path(), "\""));
  }
  return absl::OkStatus();
}

}  // namespace rollout::server
