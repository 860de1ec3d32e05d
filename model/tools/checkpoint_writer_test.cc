#include "model/tools/checkpoint_writer.h"

#include <sys/stat.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/weights.h"

namespace rollout::model::tools {
namespace {

// Odd sizes; layer 3 is full attention, layer 1 dense in the MoE variants.
CheckpointSpec Tiny(const std::string& type) {
  CheckpointSpec s;
  s.model_type = type;
  s.nested = true;
  s.vocab_size = 101;
  s.hidden_size = 24;
  s.num_layers = 5;
  s.intermediate_size = 40;
  s.linear_num_key_heads = 2;
  s.linear_num_value_heads = 6;
  s.linear_key_head_dim = 8;
  s.linear_value_head_dim = 6;
  s.num_attention_heads = 4;
  s.num_key_value_heads = 2;
  s.head_dim = 16;
  s.mrope_section = {1, 1, 0};
  s.eos_token_id = 3;
  if (type != "qwen3_5") {
    s.num_experts = 5;
    s.num_experts_per_tok = 2;
    s.moe_intermediate_size = 10;
    s.shared_expert_intermediate_size = 14;
  }
  if (type == "qwen3_next") s.mlp_only_layers = {1};
  return s;
}

std::string Dir(const std::string& name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

std::unique_ptr<ModelWeights> Load(const std::string& dir) {
  absl::StatusOr<ModelConfig> config = LoadModelConfig(dir);
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<Checkpoint>> ckpt = Checkpoint::Open(dir);
  EXPECT_TRUE(ckpt.ok()) << ckpt.status();
  absl::StatusOr<std::unique_ptr<ModelWeights>> w =
      LoadModelWeights(*config, **ckpt);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : nullptr;
}

void ExpectSameWeights(const ModelWeights& a, const ModelWeights& b) {
  EXPECT_EQ(a.embed, b.embed);
  EXPECT_EQ(a.lm_head, b.lm_head);
  EXPECT_EQ(a.final_norm, b.final_norm);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const LayerWeights &x = a.layers[i], &y = b.layers[i];
    EXPECT_EQ(x.gdn.in_proj, y.gdn.in_proj) << i;
    EXPECT_EQ(x.gdn.conv, y.gdn.conv) << i;
    EXPECT_EQ(x.attention.qkv_proj, y.attention.qkv_proj) << i;
    EXPECT_EQ(x.mlp.gate_up, y.mlp.gate_up) << i;
    ASSERT_EQ(x.moe.experts.size(), y.moe.experts.size()) << i;
    for (size_t e = 0; e < x.moe.experts.size(); ++e) {
      EXPECT_EQ(x.moe.experts[e].gate_up, y.moe.experts[e].gate_up) << i;
      EXPECT_EQ(x.moe.experts[e].down, y.moe.experts[e].down) << i;
    }
    EXPECT_EQ(x.moe.shared_gate, y.moe.shared_gate) << i;
  }
  EXPECT_EQ(a.bytes(), b.bytes());
}

TEST(CheckpointWriterTest, EveryFamilyLoads) {
  for (const char* type : {"qwen3_next", "qwen3_5", "qwen3_5_moe"}) {
    const std::string dir = Dir(std::string("fam_") + type);
    ASSERT_TRUE(WriteRandomCheckpoint(Tiny(type), dir).ok()) << type;
    std::unique_ptr<ModelWeights> w = Load(dir);
    ASSERT_NE(w, nullptr) << type;
    EXPECT_EQ(w->layers.size(), 5u);
    EXPECT_EQ(w->layers[3].kind, LayerKind::kFullAttention);
  }
}

TEST(CheckpointWriterTest, LayoutsLoadToTheSameWeights) {
  // Experts per-expert vs fused.
  CheckpointSpec s = Tiny("qwen3_5_moe");
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("experts_split")).ok());
  s.fused_experts = true;
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("experts_fused")).ok());
  ExpectSameWeights(*Load(Dir("experts_split")), *Load(Dir("experts_fused")));

  // Qwen3-Next grouped in_proj_qkvz / in_proj_ba vs split projections.
  s = Tiny("qwen3_next");
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("next_grouped")).ok());
  s.split_gdn_projections = true;
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("next_split")).ok());
  ExpectSameWeights(*Load(Dir("next_grouped")), *Load(Dir("next_split")));

  // Nested (model.language_model.) vs flat names, sharded vs single file, with
  // mtp / vision tensors that must be ignored.
  s = Tiny("qwen3_5");
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("nested")).ok());
  s.nested = false;
  s.extra_ignored_tensors = true;
  WriteOptions sharded;
  sharded.max_shard_bytes = 3000;
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("flat_sharded"), sharded).ok());
  struct stat st;
  EXPECT_EQ(
      ::stat((Dir("flat_sharded") + "/model.safetensors.index.json").c_str(),
             &st),
      0);
  ExpectSameWeights(*Load(Dir("nested")), *Load(Dir("flat_sharded")));
}

TEST(CheckpointWriterTest, DtypesAndSeeds) {
  CheckpointSpec s = Tiny("qwen3_5");
  WriteOptions f32;
  f32.dtype = Dtype::kF32;
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("f32"), f32).ok());
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("bf16")).ok());
  std::unique_ptr<ModelWeights> a = Load(Dir("f32")), b = Load(Dir("bf16"));
  ASSERT_EQ(a->embed.size(), b->embed.size());
  for (size_t i = 0; i < a->embed.size(); ++i) {
    EXPECT_EQ(b->embed[i], Bf16ToFloat(FloatToBf16(a->embed[i])));
  }
  WriteOptions other;
  other.seed = 7;
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("seed7"), other).ok());
  EXPECT_NE(Load(Dir("seed7"))->embed, b->embed);
}

TEST(CheckpointWriterTest, ReportsProgressAndPlansNames) {
  CheckpointSpec s = Tiny("qwen3_next");
  int calls = 0;
  WriteProgress last;
  WriteOptions opts;
  opts.progress = [&](const WriteProgress& p) {
    ++calls;
    last = p;
  };
  ASSERT_TRUE(WriteRandomCheckpoint(s, Dir("progress"), opts).ok());
  EXPECT_GT(calls, 0);
  EXPECT_EQ(last.bytes_done, last.bytes_total);
  bool has_qkvz = false;
  for (const PlannedTensorInfo& t : PlanTensors(s)) {
    has_qkvz |= t.name == "model.layers.0.linear_attn.in_proj_qkvz.weight";
  }
  EXPECT_TRUE(has_qkvz);
  s.num_experts_per_tok = 99;
  EXPECT_FALSE(WriteRandomCheckpoint(s, Dir("bad")).ok());
}

}  // namespace
}  // namespace rollout::model::tools
