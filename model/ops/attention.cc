#include "model/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/ops/activation.h"

namespace rollout::model::ops {

void GatedAttention(const AttentionShape& s, const float* q, const float* gate,
                    int gate_stride, int T, int start_pos, const PagedKv& kv,
                    float* out, ThreadPool* pool) {
  const int nh = s.num_heads, hd = s.head_dim;
  const int group = nh / s.num_kv_heads;
  // One task per (token, head): each writes only its own output slice.
  ParallelFor(pool, T * nh, [&](int task) {
    const int t = task / nh, h = task % nh;
    const int kvh = h / group;
    const int last = start_pos + t;  // inclusive
    const float* qh = q + (static_cast<size_t>(t) * nh + h) * hd;
    std::vector<double> scores(last + 1);
    double max_score = -INFINITY;
    for (int p = 0; p <= last; ++p) {
      const float* k = kv.Key(p) + static_cast<size_t>(kvh) * hd;
      double dot = 0.0;
      for (int i = 0; i < hd; ++i) dot += static_cast<double>(qh[i]) * k[i];
      scores[p] = dot * s.scale;
      max_score = std::max(max_score, scores[p]);
    }
    double denom = 0.0;
    for (int p = 0; p <= last; ++p) {
      scores[p] = std::exp(scores[p] - max_score);
      denom += scores[p];
    }
    std::vector<double> acc(hd, 0.0);
    for (int p = 0; p <= last; ++p) {
      const float* v = kv.Value(p) + static_cast<size_t>(kvh) * hd;
      const double w = scores[p] / denom;
      for (int i = 0; i < hd; ++i) acc[i] += w * v[i];
    }
    float* o = out + (static_cast<size_t>(t) * nh + h) * hd;
    const float* g = gate + static_cast<size_t>(t) * gate_stride +
                     static_cast<size_t>(h) * hd;
    for (int i = 0; i < hd; ++i)
      o[i] = static_cast<float>(acc[i]) * Sigmoid(g[i]);
  });
}

}  // namespace rollout::model::ops
