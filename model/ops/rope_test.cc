#include "model/ops/rope.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

TEST(RopeTest, PartialRotateHalf) {
  const int hd = 24, rot = 6, heads = 3;  // partial: 6 of 24 dims rotate
  Rope rope(hd, rot, 1e7);
  std::mt19937 rng(4);
  std::normal_distribution<float> d;
  std::vector<float> x(heads * hd);
  for (float& v : x) v = d(rng);
  for (int pos : {0, 1, 17, 4095, 100000}) {
    std::vector<float> y = x;
    rope.Apply(y.data(), heads, pos);
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < rot / 2; ++i) {
        const double inv = std::pow(1e7, -2.0 * i / rot);
        const double a = x[h * hd + i], b = x[h * hd + i + rot / 2];
        const double c = std::cos(pos * inv), s = std::sin(pos * inv);
        // fp32 angle rounding grows with pos; the rotation stays a rotation.
        const double tol = 1e-6 + 2e-7 * pos * inv;
        EXPECT_NEAR(y[h * hd + i], a * c - b * s, tol) << pos;
        EXPECT_NEAR(y[h * hd + i + rot / 2], b * c + a * s, tol) << pos;
      }
      for (int i = rot; i < hd; ++i) EXPECT_EQ(y[h * hd + i], x[h * hd + i]);
    }
    if (pos == 0) {
      EXPECT_EQ(y, x);
    }
  }
}

TEST(RopeTest, InvFreqMatchesTorchFp32) {
  Rope rope(64, 16, 1e7);
  std::vector<float> c(8), s(8);
  rope.CosSin(1, c.data(), s.data());
  // angle(pos=1) = inv_freq; inv_freq[0] = 1, inv_freq[7] = 1e7^(-14/16).
  EXPECT_FLOAT_EQ(std::acos(c[0]), 1.0f);
  EXPECT_NEAR(s[7], std::sin(std::pow(1e7, -14.0 / 16)), 1e-7);
}

}  // namespace
}  // namespace rollout::model::ops
