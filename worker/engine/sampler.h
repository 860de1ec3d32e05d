// Token sampling over one row of raw fp32 logits.
//
// Logprob semantics (what an RL trainer needs to know): every logprob the
// engine returns, sampled or top-k, is the fp32 log-softmax of the RAW logits
// of the model (sum in double, result rounded to fp32), i.e. BEFORE
// temperature, top-k, top-p, min-p and min_tokens masking. It is therefore the
// policy's log-probability of the token, comparable with a trainer's
// log_softmax(logits) at temperature 1, whatever the sampling parameters.
//
// Sampling (processed distribution), in HF transformers' warper order:
//   1. min_tokens not reached: stop ids and EOS get -inf (cannot end early).
//   2. temperature == 0: argmax (ties -> lowest id); steps 3-5 are skipped.
//   3. logits / temperature, softmax.
//   4. top-k (ties at the boundary -> lower ids kept), then top-p (the
//      smallest most-likely set with mass >= top_p, renormalised), then min-p
//      (keep p >= min_p * p_max).
//   5. u = SampleUniform(seed, completion_index, step) (philox.h); walk the
//      kept tokens in ascending id order and take the first whose cumulative
//      probability exceeds u * total.
// The draw depends only on (seed, completion index, step) and the row's
// logits, never on the batch, preemption or restarts.
#ifndef ROLLOUT_WORKER_ENGINE_SAMPLER_H_
#define ROLLOUT_WORKER_ENGINE_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "worker/engine/request.h"
#include "worker/engine/result.h"

namespace rollout::worker {

// log(sum(exp(logits))) accumulated in double.
double LogSumExp(absl::Span<const float> logits);

// The raw logprob of `token` given LogSumExp(logits).
inline float RawLogprob(absl::Span<const float> logits, int32_t token,
                        double lse) {
  return static_cast<float>(static_cast<double>(logits[token]) - lse);
}

// The k tokens with the largest raw logits (ties -> lower id first), with
// their raw logprobs, most likely first.
std::vector<TopLogprob> TopLogprobs(absl::Span<const float> logits, double lse,
                                    int k);

struct SampleKey {
  uint64_t seed = 0;
  uint32_t completion_index = 0;
  uint64_t step = 0;  // index of the token in the completion (0 = first)
};

struct SampleResult {
  int32_t token = 0;
  float logprob = 0.0f;         // raw (see above)
  std::vector<TopLogprob> top;  // `top_logprobs` entries
};

// Samples one token. `banned` are masked (-inf) in the processed
// distribution (the engine passes stop ids + EOS while min_tokens is not
// reached); if every token is banned the mask is ignored.
SampleResult SampleToken(absl::Span<const float> logits,
                         const SamplingParams& params, const SampleKey& key,
                         absl::Span<const int32_t> banned, int top_logprobs);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_SAMPLER_H_
