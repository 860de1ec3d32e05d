// Partial NeoX-style rotary position embedding (rotate-half pairing) as in
// transformers' qwen3_next / qwen3_5 apply_rotary_pos_emb: only the first
// rotary_dim = int(head_dim * partial_rotary_factor) dims of each head rotate,
// dim i pairs with dim i + rotary_dim/2, angle pos * inv_freq[i mod
// rotary_dim/2] with inv_freq[i] = theta^(-2i/rotary_dim). Angles, cos and sin
// are computed in fp32 the way torch does (fp32 inv_freq, fp32 product).
// Qwen3.5's interleaved mRoPE with text-only positions is this same 1-D RoPE.
#ifndef ROLLOUT_MODEL_OPS_ROPE_H_
#define ROLLOUT_MODEL_OPS_ROPE_H_

#include <vector>

namespace rollout::model::ops {

class Rope {
 public:
  Rope(int head_dim, int rotary_dim, double theta);

  int rotary_dim() const { return rotary_dim_; }
  // cos, sin: [rotary_dim / 2] for position `pos`.
  void CosSin(int pos, float* cos, float* sin) const;
  // Rotates x: [num_heads, head_dim] in place at position `pos`.
  void Apply(float* x, int num_heads, int pos) const;

 private:
  int head_dim_;
  int rotary_dim_;
  std::vector<float> inv_freq_;  // [rotary_dim / 2]
};

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_ROPE_H_
