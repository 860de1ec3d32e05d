// Host storage of the CPU backend's pools and the per-row views into them.
//
// Layouts (fp32, each element contiguous so copy / export is one memcpy):
//   state slot s: for each GDN layer in order: conv state [Kc-1, conv_dim],
//                 then recurrent state [HV, V, K]
//   ring slot r:  for each GDN layer in order: k [H, L, K], d [HV, L, V],
//                 g [HV, L]
//   KV block b:   for each attention layer in order: K then V, each
//                 [block_size, num_kv_heads, head_dim]
#ifndef ROLLOUT_MODEL_CPU_STATE_POOLS_H_
#define ROLLOUT_MODEL_CPU_STATE_POOLS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "model/backend.h"
#include "model/config.h"
#include "model/sequence_state.h"

namespace rollout::model::cpu {

// Floats of one element of each pool.
struct PoolSizes {
  int64_t conv_floats = 0;   // per GDN layer
  int64_t state_floats = 0;  // per GDN layer
  int64_t ring_layer_floats = 0;
  int64_t slot_floats = 0;      // all GDN layers
  int64_t ring_floats = 0;      // all GDN layers
  int64_t kv_token_floats = 0;  // num_kv_heads * head_dim
  int64_t kv_block_floats = 0;  // all attention layers, K and V

  static PoolSizes For(const ModelConfig& config, int ring_length,
                       int kv_block_size);
};

class StatePools {
 public:
  // (Re)allocates every pool, zero-filled.
  absl::Status Init(const ModelConfig& config, const PoolConfig& pools);

  bool initialized() const { return initialized_; }
  const PoolConfig& config() const { return pools_; }
  const PoolSizes& sizes() const { return sizes_; }
  int64_t bytes() const;

  float* slot(int s) { return slots_.data() + s * sizes_.slot_floats; }
  float* ring(int r) { return rings_.data() + r * sizes_.ring_floats; }
  float* kv_block(int b) { return kv_.data() + b * sizes_.kv_block_floats; }

  // Views for one row: the state slot, an optional ring slot (< 0: none) and
  // the block table.
  SequenceState View(const ModelConfig& config, int state_slot, int ring_slot,
                     absl::Span<const int32_t> kv_blocks);

 private:
  bool initialized_ = false;
  PoolConfig pools_;
  PoolSizes sizes_;
  std::vector<float> slots_;
  std::vector<float> rings_;
  std::vector<float> kv_;
};

}  // namespace rollout::model::cpu

#endif  // ROLLOUT_MODEL_CPU_STATE_POOLS_H_
