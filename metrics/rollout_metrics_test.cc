#include "metrics/rollout_metrics.h"

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace rollout::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Scrape(prometheus::Registry& registry) {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry.Collect());
}

BuildInfo TestBuild() { return {"1.2.3", "abc", "none"}; }

// The catalog of docs/METRICS.md (name -> type). Kept here by hand: a new
// family must be added to the doc, to RegisterAll and to this table.
const std::map<std::string, std::string>& Catalog() {
  static const auto* const kCatalog = new std::map<std::string, std::string>{
      {"rollout_build_info", "gauge"},
      {"rollout_requests_total", "counter"},
      {"rollout_request_validation_failures_total", "counter"},
      {"rollout_admission_rejections_total", "counter"},
      {"rollout_config_generation", "gauge"},
      {"rollout_config_reloads_total", "counter"},
      {"rollout_config_last_reload_success", "gauge"},
      {"rollout_requests_running", "gauge"},
      {"rollout_requests_waiting", "gauge"},
      {"rollout_queue_tokens", "gauge"},
      {"rollout_paused", "gauge"},
      {"rollout_progress_stalled", "gauge"},
      {"rollout_last_token_age_seconds", "gauge"},
      {"rollout_generation_tokens_total", "counter"},
      {"rollout_prompt_tokens_total", "counter"},
      {"rollout_prompt_tokens_computed_total", "counter"},
      {"rollout_completions_total", "counter"},
      {"rollout_preemptions_total", "counter"},
      {"rollout_state_forks_total", "counter"},
      {"rollout_batch_size", "histogram"},
      {"rollout_queue_seconds", "histogram"},
      {"rollout_time_to_first_token_seconds", "histogram"},
      {"rollout_time_per_output_token_seconds", "histogram"},
      {"rollout_e2e_request_seconds", "histogram"},
      {"rollout_prefill_seconds", "histogram"},
      {"rollout_decode_step_seconds", "histogram"},
      {"rollout_state_slots_used", "gauge"},
      {"rollout_state_slots_capacity", "gauge"},
      {"rollout_kv_blocks_used", "gauge"},
      {"rollout_kv_blocks_capacity", "gauge"},
      {"rollout_replayssm_rings_used", "gauge"},
      {"rollout_replayssm_rings_capacity", "gauge"},
      {"rollout_pool_used_bytes", "gauge"},
      {"rollout_pool_peak_bytes", "gauge"},
      {"rollout_gpu_memory_used_bytes", "gauge"},
      {"rollout_gpu_memory_peak_bytes", "gauge"},
      {"rollout_replayssm_requests_total", "counter"},
      {"rollout_replayssm_fallbacks_total", "counter"},
      {"rollout_replayssm_flushes_total", "counter"},
      {"rollout_weight_version", "gauge"},
      {"rollout_weight_updates_total", "counter"},
      {"rollout_weight_update_seconds", "histogram"},
      {"rollout_weight_update_in_progress", "gauge"},
      {"rollout_worker_ready", "gauge"},
      {"rollout_worker_restarts_total", "counter"},
      {"rollout_worker_crashloop", "gauge"},
  };
  return *kCatalog;
}

TEST(RolloutMetricsTest, ExpositionHasEveryCatalogFamilyWithItsType) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto metrics = RolloutMetrics::Create(*registry, TestBuild());
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::vector<prometheus::MetricFamily> families =
      (*metrics)->Exposition(registry)->Collect();
  std::map<std::string, prometheus::MetricType> registered;
  for (const auto& f : families) registered[f.name] = f.type;
  prometheus::TextSerializer serializer;
  const std::string text = serializer.Serialize(families);
  for (const auto& [name, type] : Catalog()) {
    EXPECT_TRUE(registered.count(name)) << name << " is not exposed";
    // Short failure messages: the whole exposition is long.
    EXPECT_NE(text.find("# TYPE " + name + " " + type + "\n"),
              std::string::npos)
        << "no TYPE line for " << name;
    EXPECT_NE(text.find("# HELP " + name + " "), std::string::npos)
        << "no HELP line for " << name;
  }
  EXPECT_EQ(registered.size(), Catalog().size())
      << "a family is registered that docs/METRICS.md does not list";
}

