#include "model/cpu/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "model/tools/checkpoint_writer.h"

namespace rollout::model::cpu {
namespace {

// A small MoE model with both layer kinds (layer 3 is full attention).
tools::CheckpointSpec Spec(const std::string& type = "qwen3_5_moe") {
  tools::CheckpointSpec s;
  s.model_type = type;
  s.vocab_size = 97;
  s.hidden_size = 20;
  s.num_layers = 5;
  s.intermediate_size = 28;
  s.linear_num_key_heads = 2;
  s.linear_num_value_heads = 4;
  s.linear_key_head_dim = 6;
  s.linear_value_head_dim = 5;
  s.num_attention_heads = 4;
  s.num_key_value_heads = 2;
  s.head_dim = 8;
  s.eos_token_id = 2;
  s.num_experts = 4;
  s.num_experts_per_tok = 2;
  s.moe_intermediate_size = 12;
  s.shared_expert_intermediate_size = 10;
  return s;
}

std::string TempDir(const std::string& name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

constexpr int kBlock = 4;

// ForwardRow holds spans: keep their vectors alive for the whole test.
const std::vector<int32_t>& Keep(std::vector<int32_t> v) {
  static std::deque<std::vector<int32_t>>* kept =
      new std::deque<std::vector<int32_t>>();
  kept->push_back(std::move(v));
  return kept->back();
}

PoolConfig Pools(int ring_length = 5) {
  PoolConfig p;
  p.num_state_slots = 8;
  p.num_ring_slots = 4;
  p.ring_length = ring_length;
  p.kv_block_size = kBlock;
  p.num_kv_blocks = 64;
  return p;
}

ForwardRow Row(const std::vector<int32_t>& tokens, int start, int slot,
               const std::vector<int32_t>& blocks,
               LogitsWanted logits = LogitsWanted::kLast) {
  ForwardRow r;
  r.tokens = tokens;
  r.start_pos = start;
  r.state_slot = slot;
  r.kv_blocks = blocks;
  r.logits = logits;
  return r;
}

std::vector<int32_t> BlockRange(int first, int n) {
  std::vector<int32_t> b(n);
  for (int i = 0; i < n; ++i) b[i] = first + i;
  return b;
}

class CpuBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_a_ = TempDir("backend_a");
    dir_b_ = TempDir("backend_b");
    ASSERT_TRUE(tools::WriteRandomCheckpoint(Spec(), dir_a_).ok());
    tools::WriteOptions other;
    other.seed = 99;
    ASSERT_TRUE(tools::WriteRandomCheckpoint(Spec(), dir_b_, other).ok());
  }

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CpuBackend>> b =
        CpuBackend::Create(dir_a_, {.num_threads = 2});
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = *std::move(b);
    ASSERT_TRUE(backend_->InitPools(Pools()).ok());
  }

