#include "model/ops/linear.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(LinearTest, MatchesNaiveProduct) {
  std::mt19937 rng(1);
  for (int M : {1, 2, 7}) {
    const int in = 37, out = 19;
    std::vector<float> x = Random(M * in, rng), w = Random(out * in, rng);
    const int ldy = out + 3;
    std::vector<float> y(M * ldy, 42.0f);
    Linear(x.data(), M, in, w.data(), out, y.data(), ldy);
    for (int m = 0; m < M; ++m) {
      for (int o = 0; o < out; ++o) {
        double ref = 0;
        for (int i = 0; i < in; ++i)
          ref += double(x[m * in + i]) * w[o * in + i];
        EXPECT_NEAR(y[m * ldy + o], ref, 1e-5) << M;
      }
      for (int o = out; o < ldy; ++o) EXPECT_EQ(y[m * ldy + o], 42.0f);
    }
  }
}

// A row's result does not depend on the other rows of the call: the M == 1
// path is what decode rows use, whatever the batch.
TEST(LinearTest, SingleRowIsDeterministic) {
  std::mt19937 rng(2);
  const int in = 64, out = 33;
  std::vector<float> x = Random(in, rng), w = Random(out * in, rng);
  std::vector<float> a(out), b(out);
  Linear(x.data(), 1, in, w.data(), out, a.data());
  Linear(x.data(), 1, in, w.data(), out, b.data());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace rollout::model::ops
