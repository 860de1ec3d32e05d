#include "worker/engine/replay_cursor.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

// Steps (0-based) at which each of n rows flushes over `steps` ring steps.
std::vector<std::vector<int>> FlushSteps(int n, int L, int steps) {
  std::vector<RingCursor> rows(n);
  for (int i = 0; i < n; ++i) rows[i].ring = i;
  std::vector<std::vector<int>> flushes(n);
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < n; ++i) {
      RowDecision d = PlanRow(&rows[i], true, StaggerOffset(i, n, L), L);
      EXPECT_TRUE(d.use_ring);
      EXPECT_LT(rows[i].write_pos, L);
      if (d.flush) flushes[i].push_back(t);
      CommitRow(&rows[i], d, L);
    }
  }
  return flushes;
}

TEST(ReplayCursorTest, UnstaggeredRowFlushesEveryL) {
  std::vector<std::vector<int>> f = FlushSteps(1, 4, 12);
  EXPECT_EQ(f[0], (std::vector<int>{3, 7, 11}));
}

TEST(ReplayCursorTest, GroupOfEightHasDistinctFlushPhases) {
  const int L = 16;
  std::vector<std::vector<int>> f = FlushSteps(8, L, 64);
  std::set<int> first;
  for (int i = 0; i < 8; ++i) {
    ASSERT_FALSE(f[i].empty());
    first.insert(f[i][0]);
    // After the first (shortened) cycle, every L steps.
    for (size_t k = 1; k < f[i].size(); ++k) {
      EXPECT_EQ(f[i][k] - f[i][k - 1], L);
    }
  }
  EXPECT_EQ(first.size(), 8u);  // no two rows share a phase
  EXPECT_EQ(f[0][0], 15);       // row 0: offset 0
  EXPECT_EQ(f[1][0], 13);       // row 1: offset 2
}

TEST(ReplayCursorTest, MoreRowsThanPhasesStillSpread) {
  const int L = 4;
  const int n = 8;
  std::vector<std::vector<int>> f = FlushSteps(n, L, 16);
  for (int t = 0; t < 16; ++t) {
    int flushing = 0;
    for (int i = 0; i < n; ++i) {
      for (int s : f[i]) flushing += (s == t);
    }
    EXPECT_EQ(flushing, 2) << "step " << t;  // n / L per step, never all n
  }
}

TEST(ReplayCursorTest, LeavingTheRingFlushesLiveEntriesOnce) {
  const int L = 8;
  RingCursor c;
  c.ring = 0;
  for (int t = 0; t < 3; ++t) {
    RowDecision d = PlanRow(&c, true, 0, L);
    EXPECT_FALSE(d.flush);
    CommitRow(&c, d, L);
  }
  EXPECT_EQ(c.write_pos, 3);
  // Below the AUTO threshold: one forced flush at the true write_pos ...
  RowDecision d = PlanRow(&c, false, 0, L);
  EXPECT_TRUE(d.use_ring);
  EXPECT_TRUE(d.flush);
  EXPECT_EQ(c.write_pos, 3);
  CommitRow(&c, d, L);
  EXPECT_EQ(c.write_pos, 0);
  // ... then plain.
  d = PlanRow(&c, false, 0, L);
  EXPECT_FALSE(d.use_ring);
  CommitRow(&c, d, L);
  // Re-entering restarts a staggered cycle.
  d = PlanRow(&c, true, 5, L);
  EXPECT_EQ(c.flush_at, 2);
  EXPECT_FALSE(d.flush);
}

TEST(ReplayCursorTest, RingLengthOneFlushesEveryStep) {
  RingCursor c;
  c.ring = 0;
  for (int t = 0; t < 3; ++t) {
    RowDecision d = PlanRow(&c, true, 0, 1);
    EXPECT_TRUE(d.flush);
    CommitRow(&c, d, 1);
  }
}

TEST(ReplayCursorTest, NoRingMeansPlain) {
  RingCursor c;
  RowDecision d = PlanRow(&c, true, 0, 16);
  EXPECT_FALSE(d.use_ring);
}

TEST(ReplayCursorTest, ModesAndStaticFallbacks) {
  EXPECT_EQ(ResolveMode(ReplayMode::kDefault, ReplayMode::kAuto),
            ReplayMode::kAuto);
  EXPECT_EQ(ResolveMode(ReplayMode::kOn, ReplayMode::kOff), ReplayMode::kOn);
  EXPECT_EQ(StaticFallback(false, 4, 3, true),
            FallbackReason::kDisabledByConfig);
  EXPECT_EQ(StaticFallback(true, 0, 3, true),
            FallbackReason::kDisabledByConfig);
  EXPECT_EQ(StaticFallback(true, 4, 0, true), FallbackReason::kNoGdnLayers);
  EXPECT_EQ(StaticFallback(true, 4, 3, false),
            FallbackReason::kBackendUnsupported);
  EXPECT_EQ(StaticFallback(true, 4, 3, true), FallbackReason::kNone);
}

}  // namespace
}  // namespace rollout::worker
