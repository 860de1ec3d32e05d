#include "server/workers/worker_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rollout::server::workers {
namespace {

using rollout::worker::v1::WorkerStats;

}  // namespace

WorkerMetrics::WorkerMetrics(metrics::RolloutMetrics* metrics, int index)
    : metrics_(metrics), label_(absl::StrCat(index)) {
  if (metrics_ == nullptr) return;
  const auto& f = metrics_->families();
  // The series a dashboard expects for every worker, present from the start.
  f.worker_ready.Add({{"worker", label_}}).Set(0);
  f.worker_crashloop.Add({{"worker", label_}}).Set(0);
  f.worker_restarts.Add({{"worker", label_}});
}

void WorkerMetrics::NewProcess() {
  counters_.clear();
  histograms_.clear();
}

void WorkerMetrics::SetDevice(const std::string& device) { device_ = device; }

void WorkerMetrics::Add(prometheus::Counter& counter, const std::string& key,
                        uint64_t value) {
  uint64_t& last = counters_[key];
  // A snapshot never goes backwards within one process; if it did, count
  // nothing rather than a negative increase.
  if (value > last) counter.Increment(static_cast<double>(value - last));
  last = std::max(last, value);
}

void WorkerMetrics::AddHistogram(
    prometheus::Family<prometheus::Histogram>& family, const std::string& key,
    const rollout::worker::v1::Histogram& h) {
  if (h.bounds_size() == 0 || h.counts_size() != h.bounds_size() + 1) return;
  prometheus::Histogram*& series = histogram_series_[key];
  if (series == nullptr) {
    series = &family.Add({{"worker", label_}},
                         prometheus::Histogram::BucketBoundaries(
                             h.bounds().begin(), h.bounds().end()));
  }
  rollout::worker::v1::Histogram& last = histograms_[key];
  if (last.counts_size() != h.counts_size()) {
    last.Clear();
    last.mutable_counts()->Resize(h.counts_size(), 0);
  }
  std::vector<double> increments(h.counts_size(), 0.0);
  bool any = false;
  for (int i = 0; i < h.counts_size(); ++i) {
    if (h.counts(i) > last.counts(i)) {
      increments[i] = static_cast<double>(h.counts(i) - last.counts(i));
      any = true;
    }
  }
  if (any)
    series->ObserveMultiple(increments, std::max(0.0, h.sum() - last.sum()));
  last = h;
}

