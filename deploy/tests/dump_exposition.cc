// Prints the /metrics text of rolloutd's metrics registry
// (metrics/rollout_metrics.h).
//
//   dump_exposition            right after start-up: every catalog family with
//   its HELP and TYPE
//                              lines, before any worker reported a value
//   dump_exposition --samples  plus one plausible series in every family
//   (worker "0"), so that every
//                              dashboard query and alert expression has data to
//                              work on
//
// The deploy tests check the metric names of the Grafana dashboard and the
// Prometheus rules against the first form (metric_names_test.py) and serve the
// second to a real Prometheus server (prometheus_scrape_test.py). A live
// rolloutd is checked the same way through its URL.
#include <cstring>
#include <iostream>
#include <memory>

#include "metrics/rollout_metrics.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace {

using rollout::metrics::BatchSizeBuckets;
using rollout::metrics::LatencyBuckets;
using rollout::metrics::RolloutMetrics;
using rollout::metrics::StepBuckets;

void AddSamples(RolloutMetrics& m) {
  const auto& f = m.families();
  const prometheus::Labels w0 = {{"worker", "0"}};
  m.RecordRequest("Generate", "OK");
  m.RecordValidationFailure("sampling.temperature");
  m.RecordAdmissionRejection("queue_requests");
  m.RecordReload(rollout::metrics::ReloadResult::kApplied);
  m.SetConfigGeneration(2);
  m.SetPaused(false);
  m.SetProgressStalled(false);
  m.SetQueueTokens(4096);
  m.SetFrontendWaiting(1);
  f.requests_running.Add(w0).Set(4);
  f.requests_waiting.Add(w0).Set(2);
  f.last_token_age_seconds.Add(w0).Set(0.05);
  f.generation_tokens.Add({{"worker", "0"}, {"replay_ssm", "on"}})
      .Increment(1000);
  f.generation_tokens.Add({{"worker", "0"}, {"replay_ssm", "off"}})
      .Increment(100);
  f.prompt_tokens.Add(w0).Increment(800);
  f.prompt_tokens_computed.Add(w0).Increment(100);
  f.completions.Add({{"worker", "0"}, {"finish_reason", "stop"}}).Increment(8);
  f.preemptions.Add(w0).Increment(0);
  f.state_forks.Add(w0).Increment(1);
  f.batch_size.Add(w0, BatchSizeBuckets()).Observe(8);
  f.queue_seconds.Add({}, LatencyBuckets()).Observe(0.01);
  f.time_to_first_token_seconds.Add({}, LatencyBuckets()).Observe(0.05);
  f.time_per_output_token_seconds.Add({}, StepBuckets()).Observe(0.02);
  f.e2e_request_seconds.Add({}, LatencyBuckets()).Observe(2.0);
  f.prefill_seconds.Add(w0, StepBuckets()).Observe(0.03);
  f.decode_step_seconds.Add(w0, StepBuckets()).Observe(0.02);
  f.state_slots_used.Add(w0).Set(8);
  f.state_slots_capacity.Add(w0).Set(64);
  f.kv_blocks_used.Add(w0).Set(100);
  f.kv_blocks_capacity.Add(w0).Set(1000);
  f.replayssm_rings_used.Add(w0).Set(8);
  f.replayssm_rings_capacity.Add(w0).Set(64);
  f.pool_used_bytes.Add({{"worker", "0"}, {"pool", "state"}}).Set(1 << 20);
  f.pool_peak_bytes.Add({{"worker", "0"}, {"pool", "state"}}).Set(2 << 20);
  f.gpu_memory_used_bytes.Add({{"worker", "0"}, {"device", "cpu"}})
      .Set(1 << 30);
  f.gpu_memory_peak_bytes.Add({{"worker", "0"}, {"device", "cpu"}})
      .Set(2 << 30);
  f.replayssm_requests.Add({{"worker", "0"}, {"mode", "on"}}).Increment(8);
  f.replayssm_fallbacks
      .Add({{"worker", "0"}, {"reason", "ring_pool_exhausted"}})
      .Increment(0);
  f.replayssm_flushes.Add(w0).Increment(60);
  f.weight_version.Add(w0).Set(1);
  f.weight_updates.Add({{"result", "ok"}}).Increment(1);
  f.weight_update_seconds.Add({}, LatencyBuckets()).Observe(3.0);
  f.weight_update_in_progress.Add({}).Set(0);
  f.worker_ready.Add(w0).Set(1);
  f.worker_restarts.Add(w0).Increment(0);
  f.worker_crashloop.Add(w0).Set(0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool samples = argc > 1 && std::strcmp(argv[1], "--samples") == 0;
  auto registry = std::make_shared<prometheus::Registry>();
  auto metrics = RolloutMetrics::Create(
      *registry, rollout::metrics::BuildInfo{"0.0.0", "test", "cpu"});
  if (!metrics.ok()) {
    std::cerr << "dump_exposition: " << metrics.status() << "\n";
    return 1;
  }
  if (samples) AddSamples(**metrics);
  prometheus::TextSerializer serializer;
  std::cout << serializer.Serialize(
      (*metrics)->Exposition(registry)->Collect());
  return 0;
}
