#include "metrics/rollout_metrics.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::metrics {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Registry;

// Registers one family and remembers its name, help and type in `catalog`.
template <typename T, typename Builder>
Family<T>& Register(Builder builder, Registry& r, const std::string& name,
                    const std::string& help, prometheus::MetricType type,
                    std::vector<prometheus::MetricFamily>* catalog) {
  prometheus::MetricFamily entry;
  entry.name = name;
  entry.help = help;
  entry.type = type;
  catalog->push_back(std::move(entry));
  return builder.Name(name).Help(help).Register(r);
}

// Builds every family. prometheus-cpp reports errors (a name registered twice
// with another type, an invalid name) by throwing; Create() turns that into a
// status.
RolloutFamilies RegisterAll(Registry& r,
                            std::vector<prometheus::MetricFamily>* catalog) {
  const auto CounterFamily = [&](const std::string& name,
                                 const std::string& help) -> Family<Counter>& {
    return Register<Counter>(prometheus::BuildCounter(), r, name, help,
                             prometheus::MetricType::Counter, catalog);
  };
  const auto GaugeFamily = [&](const std::string& name,
                               const std::string& help) -> Family<Gauge>& {
    return Register<Gauge>(prometheus::BuildGauge(), r, name, help,
                           prometheus::MetricType::Gauge, catalog);
  };
  const auto HistogramFamily =
      [&](const std::string& name,
          const std::string& help) -> Family<Histogram>& {
    return Register<Histogram>(prometheus::BuildHistogram(), r, name, help,
                               prometheus::MetricType::Histogram, catalog);
  };
  return RolloutFamilies{
      // Front end.
      GaugeFamily("rollout_build_info",
                  "Build identity (always 1): version, commit, backend."),
      CounterFamily("rollout_requests_total",
                    "Finished RPCs by method and gRPC status code name."),
      CounterFamily("rollout_request_validation_failures_total",
                    "INVALID_ARGUMENT answers by offending request field."),
      CounterFamily("rollout_admission_rejections_total",
                    "RESOURCE_EXHAUSTED answers at admission, by reason."),
      GaugeFamily("rollout_config_generation",
                  "Generation of the applied config (starts at 1)."),
      CounterFamily("rollout_config_reloads_total",
                    "Admin.ReloadConfig outcomes."),
      GaugeFamily("rollout_config_last_reload_success",
                  "1 if the last non-dry-run reload applied, 0 if rejected."),
      GaugeFamily("rollout_requests_running",
                  "Groups being generated, per worker."),
      GaugeFamily("rollout_requests_waiting",
                  "Groups admitted but not yet running, per worker "
                  "(worker=\"frontend\": rolloutd's own queue)."),
      GaugeFamily("rollout_queue_tokens",
                  "Token budget (prompt + n x max_tokens) of admitted, "
                  "unfinished groups."),
      GaugeFamily("rollout_paused", "1 while Admin.Pause is in effect."),
      GaugeFamily("rollout_progress_stalled",
                  "1 when requests are running but no token came out for "
                  "health.watchdog_seconds."),
      GaugeFamily("rollout_last_token_age_seconds",
                  "Seconds since the worker last produced a token (0 when "
                  "idle)."),
      // Work.
      CounterFamily("rollout_generation_tokens_total",
                    "Sampled tokens (throughput), by worker and the step "
                    "they came from: replay_ssm=on a ring decode step, off a "
                    "plain one or the prefill (each completion's first "
                    "token)."),
      CounterFamily("rollout_prompt_tokens_total",
                    "Prompt tokens requested (n x prompt length per group)."),
      CounterFamily("rollout_prompt_tokens_computed_total",
                    "Prompt tokens actually prefilled (a group's prompt "
                    "once)."),
      CounterFamily("rollout_completions_total",
                    "Finished completions by finish reason."),
      CounterFamily("rollout_preemptions_total",
                    "Sequences preempted for lack of slots."),
      CounterFamily("rollout_state_forks_total",
                    "GRPO group forks (state copies)."),
      HistogramFamily("rollout_batch_size", "Rows per engine step."),
      HistogramFamily("rollout_queue_seconds",
                      "Admission to first scheduled step."),
      HistogramFamily("rollout_time_to_first_token_seconds",
                      "Admission to first sampled token."),
      HistogramFamily("rollout_time_per_output_token_seconds",
                      "Per completion: (last token - first token) / "
                      "(tokens - 1)."),
      HistogramFamily("rollout_e2e_request_seconds",
                      "Request arrival to final response."),
      HistogramFamily("rollout_prefill_seconds",
                      "Engine steps that contained prefill rows."),
      HistogramFamily("rollout_decode_step_seconds",
                      "Engine steps with decode rows only."),
      GaugeFamily("rollout_state_slots_used", "GDN state slots in use."),
      GaugeFamily("rollout_state_slots_capacity",
                  "GDN state slots in the pool."),
      GaugeFamily("rollout_kv_blocks_used", "Paged KV blocks in use."),
      GaugeFamily("rollout_kv_blocks_capacity", "Paged KV blocks in the pool."),
      GaugeFamily("rollout_replayssm_rings_used", "ReplaySSM rings in use."),
      GaugeFamily("rollout_replayssm_rings_capacity",
                  "ReplaySSM rings in the pool."),
      GaugeFamily("rollout_pool_used_bytes",
                  "Bytes of pool elements in use, by pool (state, ring, kv)."),
      GaugeFamily("rollout_pool_peak_bytes",
                  "High-water mark of rollout_pool_used_bytes."),
      GaugeFamily("rollout_gpu_memory_used_bytes",
                  "Device memory in use (device=\"cpu\": process resident "
                  "memory)."),
      GaugeFamily("rollout_gpu_memory_peak_bytes",
                  "High-water mark of rollout_gpu_memory_used_bytes."),
      // ReplaySSM.
      CounterFamily("rollout_replayssm_requests_total",
                    "Completions by requested ReplaySSM mode."),
      CounterFamily("rollout_replayssm_fallbacks_total",
                    "Requested ReplaySSM ON not honoured, by reason."),
      CounterFamily("rollout_replayssm_flushes_total",
                    "ReplaySSM checkpoint writes (ring flushes)."),
      // Weights and workers.
      GaugeFamily("rollout_weight_version", "Weight version serving now."),
      CounterFamily("rollout_weight_updates_total",
                    "Admin.UpdateWeights outcomes."),
      HistogramFamily("rollout_weight_update_seconds",
                      "UpdateWeights duration (load + validate + swap)."),
      GaugeFamily("rollout_weight_update_in_progress",
                  "1 during a weight update."),
      GaugeFamily("rollout_worker_ready",
                  "1 when the worker is started and serving."),
      CounterFamily("rollout_worker_restarts_total",
                    "Worker processes restarted after an exit."),
      GaugeFamily("rollout_worker_crashloop",
                  "1 while the worker is in restart back-off."),
  };
}

