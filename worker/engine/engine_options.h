// Options of the rollout engine, and how its pools are sized from a memory
// budget (Backend::Footprint).
#ifndef ROLLOUT_WORKER_ENGINE_ENGINE_OPTIONS_H_
#define ROLLOUT_WORKER_ENGINE_ENGINE_OPTIONS_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/backend.h"
#include "worker/engine/request.h"

namespace rollout::worker {

struct ReplaySsmOptions {
  bool enabled = true;   // false: every ON is a disabled_by_config fallback
  int ring_length = 16;  // L: the checkpoint is written once every L steps
  // Rings in the pool: -1 = one per state slot; 0 = no ring path
  // (disabled_by_config).
  int num_rings = -1;
  // AUTO uses the ring when a step has at least this many decode rows (the
  // measured crossover of the device; below it packed decode is faster).
  int auto_min_batch = 32;
  ReplayMode default_mode = ReplayMode::kOff;  // what kDefault means

  absl::Status Validate() const;
};

struct EngineOptions {
  // State slots = concurrent completions (a group of n holds n). Also the
  // largest n a group may ask for.
  int max_num_seqs = 64;
  // Bytes for all pools together (state slots + rings + KV blocks).
  int64_t memory_budget_bytes = int64_t{1} << 30;
  int kv_block_size = 16;
  // 0: as many as the budget leaves after slots and rings, capped at
  // max_num_seqs full-length sequences.
  int num_kv_blocks = 0;
  int max_model_len = 0;        // 0: the model's max_position_embeddings
  int max_batch_tokens = 2048;  // tokens per step (token budget)
  int max_rows_per_step = 0;    // 0: max_num_seqs (capped by the backend)
  // Prefill rows are chunks at multiples of this (absolute positions), so a
  // sequence is chunked the same way whatever the load. <= max_batch_tokens.
  int prefill_chunk_tokens = 256;
  // KV blocks per completion that must be free (besides the prompt's) to
  // admit a group; limits preemption right after a fork.
  int admission_headroom_blocks = 1;
  int max_waiting_groups = 1024;  // Enqueue beyond: RESOURCE_EXHAUSTED
  int max_top_logprobs = 20;
  ReplaySsmOptions replay;

  absl::Status Validate() const;
};

// Options that may change while the engine runs (config reload), applied
// between steps. Unset fields keep their value. default_mode applies to
// requests submitted afterwards.
struct EngineReconfig {
  // replay.enabled: off makes ON rows fall back (kDisabledByConfig) and AUTO
  // plain from the next step; on again uses the ring pool sized at start.
  std::optional<bool> replay_enabled;
  std::optional<int> replay_auto_min_batch;
  std::optional<ReplayMode> replay_default_mode;

  absl::Status Validate() const;
};

// Pool sizes for Backend::InitPools, plus what they cost.
struct PoolPlan {
  model::PoolConfig pools;
  model::PoolFootprint footprint;
  int max_model_len = 0;
  int64_t total_bytes = 0;
};

// Chooses pool sizes: max_num_seqs state slots, the configured rings, and KV
// blocks from what remains of the budget. Fails (naming the option to change)
// if the budget cannot hold the slots and rings plus the KV of one
// max_model_len sequence.
absl::StatusOr<PoolPlan> PlanPools(const EngineOptions& options,
                                   const model::ModelInfo& info,
                                   const model::PoolFootprint& footprint);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_ENGINE_OPTIONS_H_