void WorkerMetrics::Merge(const WorkerStats& s) {
  if (metrics_ == nullptr) return;
  const auto& f = metrics_->families();
  const prometheus::Labels w = {{"worker", label_}};
  Add(f.generation_tokens.Add({{"worker", label_}, {"replay_ssm", "on"}}),
      "gen_ring", s.generation_tokens_ring());
  Add(f.generation_tokens.Add({{"worker", label_}, {"replay_ssm", "off"}}),
      "gen_plain", s.generation_tokens_plain());
  Add(f.prompt_tokens.Add(w), "prompt", s.prompt_tokens());
  Add(f.prompt_tokens_computed.Add(w), "prompt_computed",
      s.prompt_tokens_computed());
  Add(f.completions.Add({{"worker", label_}, {"finish_reason", "stop"}}),
      "done_stop", s.completions_stop());
  Add(f.completions.Add({{"worker", label_}, {"finish_reason", "length"}}),
      "done_length", s.completions_length());
  Add(f.completions.Add({{"worker", label_}, {"finish_reason", "aborted"}}),
      "done_aborted", s.completions_aborted());
  Add(f.preemptions.Add(w), "preemptions", s.preemptions());
  Add(f.state_forks.Add(w), "forks", s.state_forks());
  for (const auto& [mode, count] : s.completions_by_mode()) {
    Add(f.replayssm_requests.Add({{"worker", label_}, {"mode", mode}}),
        absl::StrCat("mode_", mode), count);
  }
  for (const auto& [reason, count] : s.fallbacks()) {
    Add(f.replayssm_fallbacks.Add({{"worker", label_}, {"reason", reason}}),
        absl::StrCat("fallback_", reason), count);
  }
  Add(f.replayssm_flushes.Add(w), "flushes", s.flushes());

  f.requests_running.Add(w).Set(s.requests_running());
  f.requests_waiting.Add(w).Set(s.requests_waiting());
  f.state_slots_used.Add(w).Set(s.state_slots().used());
  f.kv_blocks_used.Add(w).Set(s.kv_blocks().used());
  f.replayssm_rings_used.Add(w).Set(s.rings().used());
  // Pool sizes, so that a dashboard can show use as used / capacity. They are
  // set from every snapshot (not once) because a restarted worker may come
  // back with another config.
  f.state_slots_capacity.Add(w).Set(s.state_slots().total());
  f.kv_blocks_capacity.Add(w).Set(s.kv_blocks().total());
  f.replayssm_rings_capacity.Add(w).Set(s.rings().total());
  const std::pair<const char*, const rollout::worker::v1::PoolUse*> pools[] = {
      {"state", &s.state_slots()},
      {"ring", &s.rings()},
      {"kv", &s.kv_blocks()}};
  for (const auto& [pool, use] : pools) {
    const prometheus::Labels labels = {{"worker", label_}, {"pool", pool}};
    f.pool_used_bytes.Add(labels).Set(static_cast<double>(use->used_bytes()));
    f.pool_peak_bytes.Add(labels).Set(static_cast<double>(use->peak_bytes()));
  }
  const prometheus::Labels device = {{"worker", label_}, {"device", device_}};
  f.gpu_memory_used_bytes.Add(device).Set(
      static_cast<double>(s.device_used_bytes()));
  f.gpu_memory_peak_bytes.Add(device).Set(
      static_cast<double>(s.device_peak_bytes()));
  f.weight_version.Add(w).Set(static_cast<double>(s.weight_version()));

  AddHistogram(f.batch_size, "batch_size", s.batch_size());
  AddHistogram(f.prefill_seconds, "prefill", s.prefill_step_seconds());
  AddHistogram(f.decode_step_seconds, "decode", s.decode_step_seconds());
}

void WorkerMetrics::SetReady(bool ready) {
  if (metrics_ == nullptr) return;
  metrics_->families().worker_ready.Add({{"worker", label_}}).Set(ready);
}

void WorkerMetrics::SetCrashLoop(bool looping) {
  if (metrics_ == nullptr) return;
  metrics_->families().worker_crashloop.Add({{"worker", label_}}).Set(looping);
}

void WorkerMetrics::CountRestart() {
  if (metrics_ == nullptr) return;
  metrics_->families().worker_restarts.Add({{"worker", label_}}).Increment();
}

void WorkerMetrics::SetLastTokenAge(double seconds) {
  if (metrics_ == nullptr) return;
  metrics_->families()
      .last_token_age_seconds.Add({{"worker", label_}})
      .Set(seconds);
}

void WorkerMetrics::SetWeightVersion(uint64_t version) {
  if (metrics_ == nullptr) return;
  metrics_->families()
      .weight_version.Add({{"worker", label_}})
      .Set(static_cast<double>(version));
}

void WorkerMetrics::ProcessGone() {
  if (metrics_ == nullptr) return;
  const auto& f = metrics_->families();
  const prometheus::Labels w = {{"worker", label_}};
  f.requests_running.Add(w).Set(0);
  f.requests_waiting.Add(w).Set(0);
  f.state_slots_used.Add(w).Set(0);
  f.kv_blocks_used.Add(w).Set(0);
  f.replayssm_rings_used.Add(w).Set(0);
  for (const char* pool : {"state", "ring", "kv"}) {
    f.pool_used_bytes.Add({{"worker", label_}, {"pool", pool}}).Set(0);
  }
  f.gpu_memory_used_bytes.Add({{"worker", label_}, {"device", device_}}).Set(0);
  f.last_token_age_seconds.Add(w).Set(0);
}

}  // namespace rollout::server::workers