prometheus::Labels BuildLabels(const BuildInfo& build) {
  return {{"version", build.version},
          {"commit", build.commit},
          {"backend", build.backend}};
}

// Serves a registry plus HELP/TYPE-only entries for catalog families that
// have no series (see RolloutMetrics::Exposition).
class ExpositionCollectable : public prometheus::Collectable {
 public:
  ExpositionCollectable(std::shared_ptr<Registry> registry,
                        std::vector<prometheus::MetricFamily> catalog)
      : registry_(std::move(registry)), catalog_(std::move(catalog)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    absl::flat_hash_set<std::string> present;
    for (const auto& f : families) present.insert(f.name);
    for (const auto& entry : catalog_) {
      if (!present.contains(entry.name)) families.push_back(entry);
    }
    return families;
  }

 private:
  const std::shared_ptr<Registry> registry_;
  const std::vector<prometheus::MetricFamily> catalog_;
};

}  // namespace

const Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const kBuckets = new Histogram::BucketBoundaries{
      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
      2.5,   5,    10,    30,   60,  120,  300, 600};
  return *kBuckets;
}

const Histogram::BucketBoundaries& StepBuckets() {
  static const auto* const kBuckets =
      new Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02,
                                      0.04,   0.08,  0.16,   0.32,  0.64, 1.28};
  return *kBuckets;
}

