// RolloutMetrics: every metric family of docs/METRICS.md, registered once at
// start-up in one injected prometheus-cpp registry (no singletons).
//
//   prometheus::Registry registry;
//   ASSIGN_OR_RETURN(std::unique_ptr<RolloutMetrics> metrics,
//                    RolloutMetrics::Create(registry, BuildInfo{...}));
//   metrics->RecordRequest("Generate", "INVALID_ARGUMENT");
//   metrics->families().generation_tokens.Add({{"worker", "0"}, ...})...
//
// All families exist from start-up, so /metrics shows their HELP and TYPE lines
// even before a worker reports a value. Unlabelled gauges and histograms get
// their one series at start-up too. The families whose values come from worker
// snapshots (the "Work", "ReplaySSM" and "Weights and workers" sections) are
// reachable through families() for the code that merges those snapshots.
//
// Thread-safety: every method may be called from any thread (prometheus-cpp
// families and metrics are internally synchronised). Family::Add locks and
// hashes the labels, so hot paths should resolve a child once and keep the
// reference.
#ifndef ROLLOUT_METRICS_ROLLOUT_METRICS_H_
#define ROLLOUT_METRICS_ROLLOUT_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace rollout::metrics {

// Bucket boundaries (seconds) for request latencies: queue, time to first
// token, end to end, weight updates.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();
// Bucket boundaries (seconds) for per-token and per-step times: time per
// output token, prefill and decode steps.
const prometheus::Histogram::BucketBoundaries& StepBuckets();
// Bucket boundaries (rows) for engine batch sizes.
const prometheus::Histogram::BucketBoundaries& BatchSizeBuckets();

struct BuildInfo {
  std::string version;  // rolloutd version, e.g. "0.1.0"
  std::string commit;   // source commit, "unknown" if not stamped
  std::string backend;  // "cpu", "cuda", "cpu+cuda"; "none" without workers
};

// Outcome label values of rollout_config_reloads_total{result}.
enum class ReloadResult { kApplied, kRejected, kDryRun, kUnauthenticated };
absl::string_view ReloadResultLabel(ReloadResult result);

// References to every family; names and labels as in docs/METRICS.md.
struct RolloutFamilies {
  // Front end (rolloutd).
  prometheus::Family<prometheus::Gauge>& build_info;
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Counter>& validation_failures;
  prometheus::Family<prometheus::Counter>& admission_rejections;
  prometheus::Family<prometheus::Gauge>& config_generation;
  prometheus::Family<prometheus::Counter>& config_reloads;
  prometheus::Family<prometheus::Gauge>& config_last_reload_success;
  prometheus::Family<prometheus::Gauge>& requests_running;
  prometheus::Family<prometheus::Gauge>& requests_waiting;
  prometheus::Family<prometheus::Gauge>& queue_tokens;
  prometheus::Family<prometheus::Gauge>& paused;
  prometheus::Family<prometheus::Gauge>& progress_stalled;
  prometheus::Family<prometheus::Gauge>& last_token_age_seconds;
  // Work (merged from worker snapshots).
  prometheus::Family<prometheus::Counter>& generation_tokens;
  prometheus::Family<prometheus::Counter>& prompt_tokens;
  prometheus::Family<prometheus::Counter>& prompt_tokens_computed;
  prometheus::Family<prometheus::Counter>& completions;
  prometheus::Family<prometheus::Counter>& preemptions;
  prometheus::Family<prometheus::Counter>& state_forks;
  prometheus::Family<prometheus::Histogram>& batch_size;
  prometheus::Family<prometheus::Histogram>& queue_seconds;
  prometheus::Family<prometheus::Histogram>& time_to_first_token_seconds;
  prometheus::Family<prometheus::Histogram>& time_per_output_token_seconds;
  prometheus::Family<prometheus::Histogram>& e2e_request_seconds;
  prometheus::Family<prometheus::Histogram>& prefill_seconds;
  prometheus::Family<prometheus::Histogram>& decode_step_seconds;
  prometheus::Family<prometheus::Gauge>& state_slots_used;
  prometheus::Family<prometheus::Gauge>& state_slots_capacity;
  prometheus::Family<prometheus::Gauge>& kv_blocks_used;
  prometheus::Family<prometheus::Gauge>& kv_blocks_capacity;
  prometheus::Family<prometheus::Gauge>& replayssm_rings_used;
  prometheus::Family<prometheus::Gauge>& replayssm_rings_capacity;
  prometheus::Family<prometheus::Gauge>& pool_used_bytes;
  prometheus::Family<prometheus::Gauge>& pool_peak_bytes;
  prometheus::Family<prometheus::Gauge>& gpu_memory_used_bytes;
  prometheus::Family<prometheus::Gauge>& gpu_memory_peak_bytes;
  // ReplaySSM.
  prometheus::Family<prometheus::Counter>& replayssm_requests;
  prometheus::Family<prometheus::Counter>& replayssm_fallbacks;
  prometheus::Family<prometheus::Counter>& replayssm_flushes;
  // Weights and workers.
  prometheus::Family<prometheus::Gauge>& weight_version;
  prometheus::Family<prometheus::Counter>& weight_updates;
  prometheus::Family<prometheus::Histogram>& weight_update_seconds;
  prometheus::Family<prometheus::Gauge>& weight_update_in_progress;
  prometheus::Family<prometheus::Gauge>& worker_ready;
  prometheus::Family<prometheus::Counter>& worker_restarts;
  prometheus::Family<prometheus::Gauge>& worker_crashloop;
};

