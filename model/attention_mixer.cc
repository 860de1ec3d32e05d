#include "model/attention_mixer.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "model/ops/attention.h"
#include "model/ops/linear.h"
#include "model/ops/norm.h"

namespace rollout::model {

void AttentionMixer(const ModelConfig& config, const AttentionWeights& w,
                    const ops::Rope& rope, const float* x, int T, int start_pos,
                    const ops::PagedKv& kv, float* out, ops::ThreadPool* pool) {
  const AttentionConfig& a = config.attention;
  const int D = config.hidden_size, nh = a.num_heads, nkv = a.num_kv_heads;
  const int hd = a.head_dim;
  const int q_width = 2 * nh * hd, kv_width = nkv * hd;
  const int width = q_width + 2 * kv_width;
  const float eps = static_cast<float>(config.rms_norm_eps);

  std::vector<float> proj(static_cast<size_t>(T) * width);  // [T, width]
  ops::Linear(x, T, D, w.qkv_proj.data(), width, proj.data());
  std::vector<float> q(static_cast<size_t>(T) * nh * hd);     // [T, nh, hd]
  std::vector<float> gate(static_cast<size_t>(T) * nh * hd);  // [T, nh*hd]
  for (int t = 0; t < T; ++t) {
    const float* row = proj.data() + static_cast<size_t>(t) * width;
    for (int h = 0; h < nh; ++h) {
      std::copy_n(row + static_cast<size_t>(h) * 2 * hd, hd,
                  q.data() + (static_cast<size_t>(t) * nh + h) * hd);
      std::copy_n(row + static_cast<size_t>(h) * 2 * hd + hd, hd,
                  gate.data() + (static_cast<size_t>(t) * nh + h) * hd);
    }
    float* qt = q.data() + static_cast<size_t>(t) * nh * hd;
    ops::RmsNormZeroCentered(qt, w.q_norm.data(), nh, hd, eps, qt);
    rope.Apply(qt, nh, start_pos + t);
    // K and V of this token go straight into the cache.
    float* kt = kv.Key(start_pos + t);
    float* vt = kv.Value(start_pos + t);
    std::copy_n(row + q_width, kv_width, kt);
    std::copy_n(row + q_width + kv_width, kv_width, vt);
    ops::RmsNormZeroCentered(kt, w.k_norm.data(), nkv, hd, eps, kt);
    rope.Apply(kt, nkv, start_pos + t);
  }
  const ops::AttentionShape shape{nh, nkv, hd,
                                  static_cast<float>(1.0 / std::sqrt(hd))};
  std::vector<float> attn(static_cast<size_t>(T) * nh * hd);  // [T, nh*hd]
  ops::GatedAttention(shape, q.data(), gate.data(), nh * hd, T, start_pos, kv,
                      attn.data(), pool);
  ops::Linear(attn.data(), T, nh * hd, w.o_proj.data(), D, out);
}

}  // namespace rollout::model
