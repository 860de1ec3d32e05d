#include "server/model_info.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::ElementsAre;

constexpr auto kGdn = v1::LAYER_TYPE_GATED_DELTANET;
constexpr auto kAttn = v1::LAYER_TYPE_FULL_ATTENTION;

TEST(ModelInfoTest, TinyQwen35NestedTextConfig) {
  auto info = ReadModelInfo("tests/data/tiny_qwen3_5");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->model_type(), "qwen3_5");
  EXPECT_EQ(info->name(), "tiny_qwen3_5");
  EXPECT_EQ(info->vocab_size(), 1031);
  EXPECT_EQ(info->num_layers(), 5);
  EXPECT_THAT(info->layer_types(), ElementsAre(kGdn, kGdn, kGdn, kAttn, kGdn));
  EXPECT_EQ(info->num_gdn_layers(), 4);
  EXPECT_EQ(info->num_attention_layers(), 1);
  EXPECT_EQ(info->max_position_embeddings(), 4096);
  EXPECT_THAT(info->eos_token_ids(), ElementsAre(3));
}

TEST(ModelInfoTest, TinyQwen3Next) {
  auto info = ReadModelInfo("tests/data/tiny_qwen3_next/");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->model_type(), "qwen3_next");
  EXPECT_EQ(info->name(), "tiny_qwen3_next");
  EXPECT_EQ(info->vocab_size(), 997);
}

TEST(ModelInfoTest, MissingDirectoryIsAnError) {
  EXPECT_FALSE(ReadModelInfo("tests/data/no_such_model").ok());
}

}  // namespace
}  // namespace rollout::server
