// The model backend interface: what the engine (worker/) needs from a model
// running on some device.
//
// Two implementations: model/cpu (fp32, the exact oracle, serves where there is
// no GPU) and, later, model/cuda. The engine is written against this interface
// only, so it runs unchanged on both.
//
// Ownership of state: the backend owns the storage of every pool (GDN state
// slots, ReplaySSM rings, paged KV blocks); the engine owns the *bookkeeping*
// (which slot/ring/block belongs to which sequence, reference counts, ring
// cursors). Indices are dense integers in [0, pool size).
//
// Threading: a Backend is used by one thread at a time (the engine thread owns
// it). Methods are not thread-safe.
//
// Typical use by the engine:
//   ASSIGN_OR_RETURN(PoolFootprint fp, backend->Footprint(ring_length,
//   block_size));
//   ... choose pool sizes from a memory budget ...
//   RETURN_IF_ERROR(backend->InitPools(pools));
//   RETURN_IF_ERROR(backend->ResetState(slot));             // before a new
//   sequence's prefill RETURN_IF_ERROR(backend->Forward(batch, &out)); // mixed
//   prefill + decode rows RETURN_IF_ERROR(backend->CopyState(slot,
//   other_slot));  // GRPO fork (after a flush)
#ifndef ROLLOUT_MODEL_BACKEND_H_
#define ROLLOUT_MODEL_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace rollout::model {

// What the engine needs to know about the loaded model (filled by the backend
// from the HF config).
struct ModelInfo {
  std::string
      model_type;  // "qwen3_next", "qwen3_5", "qwen3_5_moe" (as in config.json)
  int vocab_size = 0;  // logits per row
  int num_layers = 0;  // decoder layers
  int num_gdn_layers =
      0;  // linear_attention layers (0: ReplaySSM has nothing to do)
  int num_attention_layers = 0;  // full_attention layers (own paged KV)
  int max_position_embeddings = 0;
  std::vector<int32_t>
      eos_token_ids;  // from config.json / generation_config.json; may be empty
};

// Bytes of one element of each pool, so the engine can size pools from a memory
// budget.
struct PoolFootprint {
  int64_t state_slot_bytes =
      0;  // all GDN layers: fp32 recurrent state [HV,V,K] + conv state
  int64_t ring_slot_bytes =
      0;  // all GDN layers: one ReplaySSM ring of the requested length
  int64_t kv_block_bytes =
      0;  // all attention layers: K and V of `block_size` tokens
};

struct PoolConfig {
  int num_state_slots = 0;  // concurrent sequences (GDN + conv state)
  int num_ring_slots =
      0;  // concurrent ReplaySSM ON rows; 0 disables the ring path
  int ring_length =
      16;  // L: ring entries; the checkpoint is written once every L steps
  int kv_block_size = 16;  // tokens per paged KV block
  int num_kv_blocks =
      0;  // total KV blocks (shared by all attention layers' pools)

  absl::Status Validate() const;
};

// ReplaySSM for one decode row. ring_slot < 0: plain decode (state read +
// written every step). Otherwise the row decodes through the ring: the state
// slot holds the checkpoint C, the ring holds `write_pos` committed entries
// since C (0 <= write_pos < ring_length). If `flush` is set or write_pos ==
// ring_length - 1, the step materialises S_t into the state slot and the ring
// is empty afterwards (the engine then sets write_pos = 0); otherwise the step
// appends at write_pos (the engine then advances write_pos by one).
// gdn_replayssm.md section 4 has the math.
struct ReplayRow {
  int ring_slot = -1;
  int write_pos = 0;
  bool flush = false;
};

enum class LogitsWanted {
  kNone,  // middle chunk of a chunked prefill: only the state advances
  kLast,  // logits of the last token of the row (generation)
  kAll,   // logits of every token of the row (Score: teacher-forced logprobs;
          // golden tests)
};

