#include "worker/engine/philox.h"

#include <cmath>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

// Known-answer vectors: the "philox4x32 10" lines of Random123's
// tests/kat_vectors (DEShawResearch/random123).
TEST(PhiloxTest, KnownAnswerVectors) {
  struct Kat {
    PhiloxCounter ctr;
    PhiloxKey key;
    PhiloxBlock expected;
  };
  const std::vector<Kat> kats = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    EXPECT_EQ(Philox4x32_10(k.ctr, k.key), k.expected);
  }
}

TEST(PhiloxTest, UniformInUnitIntervalAndSpread) {
  double sum = 0;
  double sum_sq = 0;
  const int n = 20000;
  std::set<double> distinct;
  for (int i = 0; i < n; ++i) {
    const double u = SampleUniform(/*seed=*/1234, /*completion_index=*/3, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
    distinct.insert(u);
  }
  const double mean = sum / n;
  const double var = sum_sq / n - mean * mean;
  // Uniform(0,1): mean 1/2 (sd of the estimate ~0.002), variance 1/12.
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.003);
  EXPECT_EQ(distinct.size(), static_cast<size_t>(n));
}

TEST(PhiloxTest, KeyedBySeedIndexStepAndStream) {
  const double base = SampleUniform(7, 0, 0);
  EXPECT_EQ(base, SampleUniform(7, 0, 0));  // a pure function
  EXPECT_NE(base, SampleUniform(8, 0, 0));
  EXPECT_NE(base, SampleUniform(7, 1, 0));
  EXPECT_NE(base, SampleUniform(7, 0, 1));
  EXPECT_NE(base, SampleUniform(7, 0, 0, /*stream=*/1));
  // The high halves of seed and step matter too.
  EXPECT_NE(SampleUniform(1ull << 40, 0, 0), SampleUniform(0, 0, 0));
  EXPECT_NE(SampleUniform(7, 0, 1ull << 33), SampleUniform(7, 0, 0));
}

TEST(PhiloxTest, UniformDoubleExtremes) {
  EXPECT_EQ(UniformDouble({0, 0, 0, 0}), 0.0);
  const double top = UniformDouble({0xffffffff, 0xffffffff, 0, 0});
  EXPECT_LT(top, 1.0);
  EXPECT_GT(top, 1.0 - 1e-15);
}

}  // namespace
}  // namespace rollout::worker
