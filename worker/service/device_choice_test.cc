#include "worker/service/device_choice.h"

#include "gtest/gtest.h"

namespace rollout::worker::service {
namespace {

std::vector<rollout::cuda::DeviceInfo> Gpus(int n) {
  std::vector<rollout::cuda::DeviceInfo> v(n);
  for (int i = 0; i < n; ++i) v[i].ordinal = i;
  return v;
}

TEST(DeviceChoiceTest, CpuIsTheCpu) {
  auto c = ChooseDevice("cpu", 0, Gpus(2));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->device, "cpu");
  EXPECT_EQ(c->backend, "cpu");
  EXPECT_EQ(c->cuda_ordinal, -1);
  EXPECT_TRUE(c->note.empty());
}

TEST(DeviceChoiceTest, AutoTakesTheWorkersGpuOrTheCpu) {
  auto gpu = ChooseDevice("auto", 1, Gpus(2));
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->device, "cuda:1");
  EXPECT_EQ(gpu->cuda_ordinal, 1);
  // No CUDA backend yet: the CPU backend runs on a GPU worker, and says so.
  EXPECT_EQ(gpu->backend, "cpu");
  EXPECT_FALSE(gpu->note.empty());
  auto cpu = ChooseDevice("auto", 2, Gpus(2));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->device, "cpu");
  auto none = ChooseDevice("auto", 0, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->device, "cpu");
}

TEST(DeviceChoiceTest, ExplicitGpuMustExist) {
  auto ok = ChooseDevice("cuda:0", 5, Gpus(1));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->device, "cuda:0");
  auto missing = ChooseDevice("cuda:3", 0, Gpus(1));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("1 CUDA device"),
            absl::string_view::npos);
}

TEST(DeviceChoiceTest, BadNamesAreRejected) {
  for (const char* name : {"gpu0", "cuda:", "cuda:-1", "cuda:x"}) {
    EXPECT_EQ(ChooseDevice(name, 0, Gpus(1)).status().code(),
              absl::StatusCode::kInvalidArgument)
        << name;
  }
}

}  // namespace
}  // namespace rollout::worker::service
