#include "bench/prefill_work.h"

#include "gdn/prefill.h"

namespace rollout::bench {
namespace {
constexpr double kDim = 128;  // K = V
constexpr int kChunk = 64;    // tokens
}  // namespace

PrefillWork TwoPassPrefillWork(int num_k_heads, int num_v_heads, int seqs,
                               int len) {
  const double H = num_k_heads, HV = num_v_heads;
  const double chunks =
      static_cast<double>(seqs) * ((len + kChunk - 1) / kChunk);
  const double tokens = static_cast<double>(seqs) * len;
  PrefillWork w;
  const double grams = 2 * kChunk * kChunk * kDim;  // per key head
  const double state = kDim * kDim * kDim           // [Q; W] S0^T
                       + kChunk * kChunk * kDim     // (M .* QK^T) U
                       + kDim * kDim * kChunk;      // U^T K
  w.tensor_macs = chunks * (H * grams + HV * state);
  w.cuda_core_macs = chunks * HV * 2 * kDim * (kChunk * (kChunk - 1) / 2);
  const double row_bytes = (2 * H + HV) * kDim * 2  // q|k|v
                           + 2 * HV * 2             // a, b
                           + HV * kDim * 2;         // o
  w.io_bytes = tokens * row_bytes + 2.0 * seqs * HV * kDim * kDim * 4;
  w.scratch_bytes =
      2.0 * tokens * HV * gdn::GdnPrefillParams::kScratchFloatsPerTokenHead * 4;
  return w;
}

}  // namespace rollout::bench
