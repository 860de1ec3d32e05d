#include "worker/engine/engine_options.h"

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

model::ModelInfo Info(int max_pos = 1024) {
  model::ModelInfo info;
  info.max_position_embeddings = max_pos;
  return info;
}

model::PoolFootprint Fp(int64_t state, int64_t ring, int64_t kv) {
  model::PoolFootprint fp;
  fp.state_slot_bytes = state;
  fp.ring_slot_bytes = ring;
  fp.kv_block_bytes = kv;
  return fp;
}

TEST(EngineOptionsTest, DefaultsValidate) {
  EXPECT_TRUE(EngineOptions().Validate().ok());
  EngineOptions o;
  o.prefill_chunk_tokens = o.max_batch_tokens + 1;
  EXPECT_FALSE(o.Validate().ok());
  o = EngineOptions();
  o.replay.ring_length = 0;
  EXPECT_FALSE(o.Validate().ok());
}

TEST(EngineOptionsTest, KvBlocksFromTheRemainingBudget) {
  EngineOptions o;
  o.max_num_seqs = 4;
  o.kv_block_size = 16;
  o.memory_budget_bytes = 4 * 1000 + 4 * 100 + 50 * 10;
  auto plan = PlanPools(o, Info(256), Fp(1000, 100, 10));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->pools.num_state_slots, 4);
  EXPECT_EQ(plan->pools.num_ring_slots, 4);  // one per slot by default
  EXPECT_EQ(plan->pools.num_kv_blocks, 50);
  EXPECT_EQ(plan->total_bytes, o.memory_budget_bytes);
  EXPECT_EQ(plan->max_model_len, 256);
}

TEST(EngineOptionsTest, KvBlocksCappedAtFullLengthSequences) {
  EngineOptions o;
  o.max_num_seqs = 2;
  o.kv_block_size = 16;
  o.max_model_len = 64;  // 4 blocks each
  auto plan = PlanPools(o, Info(), Fp(10, 10, 10));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pools.num_kv_blocks, 8);
  // No attention layers: blocks are free bookkeeping.
  plan = PlanPools(o, Info(), Fp(10, 10, 0));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pools.num_kv_blocks, 8);
}

TEST(EngineOptionsTest, BudgetTooSmallNamesTheOptions) {
  EngineOptions o;
  o.max_num_seqs = 8;
  o.memory_budget_bytes = 1000;
  auto plan = PlanPools(o, Info(), Fp(1000, 0, 10));
  EXPECT_TRUE(absl::IsResourceExhausted(plan.status()));
  EXPECT_NE(plan.status().message().find("max_num_seqs"),
            absl::string_view::npos);
  // Room for the slots but not for one full-length sequence's KV.
  o.memory_budget_bytes = 8 * 1000 + 10 * 10;
  plan = PlanPools(o, Info(1024), Fp(1000, 0, 10));
  EXPECT_TRUE(absl::IsResourceExhausted(plan.status()));
  EXPECT_NE(plan.status().message().find("max_model_len"),
            absl::string_view::npos);
}

TEST(EngineOptionsTest, RingsDisabledOrExplicit) {
  EngineOptions o;
  o.max_num_seqs = 4;
  o.replay.num_rings = 1;
  auto plan = PlanPools(o, Info(), Fp(1, 1, 1));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pools.num_ring_slots, 1);
  o.replay.enabled = false;
  plan = PlanPools(o, Info(), Fp(1, 1, 1));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pools.num_ring_slots, 0);
}

}  // namespace
}  // namespace rollout::worker
