// The work of one layer's two-pass chunked prefill (gdn/prefill.h), counted
// first so that gdn_bench can put its times against the measured ceilings:
// the fp32 products the kernels run on tensor cores (3xTF32: three tf32
// mma.sync per product), the forward substitution on CUDA cores, and the
// fewest HBM bytes the layer must move.
//
// Shapes: H key heads, HV value heads, K = V = 128, chunks of 64 tokens
// (a sequence's last chunk padded: the kernels run full 64-row tiles).
#ifndef ROLLOUT_BENCH_PREFILL_WORK_H_
#define ROLLOUT_BENCH_PREFILL_WORK_H_

#include <cstdint>

namespace rollout::bench {

struct PrefillWork {
  // Multiply-adds of the products on tensor cores, counted once (fp32).
  // Per chunk: the Grams K K^T and Q K^T per key head (2 x 64 x 64 x 128);
  // per value head [e^gam Q; W] S0^T (128 x 128 x 128), (M .* Q K^T) U
  // (64 x 64 x 128) and U^T (e^(gam_c - gam) K) (128 x 128 x 64).
  double tensor_macs = 0;
  // Multiply-adds of the forward substitution (I + A) y = x on CUDA cores:
  // 2016 per column (sum of i below 64), 256 columns (W and U~) per value
  // head and chunk.
  double cuda_core_macs = 0;
  // HBM bytes: q|k|v (bf16) and a, b (bf16) in, o (bf16) out, the state of
  // each sequence read and written (fp32), the scratch written once and read
  // once (GdnPrefillParams::kScratchFloatsPerTokenHead per token and value
  // head). The state pass's repeated scratch reads (one per v-block CTA)
  // come from L2 and are not counted.
  double io_bytes = 0;       // activations and state
  double scratch_bytes = 0;  // scratch write + read
};

// seqs sequences of len tokens each (len >= 1).
PrefillWork TwoPassPrefillWork(int num_k_heads, int num_v_heads, int seqs,
                               int len);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_PREFILL_WORK_H_
