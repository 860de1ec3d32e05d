#include "model/ops/mlp.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

TEST(MlpTest, SwiGluMatchesNaive) {
  const int M = 3, D = 11, I = 7;
  std::mt19937 rng(6);
  std::normal_distribution<float> d;
  std::vector<float> x(M * D), gu(2 * I * D), down(D * I), y(M * D);
  for (float& v : x) v = d(rng);
  for (float& v : gu) v = d(rng) * 0.3f;
  for (float& v : down) v = d(rng) * 0.3f;
  SwiGluMlp(x.data(), M, D, {gu.data(), down.data(), I}, y.data());
  for (int m = 0; m < M; ++m) {
    std::vector<double> act(I);
    for (int i = 0; i < I; ++i) {
      double g = 0, u = 0;
      for (int j = 0; j < D; ++j) {
        g += double(gu[i * D + j]) * x[m * D + j];
        u += double(gu[(I + i) * D + j]) * x[m * D + j];
      }
      act[i] = g / (1 + std::exp(-g)) * u;
    }
    for (int o = 0; o < D; ++o) {
      double ref = 0;
      for (int i = 0; i < I; ++i) ref += down[o * I + i] * act[i];
      EXPECT_NEAR(y[m * D + o], ref, 1e-5);
    }
  }
}

}  // namespace
}  // namespace rollout::model::ops
