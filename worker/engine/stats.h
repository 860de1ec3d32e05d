// A snapshot of the engine's counters, gauges and histograms, in the shape of
// docs/METRICS.md (the worker process exports it; rolloutd merges snapshots
// of all workers). Counters are cumulative since the engine started;
// histograms hold cumulative bucket counts, so a consumer can publish them
// as Prometheus histograms directly.
#ifndef ROLLOUT_WORKER_ENGINE_STATS_H_
#define ROLLOUT_WORKER_ENGINE_STATS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace rollout::worker {

// A histogram accumulated since the engine started: counts[i] holds the
// observations in (bounds[i-1], bounds[i]] (per bucket, not cumulative across
// buckets); counts.back() those above the last bound.
struct Histogram {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;  // bounds.size() + 1
  double sum = 0.0;
  uint64_t count = 0;

  static Histogram Latency();    // seconds: 1 ms .. ~2 min, x2 buckets
  static Histogram BatchSize();  // rows: 1, 2, 4, ... 1024
  void Observe(double value);
};

// Indexes of the per-enum arrays below (values of the enums in request.h).
inline constexpr int kNumFinishReasons = 3;    // stop, length, aborted
inline constexpr int kNumFallbackReasons = 6;  // none + the closed set of 5
inline constexpr int kNumReplayModes = 4;      // default, on, off, auto

struct PoolStats {
  int used = 0;
  int total = 0;
  int64_t used_bytes = 0;
  int64_t peak_bytes = 0;
};

struct EngineStats {
  // ---- Work (counters).
  uint64_t generation_tokens_ring = 0;   // sampled from a ring decode step
  uint64_t generation_tokens_plain = 0;  // from plain decode or the prefill
  uint64_t prompt_tokens = 0;            // requested: n x prompt length
  uint64_t prompt_tokens_computed = 0;   // actually prefilled (once per group)
  uint64_t score_tokens = 0;             // teacher-forced tokens scored
  std::array<uint64_t, kNumFinishReasons> completions_by_finish{};
  uint64_t preemptions = 0;
  uint64_t state_forks = 0;  // state copies made by group forks
  uint64_t steps = 0;
  uint64_t step_errors = 0;  // backend errors (the step's requests aborted)
  uint64_t groups_finished = 0;
  uint64_t rejected_requests = 0;  // Enqueue refused (full, invalid, ...)

  // ---- ReplaySSM (counters).
  std::array<uint64_t, kNumReplayModes> completions_by_mode{};  // requested
  std::array<uint64_t, kNumFallbackReasons> fallbacks{};        // [0] unused
  uint64_t flushes = 0;  // checkpoint writes: in-step + FlushRing

  // ---- Gauges.
  int requests_running = 0;   // groups admitted and unfinished
  int requests_waiting = 0;   // groups not yet admitted
  int sequences_running = 0;  // completions holding a state slot
  int sequences_swapped = 0;  // preempted completions in host memory
  int64_t swap_bytes = 0;
  int64_t swap_peak_bytes = 0;
  PoolStats state_slots;
  PoolStats rings;
  PoolStats kv_blocks;
  int64_t device_used_bytes = 0;  // Backend::memory() (CPU: resident)
  int64_t device_peak_bytes = 0;
  int64_t weights_bytes = 0;
  int paused = 0;  // 0 no, 1 ABORT, 2 WAIT, 3 KEEP (PauseMode + 1)
  absl::Time last_token_time = absl::InfinitePast();  // watchdog

  // ---- Weights.
  int64_t weight_version = 0;
  uint64_t weight_updates_ok = 0;
  uint64_t weight_updates_rejected = 0;
  bool weight_update_in_progress = false;
  Histogram weight_update_seconds = Histogram::Latency();

  // ---- Histograms.
  Histogram batch_size = Histogram::BatchSize();   // rows per step
  Histogram queue_seconds = Histogram::Latency();  // arrival -> admission
  Histogram time_to_first_token_seconds = Histogram::Latency();
  Histogram time_per_output_token_seconds = Histogram::Latency();
  Histogram e2e_request_seconds = Histogram::Latency();   // per group
  Histogram prefill_step_seconds = Histogram::Latency();  // steps with prefill
  Histogram decode_step_seconds = Histogram::Latency();   // decode-only steps
};

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_STATS_H_
