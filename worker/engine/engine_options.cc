#include "worker/engine/engine_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rollout::worker {

absl::Status ReplaySsmOptions::Validate() const {
  if (ring_length < 1 || ring_length > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replay.ring_length must be in [1, 256], got ", ring_length));
  }
  if (num_rings < -1) {
    return absl::InvalidArgumentError("replay.num_rings must be >= -1");
  }
  if (auto_min_batch < 1) {
    return absl::InvalidArgumentError("replay.auto_min_batch must be >= 1");
  }
  return absl::OkStatus();
}

absl::Status EngineOptions::Validate() const {
  if (max_num_seqs < 1) {
    return absl::InvalidArgumentError("max_num_seqs must be >= 1");
  }
  if (memory_budget_bytes < 0) {
    return absl::InvalidArgumentError("memory_budget_bytes must be >= 0");
  }
  if (kv_block_size < 1 || kv_block_size > 4096) {
    return absl::InvalidArgumentError("kv_block_size must be in [1, 4096]");
  }
  if (num_kv_blocks < 0 || max_model_len < 0 || max_rows_per_step < 0) {
    return absl::InvalidArgumentError(
        "num_kv_blocks, max_model_len and max_rows_per_step must be >= 0");
  }
  if (max_batch_tokens < 1) {
    return absl::InvalidArgumentError("max_batch_tokens must be >= 1");
  }
  if (prefill_chunk_tokens < 1 || prefill_chunk_tokens > max_batch_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefill_chunk_tokens must be in [1, max_batch_tokens = ",
                     max_batch_tokens, "], got ", prefill_chunk_tokens));
  }
  if (admission_headroom_blocks < 0) {
    return absl::InvalidArgumentError("admission_headroom_blocks must be >= 0");
  }
  if (max_waiting_groups < 1) {
    return absl::InvalidArgumentError("max_waiting_groups must be >= 1");
  }
  if (max_top_logprobs < 0) {
    return absl::InvalidArgumentError("max_top_logprobs must be >= 0");
  }
  return replay.Validate();
}

absl::Status EngineReconfig::Validate() const {
  if (replay_auto_min_batch.has_value() && *replay_auto_min_batch < 1) {
    return absl::InvalidArgumentError("replay.auto_min_batch must be >= 1");
  }
  return absl::OkStatus();
}

absl::StatusOr<PoolPlan> PlanPools(const EngineOptions& o,
                                   const model::ModelInfo& info,
                                   const model::PoolFootprint& fp) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  PoolPlan plan;
  plan.footprint = fp;
  plan.max_model_len =
      o.max_model_len > 0
          ? std::min(o.max_model_len, info.max_position_embeddings)
          : info.max_position_embeddings;
  if (plan.max_model_len < 2) {
    return absl::InvalidArgumentError("max_model_len must be >= 2");
  }
  model::PoolConfig& p = plan.pools;
  p.num_state_slots = o.max_num_seqs;
  p.ring_length = o.replay.ring_length;
  p.kv_block_size = o.kv_block_size;
  p.num_ring_slots = !o.replay.enabled        ? 0
                     : o.replay.num_rings < 0 ? o.max_num_seqs
                                              : o.replay.num_rings;
  const int64_t fixed = fp.state_slot_bytes * p.num_state_slots +
                        fp.ring_slot_bytes * p.num_ring_slots;
  const int64_t one_seq_blocks =
      (plan.max_model_len + o.kv_block_size - 1) / o.kv_block_size;
  const int64_t cap = one_seq_blocks * o.max_num_seqs;
  int64_t blocks;
  if (o.num_kv_blocks > 0) {
    blocks = o.num_kv_blocks;
  } else if (fp.kv_block_bytes == 0) {
    blocks = cap;  // no attention layers: KV bookkeeping costs nothing
  } else {
    blocks = std::min(cap, std::max<int64_t>(0, o.memory_budget_bytes - fixed) /
                               fp.kv_block_bytes);
  }
  blocks = std::min<int64_t>(blocks, 1 << 30);
  p.num_kv_blocks = static_cast<int>(blocks);
  plan.total_bytes = fixed + fp.kv_block_bytes * blocks;
  if (plan.total_bytes > o.memory_budget_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "pools need ", plan.total_bytes, " bytes (", p.num_state_slots,
        " state slots x ", fp.state_slot_bytes, ", ", p.num_ring_slots,
        " rings x ", fp.ring_slot_bytes, ", ", blocks, " KV blocks x ",
        fp.kv_block_bytes, ") but memory_budget_bytes is ",
        o.memory_budget_bytes,
        ": lower max_num_seqs / replay.num_rings / num_kv_blocks or raise "
        "the budget"));
  }
  if (blocks < one_seq_blocks) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "memory_budget_bytes leaves ", blocks, " KV blocks, fewer than the ",
        one_seq_blocks, " of one max_model_len (", plan.max_model_len,
        ") sequence: lower max_model_len or max_num_seqs, or raise the "
        "budget"));
  }
  if (absl::Status s = p.Validate(); !s.ok()) return s;
  return plan;
}

}  // namespace rollout::worker
