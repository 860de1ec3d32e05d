#include "model/config.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace rollout::model {
namespace {

using nlohmann::json;

// A Qwen3.5 text config in the transformers-5 layout (odd sizes on purpose).
json Qwen35Text() {
  return json::parse(R"({
    "model_type": "qwen3_5_text", "vocab_size": 1031, "hidden_size": 88,
    "intermediate_size": 152, "num_hidden_layers": 5, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "linear_num_key_heads": 2,
    "linear_num_value_heads": 6, "linear_key_head_dim": 32,
    "linear_value_head_dim": 24, "linear_conv_kernel_dim": 4,
    "rms_norm_eps": 1e-6, "hidden_act": "silu", "max_position_embeddings": 4096,
    "eos_token_id": 3,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention",
                    "full_attention", "linear_attention"],
    "rope_parameters": {"rope_type": "default", "rope_theta": 1e7,
                        "partial_rotary_factor": 0.25,
                        "mrope_section": [3, 3, 2], "mrope_interleaved": true}
  })");
}

json Qwen3Next() {
  return json::parse(R"({
    "model_type": "qwen3_next", "vocab_size": 997, "hidden_size": 88,
    "intermediate_size": 152, "num_hidden_layers": 6, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "linear_num_key_heads": 2,
    "linear_num_value_heads": 4, "linear_key_head_dim": 32,
    "linear_value_head_dim": 32, "num_experts": 8, "num_experts_per_tok": 2,
    "moe_intermediate_size": 40, "shared_expert_intermediate_size": 56,
    "decoder_sparse_step": 1, "mlp_only_layers": [1], "norm_topk_prob": false,
    "rope_theta": 5000000, "partial_rotary_factor": 0.25, "eos_token_id": [3, 5]
  })");
}

absl::StatusOr<ModelConfig> Parse(const json& j, const std::string& gen = "") {
  return ParseModelConfig(j.dump(), gen);
}

void ExpectErrorMentions(const absl::StatusOr<ModelConfig>& c,
                         const std::string& needle) {
  ASSERT_FALSE(c.ok()) << "expected an error mentioning " << needle;
  EXPECT_NE(c.status().message().find(needle), absl::string_view::npos)
      << c.status();
}

TEST(ConfigTest, Qwen35TopLevelText) {
  absl::StatusOr<ModelConfig> c = Parse(Qwen35Text());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model_type, "qwen3_5");
  EXPECT_EQ(c->family, ModelFamily::kQwen3_5);
  EXPECT_FALSE(c->nested_text_config);
  EXPECT_EQ(c->num_layers, 5);
  EXPECT_EQ(c->num_gdn_layers(), 4);
  EXPECT_EQ(c->num_attention_layers(), 1);
  EXPECT_EQ(c->KindIndex(3), 0);
  EXPECT_EQ(c->KindIndex(4), 3);
  EXPECT_EQ(c->gdn.num_v_heads, 6);
  EXPECT_EQ(c->gdn.conv_dim(), 2 * 2 * 32 + 6 * 24);
  EXPECT_EQ(c->rope.rotary_dim, 16);
  EXPECT_EQ(c->rope.theta, 1e7);
  EXPECT_EQ(c->rope.mrope_section, (std::vector<int>{3, 3, 2}));
  EXPECT_TRUE(c->rope.mrope_interleaved);
  EXPECT_EQ(c->intermediate_size, 152);
  EXPECT_EQ(c->moe.num_experts, 0);
  for (FfnKind k : c->ffn_kinds) EXPECT_EQ(k, FfnKind::kDense);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{3}));
  EXPECT_FALSE(c->tie_word_embeddings);
}

TEST(ConfigTest, NestedTextConfigAndTopLevelTie) {
  json root = {{"model_type", "qwen3_5"},
               {"tie_word_embeddings", true},
               {"text_config", Qwen35Text()},
               {"vision_config", {{"depth", 1}}}};
  root["text_config"]["tie_word_embeddings"] = false;
  absl::StatusOr<ModelConfig> c = Parse(root);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->nested_text_config);
  EXPECT_TRUE(c->tie_word_embeddings);  // the model class's own flag wins
  EXPECT_EQ(c->hidden_size, 88);
}

