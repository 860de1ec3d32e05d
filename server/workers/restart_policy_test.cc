#include "server/workers/restart_policy.h"

#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

TEST(RestartPolicyTest, FirstRestartIsImmediateThenDoublesUpToTheCap) {
  RestartPolicy p;
  p.max_backoff = absl::Seconds(5);
  EXPECT_EQ(p.Delay(1), absl::ZeroDuration());
  EXPECT_EQ(p.Delay(2), absl::Seconds(1));
  EXPECT_EQ(p.Delay(3), absl::Seconds(2));
  EXPECT_EQ(p.Delay(4), absl::Seconds(4));
  EXPECT_EQ(p.Delay(5), absl::Seconds(5));
  EXPECT_EQ(p.Delay(1000), absl::Seconds(5));
}

TEST(RestartPolicyTest, CrashLoopingFromTheSecondFailure) {
  EXPECT_FALSE(RestartPolicy::CrashLooping(0));
  EXPECT_FALSE(RestartPolicy::CrashLooping(1));
  EXPECT_TRUE(RestartPolicy::CrashLooping(2));
}

}  // namespace
}  // namespace rollout::server::workers
