#include "model/ops/rope.h"

#include <cmath>
#include <cstddef>

namespace rollout::model::ops {

Rope::Rope(int head_dim, int rotary_dim, double theta)
    : head_dim_(head_dim), rotary_dim_(rotary_dim) {
  const int half = rotary_dim / 2;
  inv_freq_.resize(half);
  // torch: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), all fp32.
  const float base = static_cast<float>(theta);
  for (int i = 0; i < half; ++i) {
    const float exponent =
        static_cast<float>(2 * i) / static_cast<float>(rotary_dim);
    inv_freq_[i] = 1.0f / std::pow(base, exponent);
  }
}

void Rope::CosSin(int pos, float* cos, float* sin) const {
  const float p = static_cast<float>(pos);
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const float angle = p * inv_freq_[i];  // fp32 product, as torch
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
  }
}

void Rope::Apply(float* x, int num_heads, int pos) const {
  const int half = rotary_dim_ / 2;
  std::vector<float> cos(half), sin(half);
  CosSin(pos, cos.data(), sin.data());
  for (int h = 0; h < num_heads; ++h) {
    float* xh = x + static_cast<size_t>(h) * head_dim_;
    for (int i = 0; i < half; ++i) {
      const float a = xh[i], b = xh[i + half];
      // [a, b] * cos + [-b, a] * sin
      xh[i] = a * cos[i] - b * sin[i];
      xh[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace rollout::model::ops
