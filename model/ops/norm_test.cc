#include "model/ops/norm.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

TEST(NormTest, ZeroCentredRmsNorm) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d;
  const int rows = 3, n = 29;
  std::vector<float> x(rows * n), w(n), y(rows * n);
  for (float& v : x) v = 3.0f * d(rng);
  for (float& v : w) v = 0.1f * d(rng);
  RmsNormZeroCentered(x.data(), w.data(), rows, n, 1e-6f, y.data());
  for (int r = 0; r < rows; ++r) {
    double ms = 0;
    for (int i = 0; i < n; ++i) ms += double(x[r * n + i]) * x[r * n + i];
    ms /= n;
    for (int i = 0; i < n; ++i) {
      const double ref = x[r * n + i] / std::sqrt(ms + 1e-6) * (1.0 + w[i]);
      EXPECT_NEAR(y[r * n + i], ref, 1e-5 * std::fabs(ref) + 1e-6);
    }
  }
  // In place gives the same bits.
  std::vector<float> z = x;
  RmsNormZeroCentered(z.data(), w.data(), rows, n, 1e-6f, z.data());
  EXPECT_EQ(z, y);
}

TEST(NormTest, GatedRmsNormIsNormBeforeGateWithPlainWeight) {
  const int n = 5;
  std::vector<float> o = {1, -2, 3, 0.5f, 4}, z = {0, 1, -1, 2, 10};
  std::vector<float> w = {1, 0.5f, 2, 1, -1}, y(n);
  GatedRmsNorm(o.data(), z.data(), w.data(), 1, n, 1e-6f, y.data());
  double ms = 0;
  for (float v : o) ms += v * v;
  ms /= n;
  for (int i = 0; i < n; ++i) {
    const double silu = z[i] / (1.0 + std::exp(-double(z[i])));
    const double ref = w[i] * (o[i] / std::sqrt(ms + 1e-6)) * silu;
    EXPECT_NEAR(y[i], ref, 1e-6 * std::fabs(ref) + 1e-7) << i;
  }
  EXPECT_EQ(y[0], 0.0f);  // silu(0) = 0 gates the element off
}

}  // namespace
}  // namespace rollout::model::ops
