// GDN short causal depthwise conv + SiLU on the GPU, for decode (one token per
// sequence, the conv-state update) and prefill (varlen token ranges). Math:
// gdn/reference.h CausalConv (the CPU oracle).
//
// Buffers (device memory, row-major, bf16 = uint16_t bit patterns):
//   x           [tokens, x_row_stride] bf16 pre-conv channels [Q|K|V]
//               (conv_dim of them), straight from the in_proj GEMM.
//   weight      [conv_dim, Kc] bf16 (HF conv1d.weight [conv_dim, 1, Kc]).
//   conv_state  [num_slots, Kc-1, conv_dim] bf16: the last Kc-1 inputs of a
//               sequence, oldest first. Stored in bf16 because the inputs are
//               bf16 GEMM outputs: no information is lost.
//   y           [tokens, y_row_stride] bf16 post-conv (SiLU): the qkv input of
//               decode.h / prefill.h.
//   cu_seqlens  [num_seqs + 1] int32 token offsets of the sequences in x / y;
//               null for decode (sequence b is token b).
//   slot_indices [num_seqs]; < 0: padding sequence (its y rows are zeroed,
//               its state untouched).
//   has_initial_state [num_seqs] int8 or null (null: every sequence continues
//               from its stored conv state, as in decode); 0: a fresh prompt
//               (zeros before its first token).
// Only Kc = 4 (all Qwen3-Next / Qwen3.5 models). fp32 arithmetic.
#ifndef ROLLOUT_GDN_CONV_H_
#define ROLLOUT_GDN_CONV_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace rollout::gdn {

struct GdnConvParams {
  int conv_dim = 0;     // channels (multiple of 8)
  int conv_kernel = 4;  // Kc (only 4)
  int num_seqs = 0;     // sequences (decode: rows)
  int max_seqlen = 1;   // host upper bound of any sequence's length
  const int32_t* cu_seqlens = nullptr;  // [num_seqs + 1] or null (decode)
  const uint16_t* x = nullptr;          // [tokens, x_row_stride]
  int64_t x_row_stride = 0;             // >= conv_dim, multiple of 8
  const uint16_t* weight = nullptr;     // [conv_dim, Kc]
  uint16_t* conv_state = nullptr;       // [num_slots, Kc-1, conv_dim]
  int64_t num_slots = 0;
  const int32_t* slot_indices = nullptr;      // [num_seqs]
  const int8_t* has_initial_state = nullptr;  // [num_seqs] or null
  uint16_t* y = nullptr;                      // [tokens, y_row_stride]
  int64_t y_row_stride = 0;                   // >= conv_dim, multiple of 8

  absl::Status Validate() const;
};

absl::Status LaunchGdnCausalConv(const GdnConvParams& params,
                                 cudaStream_t stream);

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_CONV_H_
