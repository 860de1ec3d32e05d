#include "worker/engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "worker/engine/philox.h"

namespace rollout::worker {
namespace {

// Orders token ids by value descending, then id ascending: a total order, so
// every selection below is deterministic.
struct ByValueDesc {
  const float* v;
  bool operator()(int32_t a, int32_t b) const {
    if (v[a] != v[b]) return v[a] > v[b];
    return a < b;
  }
};

}  // namespace

double LogSumExp(absl::Span<const float> logits) {
  float max = -std::numeric_limits<float>::infinity();
  for (float x : logits) max = std::max(max, x);
  if (!std::isfinite(max)) return max;
  double sum = 0.0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
  return static_cast<double>(max) + std::log(sum);
}

std::vector<TopLogprob> TopLogprobs(absl::Span<const float> logits, double lse,
                                    int k) {
  const int vocab = static_cast<int>(logits.size());
  k = std::min(k, vocab);
  if (k <= 0) return {};
  std::vector<int32_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    ByValueDesc{logits.data()});
  std::vector<TopLogprob> out(k);
  for (int i = 0; i < k; ++i) {
    out[i] = {ids[i], RawLogprob(logits, ids[i], lse)};
  }
  return out;
}

SampleResult SampleToken(absl::Span<const float> logits,
                         const SamplingParams& params, const SampleKey& key,
                         absl::Span<const int32_t> banned, int top_logprobs) {
  const int vocab = static_cast<int>(logits.size());
  const float kNegInf = -std::numeric_limits<float>::infinity();

  // Processed logits: the raw ones with `banned` masked.
  std::vector<float> work(logits.begin(), logits.end());
  if (!banned.empty()) {
    int masked = 0;
    std::vector<bool> seen(vocab, false);
    for (int32_t id : banned) {
      if (id >= 0 && id < vocab && !seen[id]) {
        seen[id] = true;
        work[id] = kNegInf;
        ++masked;
      }
    }
    if (masked == vocab) work.assign(logits.begin(), logits.end());
  }

  int32_t token = 0;
  if (params.temperature == 0.0f) {
    for (int32_t i = 1; i < vocab; ++i) {
      if (work[i] > work[token]) token = i;  // strict: ties keep the lower id
    }
  } else {
    // Candidates by processed logit, most likely first (ties: lower id).
    std::vector<int32_t> ids(vocab);
    std::iota(ids.begin(), ids.end(), 0);
    int keep = vocab;
    if (params.top_k > 0 && params.top_k < vocab) keep = params.top_k;
    const ByValueDesc order{work.data()};
    const bool sorted =
        keep < vocab || params.top_p < 1.0f || params.min_p > 0.0f;
    if (keep < vocab) {
      std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), order);
    } else if (sorted) {
      std::sort(ids.begin(), ids.end(), order);
    }
    ids.resize(keep);
    // Masked tokens (probability 0) sort last; drop them.
    while (sorted && ids.size() > 1 && work[ids.back()] == kNegInf) {
      ids.pop_back();
    }
    // Probabilities at temperature, relative to the best candidate.
    const double inv_t = 1.0 / static_cast<double>(params.temperature);
    float max = kNegInf;
    for (int32_t id : ids) max = std::max(max, work[id]);
    std::vector<double> p(ids.size());
    double total = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const float x = work[ids[i]];
      p[i] = (x == kNegInf) ? 0.0 : std::exp((x - max) * inv_t);
      total += p[i];
    }
    if (params.top_p < 1.0f) {
      // ids are sorted most likely first: keep the shortest prefix whose mass
      // reaches top_p (at least one token).
      const double target = static_cast<double>(params.top_p) * total;
      double cum = 0.0;
      size_t n = 0;
      while (n < ids.size()) {
        cum += p[n];
        ++n;
        if (cum >= target) break;
      }
      ids.resize(n);
      p.resize(n);
    }
    if (params.min_p > 0.0f && !p.empty()) {
      const double threshold = static_cast<double>(params.min_p) * p[0];
      size_t n = 1;
      while (n < p.size() && p[n] >= threshold) ++n;
      ids.resize(n);
      p.resize(n);
    }
    // Walk in ascending id order so the draw does not depend on sort details.
    std::vector<size_t> by_id(ids.size());
    std::iota(by_id.begin(), by_id.end(), 0);
    if (sorted) {
      std::sort(by_id.begin(), by_id.end(),
                [&](size_t a, size_t b) { return ids[a] < ids[b]; });
    }
    total = 0.0;
    for (double x : p) total += x;
    const double u =
        SampleUniform(key.seed, key.completion_index, key.step) * total;
    double cum = 0.0;
    token = -1;
    for (size_t j : by_id) {
      if (p[j] <= 0.0) continue;
      cum += p[j];
      token = ids[j];
      if (cum > u) break;
    }
    if (token < 0) token = ids.empty() ? 0 : ids.front();
  }

  SampleResult result;
  result.token = token;
  const double lse = LogSumExp(logits);
  result.logprob = RawLogprob(logits, token, lse);
  if (top_logprobs > 0) result.top = TopLogprobs(logits, lse, top_logprobs);
  return result;
}

}  // namespace rollout::worker
