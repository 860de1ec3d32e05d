// GDN chunked prefill on the GPU (WY / UT form, chunk 64, fp32 accuracy):
// outputs of every prompt token and the exact final state written into the
// sequence's slot (the ReplaySSM checkpoint; the caller sets its ring cursor
// to 0). Math: gdn/reference.h ChunkedForward (the CPU oracle) and
// ../shared/docs/gdn_replayssm.md section 1.
//
// Buffers (device memory, row-major; bf16 = uint16_t bit patterns):
//   qkv   [tokens, qkv_row_stride] bf16 post-conv rows [Q | K | V] (conv.h).
//   a, b  [tokens, ab_row_stride] raw gate projections (ab_dtype).
//   A_log, dt_bias  [HV] fp32.
//   cu_seqlens [num_seqs + 1] int32 token offsets.
//   state [num_slots, HV, V, K] fp32; sequence s uses slot_indices[s] (< 0:
//         skipped, its o rows untouched).
//   has_initial_state [num_seqs] int8 or null (null: every sequence continues
//         from its stored state, e.g. a chunked-prefill continuation, whose
//         ring must have been folded); 0: start from zeros (a fresh prompt;
//         the slot need not be cleared).
//   o     [tokens, o_row_stride] row = [HV, V] (o_dtype).
//
// Two routes, the same math (tests: outputs and final state within 2e-5 of
// the fp32 token loop; measured <= 1.2e-6 two-pass, <= 4e-7 single pass):
//   two-pass (scratch set; 4-6x faster on an H200, docs/BENCHMARKS.md): a
//     chunk pass computes everything that does not depend on the state (W,
//     U~, the masked Q K^T, the cumulated gates) for every chunk at once into
//     the caller's scratch, then a state pass walks each sequence's chunks
//     with the state block in shared memory. Their matrix products run on
//     tensor cores in 3xTF32 (three tf32 products per fp32 product: fp32
//     accuracy, not tf32's ~1e-3);
//   single pass (scratch null): one CTA per (sequence, value head, 32-row V
//     block) walks its sequence's chunks and recomputes the state-independent
//     work itself, on CUDA cores. Needs no scratch.
#ifndef ROLLOUT_GDN_PREFILL_H_
#define ROLLOUT_GDN_PREFILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "gdn/dtype.h"

namespace rollout::gdn {

struct GdnPrefillParams {
  int num_k_heads = 16;  // H
  int num_v_heads = 32;  // HV
  int head_dim = 128;    // K = V (only 128)
  int num_seqs = 0;
  const int32_t* cu_seqlens = nullptr;  // [num_seqs + 1]
  const uint16_t* qkv = nullptr;        // [tokens, qkv_row_stride]
  int64_t qkv_row_stride = 0;           // >= 2*H*K + HV*V, multiple of 8
  const void* a = nullptr;              // [tokens, ab_row_stride]
  const void* b = nullptr;
  int64_t ab_row_stride = 0;
  DType ab_dtype = DType::kBf16;
  const float* A_log = nullptr;    // [HV]
  const float* dt_bias = nullptr;  // [HV]
  float* state = nullptr;          // [num_slots, HV, V, K]
  int64_t num_slots = 0;
  const int32_t* slot_indices = nullptr;      // [num_seqs]
  const int8_t* has_initial_state = nullptr;  // [num_seqs] or null
  void* o = nullptr;                          // [tokens, o_row_stride]
  int64_t o_row_stride = 0;
  DType o_dtype = DType::kBf16;
  // Two-pass route: device scratch owned by the caller, fp32, 16-byte
  // aligned, at least ScratchFloats(num_tokens, HV) floats (1284 bytes per
  // token and value head). Each launch writes it before reading it, so one
  // buffer per stream serves every layer. Null: the single-pass route.
  float* scratch = nullptr;
  int64_t scratch_floats = 0;  // capacity, checked against the need
  // Required with scratch: cu_seqlens[num_seqs], the tokens the scratch
  // covers. Tokens past it are not processed.
  int64_t num_tokens = 0;

  // Per (token, value head): a row of W and of U~ (K = V = 128 each), a row
  // of the masked Q K^T (64) and the cumulated gate (the two-pass kernels
  // lay them out, prefill_two_pass.cu).
  static constexpr int kScratchFloatsPerTokenHead = 2 * 128 + 64 + 1;
  static int64_t ScratchFloats(int64_t num_tokens, int num_v_heads) {
    return num_tokens * num_v_heads * kScratchFloatsPerTokenHead;
  }

  absl::Status Validate() const;
};

absl::Status LaunchGdnChunkedPrefill(const GdnPrefillParams& params,
                                     cudaStream_t stream);

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_PREFILL_H_