  ForwardOutput Run(const ForwardBatch& batch) {
    ForwardOutput out;
    absl::Status s = backend_->Forward(batch, &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  // Logits row `i` of an output.
  std::vector<float> LogitsOf(const ForwardOutput& out, int row, int j = 0) {
    const int V = backend_->info().vocab_size;
    const float* p =
        out.logits.data() + static_cast<size_t>(out.logits_offset[row] + j) * V;
    return std::vector<float>(p, p + V);
  }

  std::vector<uint8_t> SlotBytes(int slot) {
    absl::StatusOr<StateSnapshot> s = backend_->ExportState(slot, {});
    EXPECT_TRUE(s.ok());
    return s->state;
  }

  static std::string dir_a_, dir_b_;
  std::unique_ptr<CpuBackend> backend_;
};
std::string CpuBackendTest::dir_a_, CpuBackendTest::dir_b_;

TEST_F(CpuBackendTest, InfoCapabilitiesFootprint) {
  const ModelInfo& info = backend_->info();
  EXPECT_EQ(info.model_type, "qwen3_5_moe");
  EXPECT_EQ(info.vocab_size, 97);
  EXPECT_EQ(info.num_layers, 5);
  EXPECT_EQ(info.num_gdn_layers, 4);
  EXPECT_EQ(info.num_attention_layers, 1);
  EXPECT_EQ(info.eos_token_ids, (std::vector<int32_t>{2}));
  EXPECT_EQ(backend_->capabilities().name, "cpu");
  EXPECT_TRUE(backend_->capabilities().replay_ssm);
  absl::StatusOr<PoolFootprint> fp = backend_->Footprint(7, 16);
  ASSERT_TRUE(fp.ok());
  // conv (3 x (2*12 + 20)) + state (4*5*6) per GDN layer, fp32.
  EXPECT_EQ(fp->state_slot_bytes, 4 * (3 * 44 + 120) * 4);
  // k [2,7,6] + d [4,7,5] + g [4,7] per GDN layer.
  EXPECT_EQ(fp->ring_slot_bytes, 4 * 7 * (12 + 20 + 4) * 4);
  // K and V of 16 tokens x 2 kv heads x 8 dims, one attention layer.
  EXPECT_EQ(fp->kv_block_bytes, 2 * 16 * 2 * 8 * 4);
  EXPECT_FALSE(backend_->Footprint(0, 16).ok());
  MemoryStats m = backend_->memory();
  EXPECT_GT(m.weights_bytes, 0);
  EXPECT_GT(m.device_used_bytes, 0);
  EXPECT_GE(m.device_peak_bytes, m.device_used_bytes);
  ASSERT_TRUE(backend_->InitPools(Pools(7)).ok());
  absl::StatusOr<PoolFootprint> fp7 = backend_->Footprint(7, kBlock);
  EXPECT_EQ(backend_->memory().pools_bytes, 8 * fp7->state_slot_bytes +
                                                4 * fp7->ring_slot_bytes +
                                                64 * fp7->kv_block_bytes);
}

TEST_F(CpuBackendTest, RequiresPools) {
  absl::StatusOr<std::unique_ptr<CpuBackend>> b = CpuBackend::Create(dir_a_);
  ASSERT_TRUE(b.ok());
  ForwardOutput out;
  EXPECT_TRUE(absl::IsFailedPrecondition((*b)->Forward({}, &out)));
  EXPECT_TRUE(absl::IsFailedPrecondition((*b)->ResetState(0)));
  EXPECT_FALSE(CpuBackend::Create("/nonexistent/dir").ok());
  EXPECT_FALSE(CpuBackend::Create(dir_a_, {.num_threads = -1}).ok());
}

TEST_F(CpuBackendTest, RejectsBadBatchesWithoutTouchingState) {
  ASSERT_TRUE(backend_->ResetState(0).ok());
  const std::vector<int32_t> prompt = {5, 6, 7, 8, 9};
  const std::vector<int32_t> blocks = BlockRange(0, 2),
                             other = BlockRange(2, 2);
  ForwardBatch ok;
  ok.rows.push_back(Row(prompt, 0, 0, blocks));
  Run(ok);
  const std::vector<uint8_t> before = SlotBytes(0);
  const std::vector<int32_t> one = {3}, two = {3, 4}, bad_tok = {97};
  struct Case {
    const char* what;
    std::vector<ForwardRow> rows;
  };
  ForwardRow ring2 = Row(two, 5, 0, blocks);
  ring2.replay.ring_slot = 0;
  ForwardRow bad_pos = Row(one, 5, 0, blocks);
  bad_pos.replay.ring_slot = 0;
  bad_pos.replay.write_pos = 5;
  ForwardRow bad_ring = Row(one, 5, 0, blocks);
  bad_ring.replay.ring_slot = 4;
  ForwardRow ring_a = Row(one, 5, 0, blocks), ring_b = Row(one, 0, 1, other);
  ring_a.replay.ring_slot = 1;
  ring_b.replay.ring_slot = 1;
  std::vector<Case> cases = {
      {"no tokens", {Row(Keep({}), 5, 0, blocks)}},
      {"state slot 8", {Row(one, 5, 8, blocks)}},
      {"state slot -1", {Row(one, 5, -1, blocks)}},
      {"used by two rows", {Row(one, 5, 0, blocks), Row(one, 0, 0, other)}},
      {"token id 97", {Row(bad_tok, 5, 0, blocks)}},
      {"one-token decode", {ring2}},
      {"write_pos 5", {bad_pos}},
      {"ring slot 4", {bad_ring}},
      {"ring slot 1 used by two rows", {ring_a, ring_b}},
      {"KV blocks for", {Row(one, 8, 0, blocks)}},
      {"KV block 64", {Row(one, 5, 0, Keep({0, 64}))}},
      {"written by two rows", {Row(one, 5, 0, blocks), Row(one, 5, 1, blocks)}},
      {"reads KV block",
       {Row(one, 5, 0, blocks), Row(one, 4, 1, Keep({1, 5}))}},
      {"start_pos -1", {Row(one, -1, 0, blocks)}},
  };
  for (const Case& c : cases) {
    ForwardBatch batch;
    batch.rows = c.rows;
    ForwardOutput out;
    absl::Status s = backend_->Forward(batch, &out);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_NE(s.message().find(c.what), absl::string_view::npos)
        << c.what << ": " << s;
    EXPECT_EQ(SlotBytes(0), before) << c.what;
  }
}

// A row's logits are bit-identical alone and inside any batch.
TEST_F(CpuBackendTest, RowsAreIndependentOfTheBatch) {
  const std::vector<int32_t> p0 = {1, 2, 3, 4, 5, 6, 7}, p1 = {9, 8, 7},
                             p2 = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  const std::vector<int32_t> b0 = BlockRange(0, 4), b1 = BlockRange(4, 4),
                             b2 = BlockRange(8, 4);
  // Alone: prefill p0 then decode 2 steps.
  ASSERT_TRUE(backend_->ResetState(0).ok());
  ForwardBatch alone;
  alone.rows.push_back(Row(p0, 0, 0, b0, LogitsWanted::kAll));
  const ForwardOutput a0 = Run(alone);
  const std::vector<int32_t> t = {42};
  alone.rows = {Row(t, 7, 0, b0)};
  const ForwardOutput a1 = Run(alone);

  // In a batch: p0 with other prefill rows, then decode next to a ring row
  // and a prefill row.
  for (int s : {0, 1, 2}) ASSERT_TRUE(backend_->ResetState(s).ok());
  ForwardBatch batch;
  batch.rows = {Row(p2, 0, 2, b2, LogitsWanted::kAll),
                Row(p0, 0, 0, b0, LogitsWanted::kAll),
                Row(p1, 0, 1, b1, LogitsWanted::kNone)};
  const ForwardOutput m0 = Run(batch);
  EXPECT_EQ(m0.logits_count[2], 0);
  EXPECT_EQ(m0.logits_count[1], 7);
  for (int j = 0; j < 7; ++j) EXPECT_EQ(LogitsOf(m0, 1, j), LogitsOf(a0, 0, j));
  const std::vector<int32_t> d1 = {3};
  ForwardRow ring = Row(d1, 3, 1, b1);
  ring.replay.ring_slot = 2;
  batch.rows = {ring, Row(t, 7, 0, b0), Row(d1, 10, 2, b2)};
  const ForwardOutput m1 = Run(batch);
  EXPECT_EQ(LogitsOf(m1, 1), LogitsOf(a1, 0));
}

TEST_F(CpuBackendTest, ChunkedPrefillMatchesOneShot) {
  std::vector<int32_t> prompt(23);
  for (int i = 0; i < 23; ++i) prompt[i] = (i * 37 + 5) % 97;
  const std::vector<int32_t> b0 = BlockRange(0, 6), b1 = BlockRange(6, 6);
  ASSERT_TRUE(backend_->ResetState(0).ok());
  ASSERT_TRUE(backend_->ResetState(1).ok());
  ForwardBatch batch;
  batch.rows = {Row(prompt, 0, 0, b0, LogitsWanted::kAll)};
  const ForwardOutput whole = Run(batch);
  // Chunks of 5, 1, 9, 8 (not aligned to the KV block size of 4).
  int start = 0;
  for (int n : {5, 1, 9, 8}) {
    std::vector<int32_t> chunk(prompt.begin() + start,
                               prompt.begin() + start + n);
    batch.rows = {Row(chunk, start, 1, b1, LogitsWanted::kAll)};
    const ForwardOutput part = Run(batch);
    for (int j = 0; j < n; ++j) {
      const std::vector<float> a = LogitsOf(part, 0, j),
                               b = LogitsOf(whole, 0, start + j);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i])));
      }
    }
    start += n;
  }
}

