// A view of one attention layer's keys and values in a paged KV pool.
//
// Pool layout (owned by the backend): block-major, so that copying or
// exporting a block is one contiguous copy of every layer:
//   block b: [num_attention_layers][2 (K,
//   V)][block_size][num_kv_heads][head_dim]
// This view addresses one layer of one sequence through its block table.
#ifndef ROLLOUT_MODEL_OPS_PAGED_KV_H_
#define ROLLOUT_MODEL_OPS_PAGED_KV_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace rollout::model::ops {

struct PagedKv {
  float* pool = nullptr;
  int64_t block_floats = 0;  // floats per block (all layers, K and V)
  int64_t layer_offset = 0;  // floats from a block's start to this layer
  int block_size = 0;        // tokens per block
  int num_kv_heads = 0;
  int head_dim = 0;
  absl::Span<const int32_t> blocks;  // block table of the sequence

  int64_t token_floats() const {
    return static_cast<int64_t>(num_kv_heads) * head_dim;
  }
  // K / V rows [num_kv_heads, head_dim] of position `pos`.
  float* Key(int pos) const { return Slot(pos, 0); }
  float* Value(int pos) const { return Slot(pos, 1); }

 private:
  float* Slot(int pos, int which) const {
    const int64_t block = blocks[pos / block_size];
    const int64_t in_block = pos % block_size;
    return pool + block * block_floats + layer_offset +
           (which * static_cast<int64_t>(block_size) + in_block) *
               token_floats();
  }
};

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_PAGED_KV_H_
