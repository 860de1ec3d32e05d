#include "model/weight_names.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model {
namespace {

TEST(WeightNamesTest, ClassifiesTheThreeLayouts) {
  ClassifiedName c = ClassifyTensorName(
      "model.language_model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(c.role, TensorRole::kLanguageModel);
  EXPECT_EQ(c.canonical, "model.layers.3.self_attn.q_proj.weight");
  c = ClassifyTensorName("model.layers.0.linear_attn.in_proj_qkvz.weight");
  EXPECT_EQ(c.canonical, "model.layers.0.linear_attn.in_proj_qkvz.weight");
  EXPECT_EQ(ClassifyTensorName("lm_head.weight").canonical, "lm_head.weight");
  for (const char* ignored :
       {"mtp.fc.weight", "mtp.layers.0.mlp.gate.weight",
        "model.visual.blocks.0.attn.qkv.weight", "visual.merger.norm.weight"}) {
    EXPECT_EQ(ClassifyTensorName(ignored).role, TensorRole::kIgnored)
        << ignored;
  }
  EXPECT_EQ(ClassifyTensorName("transformer.h.0.attn.weight").role,
            TensorRole::kUnknown);
  EXPECT_EQ(ClassifyTensorName("lm_head.bias").role, TensorRole::kUnknown);
}

TEST(WeightNamesTest, NameMapRejectsTwoNamesForOneWeight) {
  absl::StatusOr<NameMap> m =
      BuildNameMap({"model.norm.weight", "mtp.x", "odd", "lm_head.weight"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->to_checkpoint.at("model.norm.weight"), "model.norm.weight");
  EXPECT_EQ(m->ignored, (std::vector<std::string>{"mtp.x"}));
  EXPECT_EQ(m->unknown, (std::vector<std::string>{"odd"}));
  m = BuildNameMap({"model.norm.weight", "model.language_model.norm.weight"});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("model.language_model.norm.weight"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace rollout::model
