#include "server/health_monitor.h"

#include <map>
#include <string>

#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1000000);

DispatcherState Ready(int running, absl::Time last_token) {
  DispatcherState s;
  s.ready_workers = 1;
  s.requests_running = running;
  s.last_token_time = last_token;
  return s;
}

TEST(EvaluateHealthTest, Table) {
  struct Case {
    DispatcherState state;
    int watchdog;
    bool serving;
    bool stalled;
  };
  const Case cases[] = {
      {DispatcherState(), 60, false, false},              // no worker
      {Ready(0, absl::InfinitePast()), 60, true, false},  // idle
      {Ready(3, kNow - absl::Seconds(5)), 60, true, false},
      {Ready(3, kNow - absl::Seconds(61)), 60, false, true},   // hung
      {Ready(3, absl::InfinitePast()), 60, false, true},       // never a token
      {Ready(3, kNow - absl::Seconds(61)), 0, true, false},    // disabled
      {Ready(0, kNow - absl::Seconds(600)), 60, true, false},  // idle again
  };
  for (const Case& c : cases) {
    const HealthVerdict v = EvaluateHealth(c.state, c.watchdog, kNow);
    EXPECT_EQ(v.serving, c.serving);
    EXPECT_EQ(v.stalled, c.stalled);
  }
}

class FakeHealth : public grpc::HealthCheckServiceInterface {
 public:
  void SetServingStatus(const std::string& service, bool serving) override {
    rollout::MutexLock lock(&mu_);
    status_[service] = serving;
  }
  void SetServingStatus(bool serving) override {}
  bool Get(const std::string& service) {
    rollout::MutexLock lock(&mu_);
    return status_.at(service);
  }

 private:
  rollout::Mutex mu_;
  std::map<std::string, bool> status_;
};

class FakeDispatcher : public Dispatcher {
 public:
  std::unique_ptr<CallHandle> Generate(
      std::shared_ptr<const v1::GenerateRequest>, bool, const CallContext&,
      GenerateSink*) override {
    return nullptr;
  }
  std::unique_ptr<CallHandle> Score(std::shared_ptr<const v1::ScoreRequest>,
                                    const CallContext&,
                                    Callback<v1::ScoreResponse>) override {
    return nullptr;
  }
  void Abort(const v1::AbortRequest&, Callback<v1::AbortResponse>) override {}
  void Pause(v1::PauseMode, absl::Time, Callback<v1::PauseResponse>) override {}
  void Resume(Callback<v1::ResumeResponse>) override {}
  void UpdateWeights(const v1::UpdateWeightsRequest&, absl::Time,
                     Callback<v1::UpdateWeightsResponse>) override {}
  void ApplyConfig(std::shared_ptr<const ConfigSnapshot>) override {}
  DispatcherState State() const override {
    rollout::MutexLock lock(&mu_);
    return state_;
  }
  std::shared_ptr<const v1::ModelInfo> Model() const override {
    return nullptr;
  }
  void Shutdown(absl::Time) override {}
  void Set(DispatcherState s) {
    rollout::MutexLock lock(&mu_);
    state_ = std::move(s);
  }

 private:
  mutable rollout::Mutex mu_;
  DispatcherState state_;
};

TEST(HealthMonitorTest, FollowsTheDispatcher) {
  FakeHealth health;
  FakeDispatcher dispatcher;
  auto config = ConfigManager::Create({});
  ASSERT_TRUE(config.ok());
  HealthMonitor monitor(&health, &dispatcher, config->get(), nullptr,
                        absl::Milliseconds(10));
  monitor.Start();
  EXPECT_FALSE(health.Get(kRolloutServiceName));  // no worker yet
  dispatcher.Set(Ready(0, absl::InfinitePast()));
  // The background thread picks it up.
  for (int i = 0; i < 500 && !health.Get(kRolloutServiceName); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(health.Get(kRolloutServiceName));
  // A stall (default watchdog 60 s) turns it off again.
  dispatcher.Set(Ready(2, absl::Now() - absl::Seconds(120)));
  monitor.Evaluate();
  EXPECT_FALSE(health.Get(kRolloutServiceName));
  monitor.Stop();
  monitor.Stop();  // idempotent
}

}  // namespace
}  // namespace rollout::server