TEST(ConfigTest, LayerTypesFromInterval) {
  json j = Qwen35Text();
  j.erase("layer_types");
  j["num_hidden_layers"] = 9;
  absl::StatusOr<ModelConfig> c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status();
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(c->layer_kinds[i], (i + 1) % 4 == 0 ? LayerKind::kFullAttention
                                                  : LayerKind::kLinearAttention)
        << i;
  }
  j["full_attention_interval"] = 3;
  c = Parse(j);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->layer_kinds[2], LayerKind::kFullAttention);
  EXPECT_EQ(c->layer_kinds[3], LayerKind::kLinearAttention);
}

TEST(ConfigTest, LegacyLayerTypeNames) {
  json j = Qwen35Text();
  j["layer_types"] = {"mamba", "mamba", "mamba", "attention", "mamba"};
  absl::StatusOr<ModelConfig> c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->layer_kinds[3], LayerKind::kFullAttention);
}

TEST(ConfigTest, Qwen3NextMoeLayersAndOldRopeFields) {
  absl::StatusOr<ModelConfig> c = Parse(Qwen3Next());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->family, ModelFamily::kQwen3Next);
  EXPECT_EQ(c->rope.theta, 5e6);
  EXPECT_EQ(c->rope.rotary_dim, 16);
  EXPECT_FALSE(c->moe.norm_topk_prob);
  EXPECT_EQ(c->moe.top_k, 2);
  // Default interval 4 for the mixers; layer 1 is mlp-only.
  EXPECT_EQ(c->layer_kinds[3], LayerKind::kFullAttention);
  EXPECT_EQ(c->ffn_kinds[0], FfnKind::kMoe);
  EXPECT_EQ(c->ffn_kinds[1], FfnKind::kDense);
  EXPECT_EQ(c->ffn_kinds[5], FfnKind::kMoe);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{3, 5}));

  json j = Qwen3Next();
  j["decoder_sparse_step"] = 2;
  j["mlp_only_layers"] = json::array();
  c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ffn_kinds[0], FfnKind::kDense);
  EXPECT_EQ(c->ffn_kinds[1], FfnKind::kMoe);
  EXPECT_EQ(c->ffn_kinds[2], FfnKind::kDense);
}

TEST(ConfigTest, RopeParametersKeyedByLayerType) {
  json j = Qwen35Text();
  j["rope_parameters"] = {
      {"full_attention",
       {{"rope_theta", 5e6}, {"partial_rotary_factor", 0.5}}}};
  absl::StatusOr<ModelConfig> c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rope.theta, 5e6);
  EXPECT_EQ(c->rope.rotary_dim, 32);
}

TEST(ConfigTest, Qwen35MoeAlwaysRenormalises) {
  json j = Qwen35Text();
  j["model_type"] = "qwen3_5_moe_text";
  j.erase("intermediate_size");
  j["num_experts"] = 8;
  j["num_experts_per_tok"] = 3;
  j["moe_intermediate_size"] = 40;
  j["shared_expert_intermediate_size"] = 56;
  j["norm_topk_prob"] = false;  // ignored: the router always renormalises
  absl::StatusOr<ModelConfig> c = Parse(j);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model_type, "qwen3_5_moe");
  EXPECT_TRUE(c->moe.norm_topk_prob);
  for (FfnKind k : c->ffn_kinds) EXPECT_EQ(k, FfnKind::kMoe);
  EXPECT_EQ(c->intermediate_size, 0);
}

