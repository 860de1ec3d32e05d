#include "model/ops/moe.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

#include "model/ops/activation.h"
#include "model/ops/linear.h"

namespace rollout::model::ops {

Routing RouteToken(const float* logits, int E, int top_k, bool norm) {
  // softmax in fp32 semantics (max-subtracted; the sum in double, rounded).
  float max_logit = logits[0];
  for (int e = 1; e < E; ++e) max_logit = std::max(max_logit, logits[e]);
  std::vector<float> prob(E);
  double sum = 0.0;
  for (int e = 0; e < E; ++e) {
    prob[e] = std::exp(logits[e] - max_logit);
    sum += prob[e];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int e = 0; e < E; ++e) prob[e] *= inv;
  std::vector<int32_t> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                    [&](int32_t a, int32_t b) {
                      return prob[a] > prob[b] || (prob[a] == prob[b] && a < b);
                    });
  Routing r;
  r.experts.assign(order.begin(), order.begin() + top_k);
  float total = 0.0f;
  for (int32_t e : r.experts) {
    r.weights.push_back(prob[e]);
    total += prob[e];
  }
  if (norm) {
    for (float& w : r.weights) w /= total;
  }
  return r;
}

void MoeForward(const float* x, int M, int D, const MoeView& w, float* y,
                ThreadPool* pool) {
  const int E = static_cast<int>(w.experts.size());
  std::vector<float> logits(static_cast<size_t>(M) * E);  // [M, E]
  Linear(x, M, D, w.router, E, logits.data());
  // Tokens routed to each expert, with their weights.
  std::vector<std::vector<int>> tokens(E);
  std::vector<std::vector<float>> token_weights(E);
  for (int m = 0; m < M; ++m) {
    Routing r = RouteToken(logits.data() + static_cast<size_t>(m) * E, E,
                           w.top_k, w.norm_topk_prob);
    for (size_t j = 0; j < r.experts.size(); ++j) {
      tokens[r.experts[j]].push_back(m);
      token_weights[r.experts[j]].push_back(r.weights[j]);
    }
  }
  // Each expert over its tokens, in parallel (separate outputs).
  std::vector<std::vector<float>> expert_out(E);  // [m_e, D]
  ParallelFor(pool, E, [&](int e) {
    const int me = static_cast<int>(tokens[e].size());
    if (me == 0) return;
    std::vector<float> xe(static_cast<size_t>(me) * D);  // [m_e, D]
    for (int i = 0; i < me; ++i) {
      std::copy_n(x + static_cast<size_t>(tokens[e][i]) * D, D,
                  xe.data() + static_cast<size_t>(i) * D);
    }
    expert_out[e].resize(static_cast<size_t>(me) * D);
    SwiGluMlp(xe.data(), me, D, w.experts[e], expert_out[e].data());
  });
  std::fill(y, y + static_cast<size_t>(M) * D, 0.0f);
  for (int e = 0; e < E; ++e) {
    for (size_t i = 0; i < tokens[e].size(); ++i) {
      float* yr = y + static_cast<size_t>(tokens[e][i]) * D;
      const float* o = expert_out[e].data() + i * D;
      const float wt = token_weights[e][i];
      for (int d = 0; d < D; ++d) yr[d] += o[d] * wt;
    }
  }
  std::vector<float> shared(static_cast<size_t>(M) * D);  // [M, D]
  SwiGluMlp(x, M, D, w.shared, shared.data());
  for (int m = 0; m < M; ++m) {
    const float* xr = x + static_cast<size_t>(m) * D;
    double dot = 0.0;
    for (int d = 0; d < D; ++d)
      dot += static_cast<double>(xr[d]) * w.shared_gate[d];
    const float g = Sigmoid(static_cast<float>(dot));
    float* yr = y + static_cast<size_t>(m) * D;
    const float* s = shared.data() + static_cast<size_t>(m) * D;
    for (int d = 0; d < D; ++d) yr[d] += g * s[d];
  }
}

}  // namespace rollout::model::ops
