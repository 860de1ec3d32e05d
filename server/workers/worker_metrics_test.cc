#include "server/workers/worker_metrics.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace rollout::server::workers {
namespace {

class WorkerMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<prometheus::Registry>();
    auto m = metrics::RolloutMetrics::Create(*registry_, {"0", "test", "cpu"});
    ASSERT_TRUE(m.ok());
    metrics_ = *std::move(m);
  }

  std::string Text() {
    return prometheus::TextSerializer().Serialize(registry_->Collect());
  }

  bool Has(const std::string& line) {
    return Text().find(line + "\n") != std::string::npos;
  }

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<metrics::RolloutMetrics> metrics_;
};

rollout::worker::v1::WorkerStats Stats(uint64_t tokens) {
  rollout::worker::v1::WorkerStats s;
  s.set_generation_tokens_plain(tokens);
  (*s.mutable_fallbacks())["prefill_only"] = tokens / 10;
  s.mutable_state_slots()->set_used(3);
  s.mutable_state_slots()->set_total(64);
  s.mutable_kv_blocks()->set_total(1000);
  s.mutable_rings()->set_total(16);
  s.set_device_peak_bytes(1 << 20);
  auto* h = s.mutable_batch_size();
  for (double b : {1.0, 2.0, 4.0}) h->add_bounds(b);
  for (uint64_t c : {tokens, uint64_t{0}, uint64_t{0}, uint64_t{0}}) {
    h->add_counts(c);
  }
  h->set_count(tokens);
  h->set_sum(static_cast<double>(tokens));
  return s;
}

TEST_F(WorkerMetricsTest, CountersAddIncreasesAcrossRestarts) {
  WorkerMetrics w(metrics_.get(), 1);
  EXPECT_TRUE(Has("rollout_worker_ready{worker=\"1\"} 0"));
  w.Merge(Stats(10));
  w.Merge(Stats(30));
  EXPECT_TRUE(
      Has("rollout_generation_tokens_total{replay_ssm=\"off\",worker=\"1\"} "
          "30"));
  EXPECT_TRUE(Has(
      "rollout_replayssm_fallbacks_total{reason=\"prefill_only\",worker=\"1\"}"
      " 3"));
  // The process restarts: its counters start again from zero.
  w.NewProcess();
  w.Merge(Stats(5));
  EXPECT_TRUE(
      Has("rollout_generation_tokens_total{replay_ssm=\"off\",worker=\"1\"} "
          "35"));
  EXPECT_TRUE(Has("rollout_batch_size_count{worker=\"1\"} 35"));
  EXPECT_TRUE(Has("rollout_batch_size_bucket{worker=\"1\",le=\"1\"} 35"));
}

TEST_F(WorkerMetricsTest, GaugesAndSupervisorState) {
  WorkerMetrics w(metrics_.get(), 0);
  w.SetDevice("cuda:0");
  w.Merge(Stats(1));
  EXPECT_TRUE(Has("rollout_state_slots_used{worker=\"0\"} 3"));
  EXPECT_TRUE(Has("rollout_state_slots_capacity{worker=\"0\"} 64"));
  EXPECT_TRUE(Has("rollout_kv_blocks_capacity{worker=\"0\"} 1000"));
  EXPECT_TRUE(Has("rollout_replayssm_rings_capacity{worker=\"0\"} 16"));
  EXPECT_TRUE(Has(
      "rollout_gpu_memory_peak_bytes{device=\"cuda:0\",worker=\"0\"} 1048576"));
  w.SetReady(true);
  w.CountRestart();
  w.SetCrashLoop(true);
  EXPECT_TRUE(Has("rollout_worker_ready{worker=\"0\"} 1"));
  EXPECT_TRUE(Has("rollout_worker_restarts_total{worker=\"0\"} 1"));
  EXPECT_TRUE(Has("rollout_worker_crashloop{worker=\"0\"} 1"));
  w.ProcessGone();
  EXPECT_TRUE(Has("rollout_state_slots_used{worker=\"0\"} 0"));
  // The pool is still configured: use reads 0 / capacity, not 0 / 0.
  EXPECT_TRUE(Has("rollout_state_slots_capacity{worker=\"0\"} 64"));
  EXPECT_TRUE(Has(
      "rollout_gpu_memory_peak_bytes{device=\"cuda:0\",worker=\"0\"} 1048576"));
}

}  // namespace
}  // namespace rollout::server::workers
