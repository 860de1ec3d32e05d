// RMS norms of the Qwen3-Next / Qwen3.5 decoder, fp32 in and out, the mean of
// squares accumulated in double.
#ifndef ROLLOUT_MODEL_OPS_NORM_H_
#define ROLLOUT_MODEL_OPS_NORM_H_

namespace rollout::model::ops {

// Zero-centred RMSNorm (block norms, final norm, q_norm / k_norm):
// y = x * rsqrt(mean(x^2) + eps) * (1 + w). x, y: [rows, n] (may alias);
// w: [n].
void RmsNormZeroCentered(const float* x, const float* w, int rows, int n,
                         float eps, float* y);

// Gated RMSNorm of the GDN output (norm before gate, plain weight):
// y = (o * rsqrt(mean(o^2) + eps)) * w * silu(z). o, z, y: [rows, n] (y may
// alias o); w: [n] shared by every row (head).
void GatedRmsNorm(const float* o, const float* z, const float* w, int rows,
                  int n, float eps, float* y);

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_NORM_H_
