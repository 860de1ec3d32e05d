// A deterministic, cheap model::Backend for engine tests. It has no neural
// network: a sequence's state is a 64-bit hash of the tokens it has consumed,
// KV blocks hold a tag per position, and the logits of a position are a hash of
// (state, every KV tag the row can see, weights seed). What makes it useful is
// that it checks the engine's bookkeeping the way the real backends rely on it
// and fails a step with INTERNAL/FAILED_PRECONDITION when the engine breaks a
// contract of model/backend.h:
//  - a row's start_pos must equal the tokens already in its state slot (so a
//    slot that was not ResetState before position 0, or a lost token, fails);
//  - a row's KV blocks must cover its positions and every position it reads
//    must have been written (a missing or wrong block is caught), and a
//    sibling writing into a shared block changes the logits of the others;
//  - ReplaySSM: write_pos must equal the entries the ring really holds since
//    the checkpoint, a ring with live entries belongs to one slot, and any
//    non-ring use of a slot with live entries (plain row, prefill, CopyState,
//    ExportState) fails: the engine must flush first;
//  - ring rows are refused when the model has no GDN layers or the backend is
//    configured without ring support.
// The ring path folds entries exactly like the plain path, so ON and OFF give
// identical logits; tests of numerics use the CPU backend.
#ifndef ROLLOUT_WORKER_ENGINE_FAKE_BACKEND_H_
#define ROLLOUT_WORKER_ENGINE_FAKE_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/backend.h"

namespace rollout::worker {

struct FakeBackendOptions {
  int vocab_size = 32;
  int num_gdn_layers = 3;
  int num_attention_layers = 1;
  int max_position_embeddings = 4096;
  std::vector<int32_t> eos_token_ids = {0};
  bool replay_ssm = true;  // capabilities().replay_ssm
  int max_rows_per_step = 0;
  uint64_t weights_seed = 1;
  // Bytes per pool element reported by Footprint (per layer).
  int64_t state_bytes_per_layer = 1000;
  int64_t ring_entry_bytes_per_layer = 100;
  int64_t kv_token_bytes_per_layer = 10;
};

struct FakeBackendCounters {
  int64_t forward_calls = 0;
  int64_t rows = 0;
  int64_t prefill_tokens = 0;  // tokens of rows without a ring, len > 1 or
                               // LogitsWanted != kLast (prompt/score work)
  int64_t decode_tokens = 0;   // 1-token kLast rows
  int64_t ring_rows = 0;
  int64_t ring_flushes = 0;      // in-step flushes
  int64_t explicit_flushes = 0;  // FlushRing calls
  int64_t copy_state = 0;
  int64_t copy_kv = 0;
  int64_t exports = 0;
  int64_t imports = 0;
  int64_t weight_loads = 0;
};

class FakeBackend : public model::Backend {
 public:
  explicit FakeBackend(FakeBackendOptions options = {});

  const model::ModelInfo& info() const override { return info_; }
  model::BackendCapabilities capabilities() const override;
  absl::StatusOr<model::PoolFootprint> Footprint(
      int ring_length, int kv_block_size) const override;
  absl::Status InitPools(const model::PoolConfig& pools) override;
  absl::Status ResetState(int slot) override;
  absl::Status CopyState(int src_slot, int dst_slot) override;
  absl::Status CopyKvBlock(int src_block, int dst_block) override;
  absl::Status FlushRing(int state_slot, int ring_slot, int write_pos) override;
  absl::Status Forward(const model::ForwardBatch& batch,
                       model::ForwardOutput* out) override;
  absl::StatusOr<model::StateSnapshot> ExportState(
      int state_slot, absl::Span<const int32_t> kv_blocks) override;
  absl::Status ImportState(const model::StateSnapshot& snapshot, int state_slot,
                           absl::Span<const int32_t> kv_blocks) override;
  // Accepts "fake:<seed>" (the new weights seed); anything else is rejected
  // and the old weights keep serving.
  absl::Status LoadWeights(const std::string& checkpoint_dir) override;
  model::MemoryStats memory() const override;

  const FakeBackendCounters& counters() const { return counters_; }
  const model::PoolConfig& pools() const { return pools_; }
  // The next Forward fails with INTERNAL (error-path tests).
  void FailNextForward() { fail_next_forward_ = true; }

 private:
  struct Slot {
    uint64_t h = 0;
    int pos = -1;        // tokens consumed; -1 until ResetState
    int live_ring = -1;  // ring holding entries for this slot
    bool lost = false;   // its ring entries were overwritten: unusable
  };
  struct Ring {
    int owner = -1;
    std::vector<uint64_t> entries;  // (token, position) tags since C
  };

  absl::Status CheckSlot(int slot) const;
  absl::Status CheckLive(int slot) const;  // in range and not lost
  absl::Status CheckBlocks(absl::Span<const int32_t> blocks) const;
  // Reads the KV tags of positions [0, end) through `blocks` into a hash.
  absl::StatusOr<uint64_t> KvDigest(absl::Span<const int32_t> blocks,
                                    int end) const;
  void WriteLogits(uint64_t state, uint64_t kv, float* out) const;

  FakeBackendOptions options_;
  model::ModelInfo info_;
  model::PoolConfig pools_;
  std::vector<Slot> slots_;
  std::vector<Ring> rings_;
  std::vector<uint64_t> kv_;  // [num_kv_blocks * block_size] tags, 0 = unset
  uint64_t weights_seed_;
  bool fail_next_forward_ = false;
  FakeBackendCounters counters_;
  int64_t peak_bytes_ = 0;
};

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_FAKE_BACKEND_H_
