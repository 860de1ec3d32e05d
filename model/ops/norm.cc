#include "model/ops/norm.h"

#include <cmath>
#include <cstddef>

#include "model/ops/activation.h"

namespace rollout::model::ops {
namespace {

float InvRms(const float* x, int n, float eps) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(1.0 / std::sqrt(sum / n + eps));
}

}  // namespace

void RmsNormZeroCentered(const float* x, const float* w, int rows, int n,
                         float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * n;
    float* yr = y + static_cast<size_t>(r) * n;
    const float inv = InvRms(xr, n, eps);
    for (int i = 0; i < n; ++i) yr[i] = (xr[i] * inv) * (1.0f + w[i]);
  }
}

void GatedRmsNorm(const float* o, const float* z, const float* w, int rows,
                  int n, float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* orow = o + static_cast<size_t>(r) * n;
    const float* zr = z + static_cast<size_t>(r) * n;
    float* yr = y + static_cast<size_t>(r) * n;
    const float inv = InvRms(orow, n, eps);
    for (int i = 0; i < n; ++i) yr[i] = (w[i] * (orow[i] * inv)) * Silu(zr[i]);
  }
}

}  // namespace rollout::model::ops
