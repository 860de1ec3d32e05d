#include "model/safetensors_writer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/safetensors.h"

namespace rollout::model {
namespace {

TEST(SafetensorsWriterTest, StreamsDataInSpecOrder) {
  const std::string path =
      std::string(::testing::TempDir()) + "/stream.safetensors";
  std::vector<TensorSpec> specs = {{"z", Dtype::kF32, {3}},
                                   {"a", Dtype::kI32, {2, 1}}};
  absl::StatusOr<std::unique_ptr<SafetensorsWriter>> w =
      SafetensorsWriter::Create(path, specs, {});
  ASSERT_TRUE(w.ok()) << w.status();
  const float z[3] = {1, 2, 3};
  const int32_t a[2] = {7, 9};
  // Byte chunks need not align with tensors.
  const uint8_t* zb = reinterpret_cast<const uint8_t*>(z);
  ASSERT_TRUE((*w)->Append(absl::MakeConstSpan(zb, 5)).ok());
  ASSERT_TRUE((*w)->Append(absl::MakeConstSpan(zb + 5, 7)).ok());
  EXPECT_FALSE((*w)->Append(std::vector<uint8_t>(9)).ok());  // too much
  ASSERT_TRUE(
      (*w)->Append(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(a), 8))
          .ok());
  ASSERT_TRUE((*w)->Finish().ok());

  absl::StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  const TensorInfo* tz = (*f)->header().Find("z");
  const TensorInfo* ta = (*f)->header().Find("a");
  EXPECT_EQ(tz->begin, 0);
  EXPECT_EQ(ta->begin, 12);
  EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 1}));
}

TEST(SafetensorsWriterTest, RejectsShortDataAndBadNames) {
  const std::string path =
      std::string(::testing::TempDir()) + "/short.safetensors";
  absl::StatusOr<std::unique_ptr<SafetensorsWriter>> w =
      SafetensorsWriter::Create(path, {{"w", Dtype::kF32, {4}}}, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE((*w)->Finish().ok());
  EXPECT_FALSE(SafetensorsWriter::Create(
                   path, {{"w", Dtype::kF32, {1}}, {"w", Dtype::kF32, {1}}}, {})
                   .ok());
  EXPECT_FALSE(
      WriteSafetensors(path, {{{"w", Dtype::kF32, {2}}, {1, 2, 3}}}).ok());
}

}  // namespace
}  // namespace rollout::model