class RolloutMetrics {
 public:
  // Registers every family in `registry` (which must outlive the result).
  // Fails (INTERNAL) if a family is already registered under another type.
  static absl::StatusOr<std::unique_ptr<RolloutMetrics>> Create(
      prometheus::Registry& registry, const BuildInfo& build);

  RolloutMetrics(const RolloutMetrics&) = delete;
  RolloutMetrics& operator=(const RolloutMetrics&) = delete;

  const RolloutFamilies& families() const { return families_; }

  // What /metrics should serve: everything in `registry` (the one given to
  // Create) plus a HELP/TYPE-only entry for each catalog family that has no
  // series yet. prometheus-cpp leaves families without series out of a scrape,
  // but dashboards, alert rules and `promtool` expect every name from the
  // start.
  std::shared_ptr<prometheus::Collectable> Exposition(
      std::shared_ptr<prometheus::Registry> registry) const;

  // A finished RPC: method name ("Generate") and gRPC status code name
  // ("OK", "INVALID_ARGUMENT", ...).
  void RecordRequest(absl::string_view rpc, absl::string_view code);
  // An INVALID_ARGUMENT caused by `field` (a proto field path, no indices).
  void RecordValidationFailure(absl::string_view field);
  // A RESOURCE_EXHAUSTED at admission ("queue_requests", "queue_tokens",
  // "client_concurrency").
  void RecordAdmissionRejection(absl::string_view reason);
  // A ReloadConfig outcome; also sets rollout_config_last_reload_success for
  // kApplied (1) and kRejected (0).
  void RecordReload(ReloadResult result);
  void SetConfigGeneration(uint64_t generation);
  // Replaces the one rollout_build_info series (e.g. when the backend becomes
  // known).
  void SetBuildInfo(const BuildInfo& build);

  // Front-end gauges.
  void SetPaused(bool paused);
  void SetProgressStalled(bool stalled);
  void SetQueueTokens(int64_t tokens);
  void SetFrontendWaiting(int64_t requests);

 private:
  explicit RolloutMetrics(const RolloutFamilies& families);

  RolloutFamilies families_;
  // Name, help and type of every catalog family, without series.
  std::vector<prometheus::MetricFamily> catalog_;
  // Unlabelled series, resolved once.
  prometheus::Gauge& config_generation_;
  prometheus::Gauge& last_reload_success_;
  prometheus::Gauge& paused_;
  prometheus::Gauge& progress_stalled_;
  prometheus::Gauge& queue_tokens_;
  prometheus::Gauge& frontend_waiting_;
  Mutex build_info_mu_;
  prometheus::Gauge* build_info_ ABSL_GUARDED_BY(build_info_mu_) = nullptr;
};

}  // namespace rollout::metrics

#endif  // ROLLOUT_METRICS_ROLLOUT_METRICS_H_