// Fork after a prefill (CopyState + shared prompt blocks with copy-on-write
// of the partial last block) equals prefilling each sequence separately.
TEST_F(CpuBackendTest, ForkEqualsSeparatePrefill) {
  const std::vector<int32_t> prompt = {4, 5, 6, 7, 8, 9};  // 1.5 blocks
  ASSERT_TRUE(backend_->ResetState(0).ok());
  ForwardBatch batch;
  batch.rows = {Row(prompt, 0, 0, Keep({0, 1}))};
  const ForwardOutput pre = Run(batch);
  // Children 1..3: share block 0, copy block 1 (partially filled).
  std::vector<std::vector<int32_t>> tables;
  for (int c = 1; c <= 3; ++c) {
    ASSERT_TRUE(backend_->CopyState(0, c).ok());
    ASSERT_TRUE(backend_->CopyKvBlock(1, 10 + c).ok());
    tables.push_back(Keep({0, 10 + c}));
  }
  std::vector<std::vector<int32_t>> next = {{20}, {30}, {40}};
  batch.rows.clear();
  for (int c = 0; c < 3; ++c) {
    batch.rows.push_back(Row(next[c], 6, c + 1, tables[c]));
  }
  const ForwardOutput forked = Run(batch);
  // Separately: a fresh prefill + the same decode token.
  for (int c = 0; c < 3; ++c) {
    ASSERT_TRUE(backend_->ResetState(5).ok());
    std::vector<int32_t> seq = prompt;
    ForwardBatch one;
    one.rows = {Row(seq, 0, 5, Keep({30, 31}))};
    EXPECT_EQ(LogitsOf(Run(one), 0), LogitsOf(pre, 0));
    one.rows = {Row(next[c], 6, 5, Keep({30, 31}))};
    EXPECT_EQ(LogitsOf(Run(one), 0), LogitsOf(forked, c)) << c;
  }
}

