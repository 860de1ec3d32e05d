#include "server/health_fanout.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::ElementsAre;

// Records every call as a string.
class Recorder final : public grpc::HealthCheckServiceInterface {
 public:
  void SetServingStatus(const std::string& name, bool serving) override {
    calls.push_back(name + "=" + (serving ? "on" : "off"));
  }
  void SetServingStatus(bool serving) override {
    calls.push_back(std::string("*=") + (serving ? "on" : "off"));
  }
  void Shutdown() override { calls.push_back("shutdown"); }
  std::vector<std::string> calls;
};

TEST(HealthFanoutTest, EveryTargetSeesEveryChangeInOrder) {
  Recorder a, b;
  HealthFanout fanout({&a, nullptr, &b});
  fanout.SetServingStatus("", true);
  fanout.SetServingStatus("rollout.v1.Rollout", false);
  fanout.SetServingStatus(true);
  fanout.Shutdown();
  EXPECT_THAT(a.calls,
              ElementsAre("=on", "rollout.v1.Rollout=off", "*=on", "shutdown"));
  EXPECT_EQ(a.calls, b.calls);
}

}  // namespace
}  // namespace rollout::server
