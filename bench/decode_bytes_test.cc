#include "bench/decode_bytes.h"

#include "gtest/gtest.h"

namespace rollout::bench {
namespace {

constexpr DecodeShape k1632{16, 32};  // Qwen3-Next, Qwen3.5-4B/9B/35B
constexpr DecodeShape k1616{16, 16};  // Qwen3.5-0.8B/2B

// The byte counts behind the figures already recorded in docs/BENCHMARKS.md
// (bench/results/run26/gdn_bench.json: "bytes", "cycle_bytes").
TEST(DecodeBytesTest, MatchesTheRecordedRuns) {
  EXPECT_DOUBLE_EQ(PackedStepBytes(k1632, 256), 1080066048.0);
  EXPECT_DOUBLE_EQ(PackedStepBytes(k1616, 1), 2113600.0);
  EXPECT_DOUBLE_EQ(ReplayCycleBytes(k1632, 1, 16, 4), 39381888.0);
  EXPECT_DOUBLE_EQ(ReplayCycleBytes(k1616, 1024, 16, 4), 16 * 1299804160.0);
}

TEST(DecodeBytesTest, CycleIsTheNonFlushStepsPlusTheFlush) {
  for (int L : {1, 8, 16, 64}) {
    for (int e : {2, 4}) {
      const double nf = ReplayNonFlushBytes(k1632, 3, L, e);
      const double f = ReplayFlushBytes(k1632, 3, L, e);
      EXPECT_DOUBLE_EQ(ReplayCycleBytes(k1632, 3, L, e), nf + f);
      // Batch scales every count.
      EXPECT_DOUBLE_EQ(ReplayCycleBytes(k1632, 6, L, e), 2 * (nf + f));
    }
  }
  // L = 1: every step flushes, exactly the packed step's traffic.
  EXPECT_DOUBLE_EQ(ReplayNonFlushBytes(k1616, 5, 1, 4), 0.0);
  EXPECT_DOUBLE_EQ(ReplayFlushBytes(k1616, 5, 1, 4), PackedStepBytes(k1616, 5));
  EXPECT_DOUBLE_EQ(ReplayRatioBound(k1616, 1, 4), 1.0);
}

// The bounds quoted in docs/BENCHMARKS.md against the 1.7x target of
// issue 6: with the exact (fp32) ring the 16/16 shape cannot reach 1.7x even
// with every non-flush step at the read ceiling (run 26: copy 4245 GB/s,
// read 4334 GB/s).
TEST(DecodeBytesTest, RatioBoundsOfTheRingCycle) {
  EXPECT_NEAR(ReplayRatioBound(k1632, 16, 4), 1.714, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1616, 16, 4), 1.665, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1632, 16, 2), 1.789, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1616, 16, 2), 1.761, 5e-4);
  EXPECT_NEAR(ReplayRatioBoundAtCeilings(k1632, 16, 4, 4245, 4334), 1.746,
              5e-4);
  EXPECT_NEAR(ReplayRatioBoundAtCeilings(k1616, 16, 4, 4245, 4334), 1.696,
              5e-4);
  EXPECT_LT(ReplayRatioBoundAtCeilings(k1616, 16, 4, 4245, 4334), 1.7);
  // Equal ceilings give the equal-efficiency bound; a bf16 ring moves fewer
  // bytes; longer rings amortise the flush.
  EXPECT_DOUBLE_EQ(ReplayRatioBoundAtCeilings(k1632, 16, 4, 4000, 4000),
                   ReplayRatioBound(k1632, 16, 4));
  EXPECT_GT(ReplayRatioBound(k1632, 16, 2), ReplayRatioBound(k1632, 16, 4));
  EXPECT_GT(ReplayRatioBound(k1632, 8, 4), ReplayRatioBound(k1632, 4, 4));
}

}  // namespace
}  // namespace rollout::bench