TEST(ConfigTest, EosUnionWithGenerationConfigFirst) {
  absl::StatusOr<ModelConfig> c =
      Parse(Qwen35Text(), R"({"eos_token_id": [7, 3], "pad_token_id": 0})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{7, 3}));
}

TEST(ConfigTest, MissingFieldsAreNamed) {
  for (const char* field :
       {"vocab_size", "hidden_size", "num_hidden_layers",
        "linear_num_key_heads", "linear_value_head_dim", "num_attention_heads",
        "head_dim", "intermediate_size"}) {
    json j = Qwen35Text();
    j.erase(field);
    ExpectErrorMentions(Parse(j),
                        std::string("missing required field '") + field + "'");
  }
  json j = Qwen35Text();
  j.erase("rope_parameters");
  ExpectErrorMentions(Parse(j), "rope_theta");
  j = Qwen3Next();
  j.erase("moe_intermediate_size");
  ExpectErrorMentions(Parse(j), "moe_intermediate_size");
  j = Qwen35Text();
  j.erase("model_type");
  ExpectErrorMentions(Parse(j), "model_type");
}

TEST(ConfigTest, InvalidValuesAreNamed) {
  json j = Qwen35Text();
  j["hidden_size"] = "88";
  ExpectErrorMentions(Parse(j), "'hidden_size' must be an integer");
  j = Qwen35Text();
  j["hidden_size"] = -1;
  ExpectErrorMentions(Parse(j), "hidden_size");
  j = Qwen35Text();
  j["linear_num_value_heads"] = 5;  // not a multiple of 2
  ExpectErrorMentions(Parse(j), "multiple of linear_num_key_heads");
  j = Qwen35Text();
  j["layer_types"] = {"linear_attention"};
  ExpectErrorMentions(Parse(j), "layer_types");
  j = Qwen35Text();
  j["layer_types"][2] = "sliding_attention";
  ExpectErrorMentions(Parse(j), "layer_types[2]");
  j = Qwen35Text();
  j["model_type"] = "llama";
  ExpectErrorMentions(Parse(j), "unsupported model_type 'llama'");
  j = Qwen35Text();
  j["rope_parameters"]["rope_type"] = "yarn";
  ExpectErrorMentions(Parse(j), "rope_type 'yarn'");
  j = Qwen35Text();
  j["hidden_act"] = "gelu";
  ExpectErrorMentions(Parse(j), "hidden_act");
  j = Qwen35Text();
  j["eos_token_id"] = 5000;
  ExpectErrorMentions(Parse(j), "eos_token_id");
  j = Qwen3Next();
  j["num_experts_per_tok"] = 9;
  ExpectErrorMentions(Parse(j), "num_experts_per_tok");
  j = Qwen3Next();
  j["mlp_only_layers"] = {17};
  ExpectErrorMentions(Parse(j), "mlp_only_layers[0]");
  EXPECT_FALSE(ParseModelConfig("{not json", "").ok());
  EXPECT_FALSE(ParseModelConfig("[1, 2]", "").ok());
  EXPECT_FALSE(ParseModelConfig(Qwen35Text().dump(), "{").ok());
}

// The checkpoints in tests/data (written by transformers 5).
TEST(ConfigTest, LoadsTheTinyCheckpoints) {
  absl::StatusOr<ModelConfig> next =
      LoadModelConfig("tests/data/tiny_qwen3_next");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->family, ModelFamily::kQwen3Next);
  EXPECT_EQ(next->ffn_kinds[1], FfnKind::kDense);
  EXPECT_EQ(next->ffn_kinds[0], FfnKind::kMoe);
  EXPECT_EQ(next->eos_token_ids, (std::vector<int32_t>{3}));

  absl::StatusOr<ModelConfig> dense =
      LoadModelConfig("tests/data/tiny_qwen3_5");
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_TRUE(dense->nested_text_config);
  EXPECT_TRUE(dense->tie_word_embeddings);
  EXPECT_EQ(dense->gdn.num_v_heads / dense->gdn.num_k_heads, 3);

  absl::StatusOr<ModelConfig> moe =
      LoadModelConfig("tests/data/tiny_qwen3_5_moe");
  ASSERT_TRUE(moe.ok()) << moe.status();
  EXPECT_EQ(moe->family, ModelFamily::kQwen3_5Moe);
  EXPECT_EQ(moe->moe.top_k, 3);
  EXPECT_EQ(moe->rope.rotary_dim, 8);

  absl::StatusOr<ModelConfig> missing = LoadModelConfig("tests/data/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace rollout::model