const Histogram::BucketBoundaries& BatchSizeBuckets() {
  static const auto* const kBuckets = new Histogram::BucketBoundaries{
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  return *kBuckets;
}

absl::string_view ReloadResultLabel(ReloadResult result) {
  switch (result) {
    case ReloadResult::kApplied:
      return "applied";
    case ReloadResult::kRejected:
      return "rejected";
    case ReloadResult::kDryRun:
      return "dry_run";
    case ReloadResult::kUnauthenticated:
      return "unauthenticated";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<RolloutMetrics>> RolloutMetrics::Create(
    prometheus::Registry& registry, const BuildInfo& build) {
  std::unique_ptr<RolloutMetrics> metrics;
  std::vector<prometheus::MetricFamily> catalog;
  try {
    metrics.reset(new RolloutMetrics(RegisterAll(registry, &catalog)));
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("registering metric families: ", e.what()));
  }
  metrics->catalog_ = std::move(catalog);
  metrics->SetBuildInfo(build);
  const RolloutFamilies& f = metrics->families_;
  // Unlabelled histograms show their (empty) series from the start.
  f.queue_seconds.Add({}, LatencyBuckets());
  f.time_to_first_token_seconds.Add({}, LatencyBuckets());
  f.time_per_output_token_seconds.Add({}, StepBuckets());
  f.e2e_request_seconds.Add({}, LatencyBuckets());
  f.weight_update_seconds.Add({}, LatencyBuckets());
  f.weight_update_in_progress.Add({});
  metrics->last_reload_success_.Set(1);  // the start-up config loaded
  return metrics;
}

RolloutMetrics::RolloutMetrics(const RolloutFamilies& families)
    : families_(families),
      config_generation_(families.config_generation.Add({})),
      last_reload_success_(families.config_last_reload_success.Add({})),
      paused_(families.paused.Add({})),
      progress_stalled_(families.progress_stalled.Add({})),
      queue_tokens_(families.queue_tokens.Add({})),
      frontend_waiting_(
          families.requests_waiting.Add({{"worker", "frontend"}})) {}

std::shared_ptr<prometheus::Collectable> RolloutMetrics::Exposition(
    std::shared_ptr<prometheus::Registry> registry) const {
  return std::make_shared<ExpositionCollectable>(std::move(registry), catalog_);
}

void RolloutMetrics::RecordRequest(absl::string_view rpc,
                                   absl::string_view code) {
  families_.requests
      .Add({{"rpc", std::string(rpc)}, {"code", std::string(code)}})
      .Increment();
}

void RolloutMetrics::RecordValidationFailure(absl::string_view field) {
  families_.validation_failures.Add({{"field", std::string(field)}})
      .Increment();
}

void RolloutMetrics::RecordAdmissionRejection(absl::string_view reason) {
  families_.admission_rejections.Add({{"reason", std::string(reason)}})
      .Increment();
}

void RolloutMetrics::RecordReload(ReloadResult result) {
  families_.config_reloads
      .Add({{"result", std::string(ReloadResultLabel(result))}})
      .Increment();
  if (result == ReloadResult::kApplied) last_reload_success_.Set(1);
  if (result == ReloadResult::kRejected) last_reload_success_.Set(0);
}

void RolloutMetrics::SetConfigGeneration(uint64_t generation) {
  config_generation_.Set(static_cast<double>(generation));
}

void RolloutMetrics::SetBuildInfo(const BuildInfo& build) {
  MutexLock lock(&build_info_mu_);
  if (build_info_ != nullptr) families_.build_info.Remove(build_info_);
  build_info_ = &families_.build_info.Add(BuildLabels(build));
  build_info_->Set(1);
}

void RolloutMetrics::SetPaused(bool paused) { paused_.Set(paused ? 1 : 0); }

void RolloutMetrics::SetProgressStalled(bool stalled) {
  progress_stalled_.Set(stalled ? 1 : 0);
}

void RolloutMetrics::SetQueueTokens(int64_t tokens) {
  queue_tokens_.Set(static_cast<double>(tokens));
}

void RolloutMetrics::SetFrontendWaiting(int64_t requests) {
  frontend_waiting_.Set(static_cast<double>(requests));
}

}  // namespace rollout::metrics
