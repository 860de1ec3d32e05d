#include "model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/safetensors_writer.h"
#include "model/tools/checkpoint_writer.h"

namespace rollout::model {
namespace {

tools::CheckpointSpec Spec() {
  tools::CheckpointSpec s;
  s.model_type = "qwen3_5";
  s.vocab_size = 53;
  s.hidden_size = 16;
  s.num_layers = 4;
  s.intermediate_size = 20;
  s.linear_num_key_heads = 1;
  s.linear_num_value_heads = 2;
  s.linear_key_head_dim = 8;
  s.linear_value_head_dim = 4;
  s.num_attention_heads = 2;
  s.num_key_value_heads = 1;
  s.head_dim = 8;
  s.tie_word_embeddings = true;
  return s;
}

absl::StatusOr<std::unique_ptr<ModelWeights>> LoadDir(const std::string& dir) {
  absl::StatusOr<ModelConfig> config = LoadModelConfig(dir);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::unique_ptr<Checkpoint>> ckpt = Checkpoint::Open(dir);
  if (!ckpt.ok()) return ckpt.status();
  return LoadModelWeights(*config, **ckpt);
}

// Rewrites <dir>/model.safetensors with `edit` applied to its tensors.
void Rewrite(const std::string& src, const std::string& dst,
             const std::function<void(std::vector<OwnedTensor>*)>& edit) {
  ASSERT_EQ(
      std::system(
          ("mkdir -p " + dst + " && cp " + src + "/*.json " + dst).c_str()),
      0);
  absl::StatusOr<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(src);
  ASSERT_TRUE(c.ok());
  std::vector<OwnedTensor> tensors;
  for (const auto& [name, e] : (*c)->tensors()) {
    absl::Span<const uint8_t> b = e.file->Bytes(*e.info);
    tensors.push_back({{name, e.info->dtype, e.info->shape},
                       std::vector<uint8_t>(b.begin(), b.end())});
  }
  edit(&tensors);
  ASSERT_TRUE(WriteSafetensors(dst + "/model.safetensors", tensors).ok());
}

class WeightsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = std::string(::testing::TempDir()) + "/weights_base";
    tools::WriteOptions f32;
    f32.dtype = Dtype::kF32;
    ASSERT_TRUE(tools::WriteRandomCheckpoint(Spec(), base_, f32).ok());
  }
  std::string Dir(const std::string& name) {
    return std::string(::testing::TempDir()) + "/" + name;
  }
  static std::string base_;
};
std::string WeightsTest::base_;

TEST_F(WeightsTest, LoadsAndLaysOut) {
  absl::StatusOr<std::unique_ptr<ModelWeights>> w = LoadDir(base_);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)->lm_head.empty());  // tied
  EXPECT_EQ((*w)->lm_head_data(), (*w)->embed.data());
  const LayerWeights& gdn = (*w)->layers[0];
  // [Q|K|V] (2*8 + 8) + Z (8) + b (2) + a (2) rows of 16.
  EXPECT_EQ(gdn.gdn.in_proj.size(), (24u + 8 + 2 + 2) * 16);
  EXPECT_EQ(gdn.gdn.conv.size(), 24u * 4);
  const LayerWeights& attn = (*w)->layers[3];
  EXPECT_EQ(attn.attention.qkv_proj.size(), (2u * 2 * 8 + 2 * 8) * 16);
  EXPECT_EQ(attn.mlp.gate_up.size(), 2u * 20 * 16);
  EXPECT_GT((*w)->bytes(), 0);
}

TEST_F(WeightsTest, ErrorsNameTheTensor) {
  const std::string prefix = "model.language_model.layers.3.";
  // Missing tensor.
  Rewrite(base_, Dir("missing"), [&](std::vector<OwnedTensor>* t) {
    t->erase(std::remove_if(t->begin(), t->end(),
                            [&](const OwnedTensor& x) {
                              return x.spec.name ==
                                     prefix + "self_attn.k_norm.weight";
                            }),
             t->end());
  });
  absl::StatusOr<std::unique_ptr<ModelWeights>> w = LoadDir(Dir("missing"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("self_attn.k_norm.weight"),
            absl::string_view::npos)
      << w.status();
  // Wrong shape.
  Rewrite(base_, Dir("shape"), [&](std::vector<OwnedTensor>* t) {
    for (OwnedTensor& x : *t) {
      if (x.spec.name == prefix + "self_attn.q_proj.weight") {
        x.spec.shape = {16, 32};  // transposed
      }
    }
  });
  w = LoadDir(Dir("shape"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("q_proj.weight' has shape [16, 32]"),
            absl::string_view::npos)
      << w.status();
  // Unknown extra tensor.
  Rewrite(base_, Dir("extra"), [&](std::vector<OwnedTensor>* t) {
    const float v[2] = {1, 2};
    t->push_back(MakeF32Tensor(prefix + "self_attn.q_proj.bias", {2}, v));
  });
  w = LoadDir(Dir("extra"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("q_proj.bias"), absl::string_view::npos)
      << w.status();
  // Non-finite value.
  Rewrite(base_, Dir("nan"), [&](std::vector<OwnedTensor>* t) {
    for (OwnedTensor& x : *t) {
      if (x.spec.name == "model.language_model.norm.weight") {
        const float nan = NAN;
        std::memcpy(x.data.data() + 4, &nan, 4);
      }
    }
  });
  w = LoadDir(Dir("nan"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("non-finite value at element 1"),
            absl::string_view::npos)
      << w.status();
  // Integer dtype where floats are needed.
  Rewrite(base_, Dir("int"), [&](std::vector<OwnedTensor>* t) {
    for (OwnedTensor& x : *t) {
      if (x.spec.name == "model.language_model.norm.weight") {
        x.spec.dtype = Dtype::kI32;
      }
    }
  });
  w = LoadDir(Dir("int"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("cannot convert I32"),
            absl::string_view::npos)
      << w.status();
}

TEST_F(WeightsTest, UntiedNeedsLmHead) {
  Rewrite(base_, Dir("untied"), [](std::vector<OwnedTensor>*) {});
  absl::StatusOr<ModelConfig> c = LoadModelConfig(Dir("untied"));
  ASSERT_TRUE(c.ok());
  c->tie_word_embeddings = false;
  absl::StatusOr<std::unique_ptr<Checkpoint>> ckpt =
      Checkpoint::Open(Dir("untied"));
  ASSERT_TRUE(ckpt.ok());
  absl::StatusOr<std::unique_ptr<ModelWeights>> w =
      LoadModelWeights(*c, **ckpt);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("lm_head.weight"),
            absl::string_view::npos);
}

TEST_F(WeightsTest, LoadsTheTinyCheckpoints) {
  for (const char* dir :
       {"tests/data/tiny_qwen3_next", "tests/data/tiny_qwen3_5",
        "tests/data/tiny_qwen3_5_moe"}) {
    absl::StatusOr<std::unique_ptr<ModelWeights>> w = LoadDir(dir);
    ASSERT_TRUE(w.ok()) << dir << ": " << w.status();
  }
  absl::StatusOr<std::unique_ptr<ModelWeights>> next =
      LoadDir("tests/data/tiny_qwen3_next");
  EXPECT_EQ((*next)->layers[1].ffn, FfnKind::kDense);
  EXPECT_EQ((*next)->layers[0].moe.experts.size(), 8u);
}

}  // namespace
}  // namespace rollout::model