TEST(RolloutMetricsTest, ExpositionDoesNotDuplicateFamiliesWithSeries) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto metrics = RolloutMetrics::Create(*registry, TestBuild());
  ASSERT_TRUE(metrics.ok());
  (*metrics)->RecordRequest("Generate", "OK");
  std::map<std::string, int> seen;
  for (const auto& f : (*metrics)->Exposition(registry)->Collect()) {
    ++seen[f.name];
  }
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
}

TEST(RolloutMetricsTest, StartupSeriesHaveTheirInitialValues) {
  prometheus::Registry registry;
  auto metrics = RolloutMetrics::Create(registry, TestBuild());
  ASSERT_TRUE(metrics.ok());
  const std::string text = Scrape(registry);
  EXPECT_THAT(text, HasSubstr("rollout_build_info{backend=\"none\",commit="
                              "\"abc\",version=\"1.2.3\"} 1"));
  EXPECT_THAT(text, HasSubstr("rollout_config_last_reload_success 1"));
  EXPECT_THAT(text, HasSubstr("rollout_paused 0"));
  EXPECT_THAT(text,
              HasSubstr("rollout_requests_waiting{worker=\"frontend\"} 0"));
  EXPECT_THAT(text, HasSubstr("rollout_e2e_request_seconds_count 0"));
}

TEST(RolloutMetricsTest, RecordersUpdateTheirSeries) {
  prometheus::Registry registry;
  auto created = RolloutMetrics::Create(registry, TestBuild());
  ASSERT_TRUE(created.ok());
  RolloutMetrics& m = **created;
  m.RecordRequest("Generate", "INVALID_ARGUMENT");
  m.RecordRequest("Generate", "INVALID_ARGUMENT");
  m.RecordRequest("GetServerInfo", "OK");
  m.RecordValidationFailure("sampling.top_p");
  m.RecordAdmissionRejection("queue_tokens");
  m.SetConfigGeneration(7);
  m.SetPaused(true);
  m.SetQueueTokens(1234);
  m.RecordReload(ReloadResult::kRejected);
  const std::string text = Scrape(registry);
  EXPECT_THAT(text,
              HasSubstr("rollout_requests_total{code=\"INVALID_ARGUMENT\","
                        "rpc=\"Generate\"} 2"));
  EXPECT_THAT(
      text,
      HasSubstr("rollout_requests_total{code=\"OK\",rpc=\"GetServerInfo\"} 1"));
  EXPECT_THAT(text, HasSubstr("rollout_request_validation_failures_total{field="
                              "\"sampling.top_p\"} 1"));
  EXPECT_THAT(text, HasSubstr("rollout_admission_rejections_total{reason="
                              "\"queue_tokens\"} 1"));
  EXPECT_THAT(text, HasSubstr("rollout_config_generation 7"));
  EXPECT_THAT(text, HasSubstr("rollout_paused 1"));
  EXPECT_THAT(text, HasSubstr("rollout_queue_tokens 1234"));
  EXPECT_THAT(text,
              HasSubstr("rollout_config_reloads_total{result=\"rejected\"} 1"));
  EXPECT_THAT(text, HasSubstr("rollout_config_last_reload_success 0"));
  m.RecordReload(ReloadResult::kDryRun);  // a dry run leaves success alone
  EXPECT_THAT(Scrape(registry),
              HasSubstr("rollout_config_last_reload_success 0"));
  m.RecordReload(ReloadResult::kApplied);
  EXPECT_THAT(Scrape(registry),
              HasSubstr("rollout_config_last_reload_success 1"));
}

TEST(RolloutMetricsTest, SetBuildInfoReplacesTheSeries) {
  prometheus::Registry registry;
  auto metrics = RolloutMetrics::Create(registry, TestBuild());
  ASSERT_TRUE(metrics.ok());
  (*metrics)->SetBuildInfo({"1.2.3", "abc", "cpu"});
  const std::string text = Scrape(registry);
  EXPECT_THAT(text, HasSubstr("backend=\"cpu\""));
  EXPECT_THAT(text, Not(HasSubstr("backend=\"none\"")));
}

TEST(RolloutMetricsTest, ConflictingRegistrationIsAnError) {
  prometheus::Registry registry;
  prometheus::BuildGauge().Name("rollout_requests_total").Register(registry);
  auto metrics = RolloutMetrics::Create(registry, TestBuild());
  EXPECT_EQ(metrics.status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace rollout::metrics
