#include "gdn/fast_div.h"

#include <algorithm>
#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

void ExpectExact(const FastDiv& f, int x) {
  const int d = static_cast<int>(f.d);
  ASSERT_EQ(f.Div(x), x / d) << "x=" << x << " d=" << d;
  ASSERT_EQ(f.Mod(x), x % d) << "x=" << x << " d=" << d;
}

// Every divisor the kernels use (head counts, key-group sizes, CTAs per head)
// and odd ones, over all small numerators and the edges of the range.
TEST(FastDivTest, ExactForSmallDivisorsAndEdges) {
  for (int d = 1; d <= 300; ++d) {
    const FastDiv f(d);
    for (int x = 0; x < 20000; ++x) ExpectExact(f, x);
    for (int x = INT32_MAX - 3 * d; x > 0 && x <= INT32_MAX - 1; ++x) {
      ExpectExact(f, x);
    }
    ExpectExact(f, INT32_MAX);
  }
}

// Large and power-of-two divisors against random numerators, and the
// multiples of d (where a multiplier rounded the wrong way would fail).
TEST(FastDivTest, ExactForRandomLargeDivisors) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> any(0, INT32_MAX);
  for (int i = 0; i < 2000; ++i) {
    const int d = i < 31 ? (1 << i) : std::max(1, any(rng) >> (i % 31));
    const FastDiv f(d);
    for (int k = 0; k < 200; ++k) ExpectExact(f, any(rng));
    for (int64_t q = 1; q * d <= INT32_MAX && q < 64; ++q) {
      ExpectExact(f, static_cast<int>(q * d));
      ExpectExact(f, static_cast<int>(q * d - 1));
    }
  }
}

TEST(FastDivTest, PowersOfTwoNeedNoMultiplier) {
  EXPECT_EQ(FastDiv(1).mul, 0u);
  EXPECT_EQ(FastDiv(1).shift, 0u);
  EXPECT_EQ(FastDiv(64).mul, 0u);
  EXPECT_EQ(FastDiv(64).shift, 6u);
}

}  // namespace
}  // namespace rollout::gdn