// Ring decode + FlushRing + plain decode tracks all-plain decode; export /
// import moves a sequence exactly.
TEST_F(CpuBackendTest, RingFlushAndSwap) {
  const int L = 5;
  const std::vector<int32_t> prompt = {3, 1, 4, 1, 5, 9, 2};
  const std::vector<int32_t> bp = BlockRange(0, 8), br = BlockRange(8, 8);
  for (int s : {0, 1}) ASSERT_TRUE(backend_->ResetState(s).ok());
  ForwardBatch batch;
  batch.rows = {Row(prompt, 0, 0, bp), Row(prompt, 0, 1, br)};
  Run(batch);
  int write_pos = 0, flushes = 0;
  std::vector<int32_t> tok = {6};
  constexpr int kSteps = 14;
  for (int step = 0; step < kSteps; ++step) {
    ForwardRow plain = Row(tok, 7 + step, 0, bp);
    ForwardRow ring = Row(tok, 7 + step, 1, br);
    ring.replay.ring_slot = 3;
    ring.replay.write_pos = write_pos;
    ring.replay.flush = step == 7;  // a forced flush mid-cycle
    batch.rows = {plain, ring};
    const ForwardOutput out = Run(batch);
    const bool flushed = write_pos == L - 1 || step == 7;
    EXPECT_EQ(out.rows_flushed, flushed ? 1 : 0) << step;
    flushes += flushed;
    write_pos = flushed ? 0 : write_pos + 1;
    // fp32 noise only (the golden test bounds its size on real models); a
    // bookkeeping error would move logits by O(1).
    const std::vector<float> a = LogitsOf(out, 0), b = LogitsOf(out, 1);
    float scale = 1.0f;
    for (float x : a) scale = std::max(scale, std::fabs(x));
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-4 * scale) << step;
    }
    tok = {
        static_cast<int32_t>(std::max_element(a.begin(), a.end()) - a.begin())};
  }
  EXPECT_EQ(flushes, 3);  // steps 4, 7 (forced), 12
  ASSERT_GT(write_pos, 0);
  // Fold the live entries; the slot then holds the plain path's state.
  ASSERT_TRUE(backend_->FlushRing(1, 3, write_pos).ok());
  const std::vector<uint8_t> s0 = SlotBytes(0), s1 = SlotBytes(1);
  const float* f0 = reinterpret_cast<const float*>(s0.data());
  const float* f1 = reinterpret_cast<const float*>(s1.data());
  float state_scale = 1.0f;
  for (size_t i = 0; i < s0.size() / 4; ++i) {
    state_scale = std::max(state_scale, std::fabs(f0[i]));
  }
  for (size_t i = 0; i < s0.size() / 4; ++i) {
    EXPECT_NEAR(f0[i], f1[i], 1e-5 * state_scale);
  }
  EXPECT_FALSE(backend_->FlushRing(1, 3, L).ok());
  EXPECT_FALSE(backend_->FlushRing(1, 4, 0).ok());

  // Swap out sequence 0, clobber its slot, swap in elsewhere: the next step
  // is bit-identical.
  const int used_blocks = (7 + kSteps + kBlock - 1) / kBlock;
  std::vector<int32_t> held(bp.begin(), bp.begin() + used_blocks);
  absl::StatusOr<StateSnapshot> snap = backend_->ExportState(0, held);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->num_kv_blocks, used_blocks);
  batch.rows = {Row(tok, 7 + kSteps, 0, bp)};
  const ForwardOutput reference = Run(batch);
  ASSERT_TRUE(backend_->ResetState(0).ok());
  std::vector<int32_t> moved = BlockRange(40, 8);
  ASSERT_TRUE(backend_
                  ->ImportState(*snap, 6,
                                absl::MakeConstSpan(moved.data(), used_blocks))
                  .ok());
  batch.rows = {Row(tok, 7 + kSteps, 6, moved)};
  EXPECT_EQ(LogitsOf(Run(batch), 0), LogitsOf(reference, 0));
  StateSnapshot broken = *snap;
  broken.state.pop_back();
  EXPECT_FALSE(backend_->ImportState(broken, 6, moved).ok());
  EXPECT_FALSE(backend_->ImportState(*snap, 6, moved).ok());  // count
}

