#include "model/checkpoint.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/safetensors_writer.h"

namespace rollout::model {
namespace {

std::string NewDir(const std::string& name) {
  const std::string dir = std::string(::testing::TempDir()) + "/" + name;
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(CheckpointTest, SingleFile) {
  const std::string dir = NewDir("single");
  const std::vector<float> v = {1, 2, 3};
  ASSERT_TRUE(WriteSafetensors(
                  dir + "/model.safetensors",
                  {MakeBf16Tensor("a", {3}, v), MakeF32Tensor("b", {1, 3}, v)})
                  .ok());
  absl::StatusOr<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->num_files(), 1);
  EXPECT_EQ((*c)->tensors().size(), 2u);
  absl::StatusOr<std::vector<float>> a = (*c)->ReadFloat32("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, v);
  EXPECT_TRUE(absl::IsNotFound((*c)->ReadFloat32("nope").status()));
}

TEST(CheckpointTest, ShardedWithIndex) {
  const std::string dir = NewDir("sharded");
  const std::vector<float> v = {4, 5};
  ASSERT_TRUE(WriteSafetensors(dir + "/model-00001-of-00002.safetensors",
                               {MakeF32Tensor("x", {2}, v)})
                  .ok());
  ASSERT_TRUE(WriteSafetensors(dir + "/model-00002-of-00002.safetensors",
                               {MakeF32Tensor("y", {2}, v)})
                  .ok());
  WriteText(dir + "/model.safetensors.index.json",
            R"({"metadata": {"total_size": 16}, "weight_map": {
                "x": "model-00001-of-00002.safetensors",
                "y": "model-00002-of-00002.safetensors"}})");
  absl::StatusOr<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->num_files(), 2);
  EXPECT_EQ(*(*c)->ReadFloat32("y"), v);

  // An index that points a tensor at the wrong shard.
  WriteText(dir + "/model.safetensors.index.json",
            R"({"weight_map": {"x": "model-00002-of-00002.safetensors",
                               "y": "model-00002-of-00002.safetensors"}})");
  c = Checkpoint::Open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'x'"), absl::string_view::npos)
      << c.status();

  // Path escapes and non-strings are rejected.
  for (const char* bad :
       {R"({"weight_map": {"x": "../etc.safetensors"}})",
        R"({"weight_map": {"x": 3}})", R"({"weight_map": {}})",
        R"({"other": 1})", R"([1])", "{"}) {
    WriteText(dir + "/model.safetensors.index.json", bad);
    EXPECT_FALSE(Checkpoint::Open(dir).ok()) << bad;
  }
  // A shard that is missing.
  WriteText(dir + "/model.safetensors.index.json",
            R"({"weight_map": {"x": "model-00009.safetensors"}})");
  c = Checkpoint::Open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("model-00009.safetensors"),
            absl::string_view::npos);
}

TEST(CheckpointTest, DuplicateTensorAcrossShards) {
  const std::string dir = NewDir("dup");
  const std::vector<float> v = {1};
  ASSERT_TRUE(
      WriteSafetensors(dir + "/a.safetensors", {MakeF32Tensor("x", {1}, v)})
          .ok());
  ASSERT_TRUE(
      WriteSafetensors(dir + "/b.safetensors", {MakeF32Tensor("x", {1}, v)})
          .ok());
  WriteText(dir + "/model.safetensors.index.json",
            R"({"weight_map": {"x": "a.safetensors", "y": "b.safetensors"}})");
  absl::StatusOr<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("both"), absl::string_view::npos);
}

TEST(CheckpointTest, EmptyDirectory) {
  absl::StatusOr<std::unique_ptr<Checkpoint>> c =
      Checkpoint::Open(NewDir("empty"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsNotFound(c.status()));
}

TEST(CheckpointTest, OpensTheTinyCheckpoints) {
  for (const char* dir :
       {"tests/data/tiny_qwen3_next", "tests/data/tiny_qwen3_5",
        "tests/data/tiny_qwen3_5_moe"}) {
    absl::StatusOr<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_GT((*c)->tensors().size(), 50u);
  }
}

}  // namespace
}  // namespace rollout::model
