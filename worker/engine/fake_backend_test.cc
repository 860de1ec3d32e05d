#include "worker/engine/fake_backend.h"

#include <vector>

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

using model::ForwardBatch;
using model::ForwardOutput;
using model::ForwardRow;
using model::LogitsWanted;

class FakeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model::PoolConfig pools;
    pools.num_state_slots = 4;
    pools.num_ring_slots = 2;
    pools.ring_length = 4;
    pools.kv_block_size = 4;
    pools.num_kv_blocks = 16;
    ASSERT_TRUE(fake_.InitPools(pools).ok());
  }

  // Feeds `tokens` to `slot` from `start` with `replay`; returns last logits.
  absl::StatusOr<std::vector<float>> Feed(int slot,
                                          const std::vector<int32_t>& tokens,
                                          int start,
                                          const std::vector<int32_t>& blocks,
                                          model::ReplayRow replay = {}) {
    ForwardBatch b;
    ForwardRow r;
    r.tokens = tokens;
    r.start_pos = start;
    r.state_slot = slot;
    r.kv_blocks = blocks;
    r.replay = replay;
    b.rows.push_back(r);
    ForwardOutput out;
    absl::Status s = fake_.Forward(b, &out);
    if (!s.ok()) return s;
    return out.logits;
  }

  FakeBackend fake_;
};

TEST_F(FakeBackendTest, RingAndPlainGiveIdenticalLogits) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(fake_.ResetState(1).ok());
  const std::vector<int32_t> prompt = {3, 4, 5};
  ASSERT_TRUE(Feed(0, prompt, 0, {0, 1}).ok());
  ASSERT_TRUE(Feed(1, prompt, 0, {2, 3}).ok());
  for (int t = 0; t < 6; ++t) {
    const int pos = 3 + t;
    const int wp = t % 4;  // flush at write_pos 3 (L - 1)
    auto plain = Feed(0, {7}, pos, {0, 1, 4});
    auto ring = Feed(1, {7}, pos, {2, 3, 5}, {0, wp, false});
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(ring.ok()) << ring.status();
    EXPECT_EQ(*plain, *ring) << "step " << t;
  }
}

TEST_F(FakeBackendTest, CatchesCursorAndFlushBugs) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(Feed(0, {1, 2}, 0, {0}).ok());
  ASSERT_TRUE(Feed(0, {3}, 2, {0}, {0, 0, false}).ok());
  // Wrong write_pos (ring holds 1 entry).
  EXPECT_FALSE(Feed(0, {3}, 3, {0}, {0, 0, false}).ok());
  // Plain row while entries are live.
  EXPECT_FALSE(Feed(0, {3}, 3, {0}).ok());
  // Fork of an unflushed slot.
  EXPECT_FALSE(fake_.CopyState(0, 1).ok());
  EXPECT_FALSE(fake_.ExportState(0, {0}).ok());
  // Flushing with the true write_pos makes everything legal again.
  EXPECT_TRUE(fake_.FlushRing(0, 0, 1).ok());
  EXPECT_TRUE(fake_.CopyState(0, 1).ok());
  EXPECT_TRUE(Feed(0, {3}, 3, {0}).ok());
}

TEST_F(FakeBackendTest, ReusingARingLosesTheOldOwnersEntries) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(fake_.ResetState(1).ok());
  ASSERT_TRUE(Feed(0, {1}, 0, {0}).ok());
  ASSERT_TRUE(Feed(1, {1}, 0, {1}).ok());
  ASSERT_TRUE(Feed(0, {2}, 1, {0}, {0, 0, false}).ok());
  ASSERT_TRUE(Feed(1, {2}, 1, {1}, {0, 0, false}).ok());  // takes ring 0
  EXPECT_FALSE(Feed(0, {3}, 2, {0}).ok());  // slot 0's state is gone
  EXPECT_TRUE(fake_.ResetState(0).ok());
}

TEST_F(FakeBackendTest, CatchesPositionAndKvBugs) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  EXPECT_FALSE(Feed(0, {1, 2}, 1, {0}).ok());           // start_pos != 0
  EXPECT_FALSE(Feed(0, {1, 2, 3, 4, 5}, 0, {0}).ok());  // 1 block for 5
  ASSERT_TRUE(Feed(0, {1, 2}, 0, {0}).ok());
  EXPECT_FALSE(Feed(0, {3}, 2, {1}).ok());  // block 1 was never written
}

TEST_F(FakeBackendTest, SharedBlockWritesChangeWhatSiblingsRead) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(Feed(0, {1, 2}, 0, {0}).ok());
  ASSERT_TRUE(fake_.CopyState(0, 1).ok());
  ASSERT_TRUE(fake_.CopyState(0, 2).ok());
  ASSERT_TRUE(fake_.CopyKvBlock(0, 3).ok());  // slot 2: private copy
  auto own = Feed(2, {5}, 2, {3});
  // Slot 0 writes the same token through the shared block, but slot 1 then
  // overwrites position 2 of that block: slot 0's next read differs.
  ASSERT_TRUE(Feed(0, {5}, 2, {0}).ok());
  ASSERT_TRUE(Feed(1, {6}, 2, {0}).ok());
  auto a = Feed(0, {7}, 3, {0});
  auto b = Feed(2, {7}, 3, {3});
  ASSERT_TRUE(own.ok() && a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST_F(FakeBackendTest, WeightsChangeLogitsAndBadPathsAreRejected) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(fake_.ResetState(1).ok());
  auto before = Feed(0, {1}, 0, {0});
  EXPECT_FALSE(fake_.LoadWeights("/no/such/dir").ok());
  auto same = Feed(1, {1}, 0, {1});
  ASSERT_TRUE(fake_.LoadWeights("fake:9").ok());
  ASSERT_TRUE(fake_.ResetState(1).ok());
  auto after = Feed(1, {1}, 0, {1});
  ASSERT_TRUE(before.ok() && same.ok() && after.ok());
  EXPECT_EQ(*before, *same);
  EXPECT_NE(*before, *after);
}

TEST_F(FakeBackendTest, ExportImportRoundTrip) {
  ASSERT_TRUE(fake_.ResetState(0).ok());
  ASSERT_TRUE(Feed(0, {1, 2, 3, 4, 5}, 0, {0, 1}).ok());
  auto snap = fake_.ExportState(0, {0, 1});
  ASSERT_TRUE(snap.ok());
  auto expected = Feed(0, {6}, 5, {0, 1});
  ASSERT_TRUE(fake_.ImportState(*snap, 3, {7, 8}).ok());
  auto got = Feed(3, {6}, 5, {7, 8});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*expected, *got);
}

TEST_F(FakeBackendTest, NoRingPathWithoutGdnLayers) {
  FakeBackendOptions o;
  o.num_gdn_layers = 0;
  FakeBackend f(o);
  model::PoolConfig pools;
  pools.num_state_slots = 1;
  pools.num_ring_slots = 1;
  pools.num_kv_blocks = 4;
  ASSERT_TRUE(f.InitPools(pools).ok());
  ASSERT_TRUE(f.ResetState(0).ok());
  ForwardBatch b;
  ForwardRow r;
  std::vector<int32_t> t = {1};
  std::vector<int32_t> blocks = {0};
  r.tokens = t;
  r.state_slot = 0;
  r.kv_blocks = blocks;
  r.replay.ring_slot = 0;
  b.rows.push_back(r);
  ForwardOutput out;
  EXPECT_TRUE(absl::IsUnimplemented(f.Forward(b, &out)));
}

}  // namespace
}  // namespace rollout::worker
