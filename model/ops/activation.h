// Scalar activations in fp32, as torch computes them.
#ifndef ROLLOUT_MODEL_OPS_ACTIVATION_H_
#define ROLLOUT_MODEL_OPS_ACTIVATION_H_

#include <cmath>

namespace rollout::model::ops {

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float Silu(float x) { return x * Sigmoid(x); }

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_ACTIVATION_H_
