#include "model/tools/checkpoint_spec.h"

#include <string>

#include "gtest/gtest.h"
#include "model/config.h"

namespace rollout::model::tools {
namespace {

TEST(CheckpointSpecTest, EveryPresetParsesAsItsModel) {
  for (const std::string& name : PresetNames()) {
    absl::StatusOr<CheckpointSpec> spec = PresetSpec(name);
    ASSERT_TRUE(spec.ok()) << name;
    ASSERT_TRUE(spec->Validate().ok()) << name;
    absl::StatusOr<ModelConfig> c =
        ParseModelConfig(ConfigJson(*spec), GenerationConfigJson(*spec));
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->model_type, spec->model_type) << name;
    EXPECT_EQ(c->hidden_size, spec->hidden_size) << name;
    EXPECT_EQ(c->num_layers, spec->num_layers) << name;
    EXPECT_EQ(c->num_attention_layers(), spec->num_layers / 4) << name;
    EXPECT_EQ(c->gdn.head_k_dim, 128) << name;
    EXPECT_EQ(c->attention.head_dim, 256) << name;
    EXPECT_EQ(c->rope.rotary_dim, 64) << name;
    EXPECT_EQ(c->tie_word_embeddings, spec->tie_word_embeddings) << name;
  }
}

TEST(CheckpointSpecTest, RealShapes) {
  CheckpointSpec next = *PresetSpec("qwen3-next-80b-a3b");
  absl::StatusOr<ModelConfig> c = ParseModelConfig(ConfigJson(next));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->moe.num_experts, 512);
  EXPECT_EQ(c->moe.top_k, 10);
  EXPECT_EQ(c->gdn.num_v_heads, 32);
  EXPECT_EQ(c->num_gdn_layers(), 36);
  for (FfnKind k : c->ffn_kinds) EXPECT_EQ(k, FfnKind::kMoe);

  CheckpointSpec small = *PresetSpec("qwen3.5-0.8b");
  small.num_layers = 6;
  c = ParseModelConfig(ConfigJson(small));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->nested_text_config);
  EXPECT_EQ(c->vocab_size, 248320);
  EXPECT_EQ(c->intermediate_size, 3584);
  EXPECT_EQ(c->num_gdn_layers(), 5);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{248044}));

  EXPECT_FALSE(PresetSpec("qwen9").ok());
}

}  // namespace
}  // namespace rollout::model::tools