TEST_F(CpuBackendTest, LoadWeightsSwapsOnlyValidCheckpoints) {
  const std::vector<int32_t> prompt = {7, 7, 8};
  auto logits = [&]() {
    EXPECT_TRUE(backend_->ResetState(0).ok());
    ForwardBatch b;
    b.rows = {Row(prompt, 0, 0, Keep({0}))};
    return LogitsOf(Run(b), 0);
  };
  const std::vector<float> a = logits();
  ASSERT_TRUE(backend_->LoadWeights(dir_b_).ok());
  const std::vector<float> b = logits();
  EXPECT_NE(a, b);
  // A truncated shard: rejected, the current weights keep serving.
  const std::string broken = TempDir("broken");
  ASSERT_TRUE(tools::WriteRandomCheckpoint(Spec(), broken).ok());
  ASSERT_EQ(::truncate((broken + "/model.safetensors").c_str(), 5000), 0);
  absl::Status s = backend_->LoadWeights(broken);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("truncated"), absl::string_view::npos) << s;
  EXPECT_EQ(logits(), b);
  // Another architecture: rejected before reading weights.
  const std::string dense = TempDir("dense");
  ASSERT_TRUE(tools::WriteRandomCheckpoint(Spec("qwen3_5"), dense).ok());
  s = backend_->LoadWeights(dense);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("model_type"), absl::string_view::npos) << s;
  EXPECT_EQ(logits(), b);
  ASSERT_TRUE(backend_->LoadWeights(dir_a_).ok());
  EXPECT_EQ(logits(), a);
}

// Models with a single layer kind: no GDN state (ring rows are no-ops) or no
// KV cache (no blocks needed).
TEST(CpuBackendShapesTest, SingleKindModels) {
  tools::CheckpointSpec only_attention = Spec("qwen3_5");
  only_attention.full_attention_interval = 1;
  tools::CheckpointSpec only_gdn = Spec("qwen3_5");
  only_gdn.full_attention_interval = 100;
  for (const auto& [name, spec] : {std::pair{"attn_only", only_attention},
                                   std::pair{"gdn_only", only_gdn}}) {
    const std::string dir = TempDir(name);
    ASSERT_TRUE(tools::WriteRandomCheckpoint(spec, dir).ok());
    absl::StatusOr<std::unique_ptr<CpuBackend>> b = CpuBackend::Create(dir);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE((*b)->InitPools(Pools()).ok());
    const bool gdn = (*b)->info().num_gdn_layers > 0;
    EXPECT_EQ((*b)->info().num_attention_layers > 0, !gdn);
    ASSERT_TRUE((*b)->ResetState(0).ok());
    const std::vector<int32_t> p = {1, 2, 3}, t = {4};
    const std::vector<int32_t> blocks =
        gdn ? std::vector<int32_t>{} : BlockRange(0, 2);
    ForwardBatch batch;
    batch.rows = {Row(p, 0, 0, blocks)};
    ForwardOutput out;
    ASSERT_TRUE((*b)->Forward(batch, &out).ok());
    ForwardRow ring = Row(t, 3, 0, blocks);
    ring.replay.ring_slot = 0;
    batch.rows = {ring};
    ASSERT_TRUE((*b)->Forward(batch, &out).ok()) << name;
    EXPECT_EQ(out.logits.size(), 97u);
  }
}

TEST(CpuBackendDataTest, LoadsTheTinyQwen35) {
  absl::StatusOr<std::unique_ptr<CpuBackend>> b =
      CpuBackend::Create("tests/data/tiny_qwen3_5");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->info().model_type, "qwen3_5");
  EXPECT_EQ((*b)->info().vocab_size, 1031);
  EXPECT_EQ((*b)->info().eos_token_ids, (std::vector<int32_t>{3}));
}

}  // namespace
}  // namespace rollout::model::cpu