// One sequence's work in a step: a prefill chunk (several tokens) or a decode
// step (one token).
struct ForwardRow {
  absl::Span<const int32_t> tokens;  // tokens to feed now; size >= 1
  int32_t start_pos =
      0;  // position of tokens[0] = tokens already in this row's state
  int32_t state_slot =
      -1;  // GDN + conv state slot (ResetState before position 0)
  // Paged KV: block ids covering positions [0, start_pos + tokens.size()), in
  // order. Blocks are written for positions >= start_pos, so a block shared
  // with another sequence (GRPO prompt blocks) must only hold positions <
  // start_pos (the engine copies-on-write before that).
  absl::Span<const int32_t> kv_blocks;
  ReplayRow replay;  // decode rows only (tokens.size() == 1); prefill rows must
                     // have ring_slot < 0
  LogitsWanted logits = LogitsWanted::kLast;
};

struct ForwardBatch {
  std::vector<ForwardRow> rows;
};

struct ForwardOutput {
  // Row-major [num_logit_rows, vocab_size] fp32 raw logits (no temperature, no
  // processing).
  std::vector<float> logits;
  // For each batch row, the index of its first logits row in `logits` and how
  // many it has (0 for kNone, 1 for kLast, tokens.size() for kAll).
  std::vector<int32_t> logits_offset;
  std::vector<int32_t> logits_count;
  int32_t rows_flushed =
      0;  // ReplaySSM rows whose checkpoint was written this step (metrics)
};

struct BackendCapabilities {
  std::string name;         // "cpu" or "cuda"
  bool replay_ssm = false;  // ReplayRow with ring_slot >= 0 supported
  bool bf16_ring =
      false;  // ring entries may be stored in bf16 (an option; fp32 is exact)
  int max_rows_per_step = 0;  // 0 = unlimited
};

struct MemoryStats {
  int64_t weights_bytes = 0;
  int64_t pools_bytes = 0;  // all pools as allocated by InitPools
  int64_t device_used_bytes =
      0;  // device memory in use (CPU backend: process resident bytes)
  int64_t device_peak_bytes = 0;  // high-water mark of device_used_bytes
};

// Host copy of one sequence's state (for preemption by swap-out, and tests).
// Contains the GDN + conv state of a slot (which must be flushed: no live ring
// entries) and the listed KV blocks.
struct StateSnapshot {
  std::vector<uint8_t> state;
  std::vector<uint8_t> kv;
  int32_t num_kv_blocks = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const ModelInfo& info() const = 0;
  virtual BackendCapabilities capabilities() const = 0;

  // Sizes of pool elements for a given ring length and KV block size.
  virtual absl::StatusOr<PoolFootprint> Footprint(int ring_length,
                                                  int kv_block_size) const = 0;
  // (Re)allocates every pool; previous contents are lost. Call before the first
  // Forward.
  virtual absl::Status InitPools(const PoolConfig& pools) = 0;

  // Zeroes the GDN recurrent and conv state of `slot` (a new sequence starts at
  // position 0).
  virtual absl::Status ResetState(int slot) = 0;
  // dst := src for GDN + conv state (GRPO fork). src must be flushed (no live
  // ring entries).
  virtual absl::Status CopyState(int src_slot, int dst_slot) = 0;
  // dst := src for one KV block in every attention layer (copy-on-write of a
  // shared block).
  virtual absl::Status CopyKvBlock(int src_block, int dst_block) = 0;
  // Folds `write_pos` ring entries into the checkpoint of `state_slot` without
  // feeding a token, so the slot holds the exact current state (before fork,
  // export, switching a row to plain decode).
  virtual absl::Status FlushRing(int state_slot, int ring_slot,
                                 int write_pos) = 0;

  // Runs one model step over a mixed batch of prefill and decode rows. Rows are
  // independent: each row's result depends only on its own tokens and state,
  // never on the other rows.
  virtual absl::Status Forward(const ForwardBatch& batch,
                               ForwardOutput* out) = 0;

  // Swap-out / swap-in of one sequence (state slot must be flushed).
  virtual absl::StatusOr<StateSnapshot> ExportState(
      int state_slot, absl::Span<const int32_t> kv_blocks) = 0;
  virtual absl::Status ImportState(const StateSnapshot& snapshot,
                                   int state_slot,
                                   absl::Span<const int32_t> kv_blocks) = 0;

  // Loads a checkpoint directory of the same architecture (same ModelInfo
  // shapes). The new weights are fully read and validated before they replace
  // the old ones; on any error the old weights keep serving and the error says
  // why.
  virtual absl::Status LoadWeights(const std::string& checkpoint_dir) = 0;

  virtual MemoryStats memory() const = 0;
};

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_BACKEND_H_
