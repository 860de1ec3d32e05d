// Which chunk each CTA of the two-pass prefill's chunk pass takes
// (gdn/prefill_two_pass.cu), host and device: the kernel runs it per CTA
// with the warp's ballot, the host test (prefill_chunk_map_test.cc) runs the
// same code with the ballot emulated, against every chunk of random varlen
// batches.
//
// Global chunk ids: sequence s owns the ids [f(s), f(s+1)) with
// f(s) = cu[s] / chunk + s. f is increasing and f(s+1) - f(s) >=
// ceil(len_s / chunk), so ChunkIdCount = ceil(num_tokens / chunk) + num_seqs
// ids cover every chunk of every sequence, without a host-side prefix sum
// over the lengths (the grid size is known from the token count alone). Ids
// a sequence owns past its last chunk, and ids below f(0) where cu[0] > 0,
// take no chunk.
#ifndef ROLLOUT_GDN_PREFILL_CHUNK_MAP_H_
#define ROLLOUT_GDN_PREFILL_CHUNK_MAP_H_

#include <algorithm>
#include <cstdint>

#include "gdn/host_device.h"

namespace rollout::gdn {

// The grid size of the chunk pass (ids 0 .. ChunkIdCount - 1).
ROLLOUT_HD int64_t ChunkIdCount(int64_t num_tokens, int num_seqs, int chunk) {
  return (num_tokens + chunk - 1) / chunk + num_seqs;
}

// f(s): the first chunk id of sequence s.
ROLLOUT_HD int FirstChunkId(const int32_t* cu, int s, int chunk) {
  return cu[s] / chunk + s;
}

// Bit l set where lane l's probe s = lo + l step lies below hi and has
// f(s) <= x: the warp's ballot on the device, the 32 probes in turn here.
ROLLOUT_HD unsigned ProbeBallot(const int32_t* cu, int lo, int step, int hi,
                                int x, int chunk) {
#ifdef __CUDA_ARCH__
  const int s = lo + static_cast<int>(threadIdx.x & 31) * step;
  return __ballot_sync(0xffffffffu, s < hi && FirstChunkId(cu, s, chunk) <= x);
#else
  unsigned m = 0;
  for (int lane = 0; lane < 32; ++lane) {
    const int s = lo + lane * step;
    if (s < hi && FirstChunkId(cu, s, chunk) <= x) m |= 1u << lane;
  }
  return m;
#endif
}

ROLLOUT_HD int HighestBit(unsigned m) {  // m != 0
#ifdef __CUDA_ARCH__
  return 31 - __clz(m);
#else
  return 31 - __builtin_clz(m);
#endif
}

// The sequence owning chunk id x: the last s with f(s) <= x, or 0 (which
// owns no id below f(0)); num_seqs >= 1 (the launcher returns before any
// launch for 0). A 32-ary search by the warp, one dependent load per 5 bits
// of num_seqs: on the device all 32 lanes call it together, and every lane
// gets the answer.
ROLLOUT_HD int ChunkSeq(const int32_t* cu, int num_seqs, int x, int chunk) {
  int lo = 0, hi = num_seqs;  // the answer lies in [lo, hi); f(lo) <= x
                              // from the first round on, unless x < f(0)
  while (hi - lo > 1) {
    const int step = (hi - lo + 31) / 32;
    const unsigned m = ProbeBallot(cu, lo, step, hi, x, chunk);
    if (m == 0) break;  // x < f(0)
    lo += HighestBit(m) * step;
    hi = std::min(hi, lo + step);
  }
  return lo;
}

// The tokens of chunk id x: rows tok0 .. tok0 + len - 1 of sequence seq,
// len in [1, chunk], or len = 0 where x takes no chunk (past the sequence's
// end or num_tokens, below f(0), or a corrupt cu_seqlens with cu[seq] < 0).
struct ChunkSpan {
  int seq;
  int64_t tok0;
  int len;
};

ROLLOUT_HD ChunkSpan ChunkSpanOf(const int32_t* cu, int num_seqs,
                                 int64_t num_tokens, int x, int chunk) {
  const int s = ChunkSeq(cu, num_seqs, x, chunk);
  const int64_t start = cu[s];
  const int m = x - FirstChunkId(cu, s, chunk);
  const int64_t tok0 = start + static_cast<int64_t>(m) * chunk;
  const int64_t end = std::min(static_cast<int64_t>(cu[s + 1]), num_tokens);
  if (start < 0 || m < 0 || tok0 >= end) return {s, tok0, 0};
  return {s, tok0,
          static_cast<int>(std::min(static_cast<int64_t>(chunk), end - tok0))};
}

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_PREFILL_CHUNK_MAP_H_
