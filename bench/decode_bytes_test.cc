#include "bench/decode_bytes.h"

#include "gtest/gtest.h"

namespace rollout::bench {
namespace {

constexpr DecodeShape k1632{16, 32};  // Qwen3-Next, Qwen3.5-4B/9B/35B
constexpr DecodeShape k1616{16, 16};  // Qwen3.5-0.8B/2B

// The byte counts behind the figures recorded in docs/BENCHMARKS.md
// (bench/results/run26/gdn_bench.json.gz: "bytes", "cycle_bytes"). Runs 1-38
// kept the ring's k rows in the ring dtype; since run 39 they are bf16 with
// an fp32 norm scale each (gdn/decode.h). An L = 16 cycle touches 135 ring
// entries per row (105 read by the non-flush steps, 15 appended, 15 read by
// the flush), each with H k rows that now take 256 + 4 bytes instead of 512
// in an fp32 ring.
TEST(DecodeBytesTest, MatchesTheRecordedRuns) {
  EXPECT_DOUBLE_EQ(PackedStepBytes(k1632, 256), 1080066048.0);
  EXPECT_DOUBLE_EQ(PackedStepBytes(k1616, 1), 2113600.0);
  constexpr double kRun26Cycle1632 = 39381888.0;         // B = 1, fp32 k rows
  constexpr double kRun26Cycle1616 = 16 * 1299804160.0;  // B = 1024
  EXPECT_DOUBLE_EQ(kRun26Cycle1632 - ReplayCycleBytes(k1632, 1, 16, 4),
                   135.0 * 16 * (512 - 260));
  EXPECT_DOUBLE_EQ(kRun26Cycle1616 - ReplayCycleBytes(k1616, 1024, 16, 4),
                   1024 * 135.0 * 16 * (512 - 260));
  // A bf16 ring's k rows were bf16 already: only the scales are new.
  EXPECT_DOUBLE_EQ(
      ReplayCycleBytes(k1632, 1, 16, 2) - ReplayCycleBytes(k1632, 1, 16, 4),
      -135.0 * 32 * 128 * 2);
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
// issue 6. With fp32 k rows (runs 1-38) the exact ring's 16/16 bound was
// 1.665x (1.696x with every non-flush step at run 26's read ceiling, copy
// 4245 GB/s, read 4334 GB/s): below the target. The bf16 k rows with their
// scales (exact too) lift it past 1.7x, if only just.
TEST(DecodeBytesTest, RatioBoundsOfTheRingCycle) {
  EXPECT_NEAR(ReplayRatioBound(k1632, 16, 4), 1.738, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1616, 16, 4), 1.711, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1632, 16, 2), 1.789, 5e-4);
  EXPECT_NEAR(ReplayRatioBound(k1616, 16, 2), 1.760, 5e-4);
  EXPECT_NEAR(ReplayRatioBoundAtCeilings(k1632, 16, 4, 4245, 4334), 1.770,
              5e-4);
  EXPECT_NEAR(ReplayRatioBoundAtCeilings(k1616, 16, 4, 4245, 4334), 1.743,
              5e-4);
  EXPECT_GT(ReplayRatioBound(k1616, 16, 4), 1.7);
  // Equal ceilings give the equal-efficiency bound; a bf16 ring moves fewer
  // bytes; longer rings amortise the flush.
  EXPECT_DOUBLE_EQ(ReplayRatioBoundAtCeilings(k1632, 16, 4, 4000, 4000),
                   ReplayRatioBound(k1632, 16, 4));
  EXPECT_GT(ReplayRatioBound(k1632, 16, 2), ReplayRatioBound(k1632, 16, 4));
  EXPECT_GT(ReplayRatioBound(k1632, 8, 4), ReplayRatioBound(k1632, 4, 4));
}

// The sets gdn_bench rotates (its --cold-rings lines in run 119 printed
// these counts, from gdn::GdnReplayRing::SlotBytes: the two ring sizes
// agree). With the state alone 16/16 B = 128 rotates 2 sets, whose 50.9 MB
// of rings fit in the H200's L2; with the rings too, 11.
TEST(DecodeBytesTest, RotatingSlotSets) {
  constexpr double k256MiB = 256.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(RingSlotBytes(k1616, 16, 4), 16 * (16 * 260.0 + 16 * 516));
  EXPECT_NEAR(2 * 128 * RingSlotBytes(k1616, 16, 4) / 1e6, 50.9, 0.05);
  const struct {
    DecodeShape s;
    int batch, state_only, with_rings;
  } kPoints[] = {
      {k1616, 64, 4, 22}, {k1616, 128, 2, 11}, {k1616, 160, 2, 9},
      {k1616, 256, 2, 6}, {k1616, 512, 2, 3},  {k1632, 64, 2, 13},
      {k1632, 128, 2, 7}, {k1632, 160, 2, 6},  {k1632, 256, 2, 4},
      {k1632, 512, 2, 2}, {k1632, 1024, 2, 2}, {k1616, 1, 256, 1352},
  };
  for (const auto& p : kPoints) {
    SCOPED_TRACE(testing::Message() << p.s.num_v_heads << " B=" << p.batch);
    EXPECT_EQ(RotatingSlotSets(p.s, p.batch, 16, false, k256MiB), p.state_only);
    EXPECT_EQ(RotatingSlotSets(p.s, p.batch, 16, true, k256MiB), p.with_rings);
  }
}

}  // namespace
}  // namespace rollout::bench
