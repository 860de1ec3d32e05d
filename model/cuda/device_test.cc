#include "model/cuda/device.h"

#include "gtest/gtest.h"

namespace rollout::cuda {
namespace {

TEST(DeviceTest, QueryNeverFails) {
  // With or without a GPU, discovery answers; without one the list is empty.
  absl::StatusOr<std::vector<DeviceInfo>> devices = QueryDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ(devices->empty(), !NoGpuReason().empty());
}

TEST(DeviceTest, SelfTestRunsOnEveryDevice) {
  std::string reason = NoGpuReason();
  if (!reason.empty()) GTEST_SKIP() << "GPU test skipped: " << reason;
  absl::StatusOr<std::vector<DeviceInfo>> devices = QueryDevices();
  ASSERT_TRUE(devices.ok());
  for (const DeviceInfo& d : *devices) {
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.total_bytes, 0);
    EXPECT_TRUE(SelfTest(d.ordinal).ok()) << d.name;
  }
}

}  // namespace
}  // namespace rollout::cuda
