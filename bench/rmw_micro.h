// Memory-pattern microbenchmarks for the GDN decode kernels (plain C++
// header): which way of moving bytes reaches the copy ceiling for an in-place
// read-modify-write on the H200. Each variant scales a 2 GiB fp32 buffer in
// place (x *= c) or copies it, with one access pattern: one-shot or
// grid-stride element-wise grids with cache hints, one CTA per contiguous
// chunk (cp.async or bulk copies: the tile decode kernel's pattern; also
// through a slot-like scatter of 2 MiB blocks, with L2 policies; and the
// packed and non-flush steps' patterns at the decode benchmark's step sizes,
// 1 and 2 MiB slots, as graphs of back-to-back launches), read-only chunks,
// and a
// persistent warp-specialised pipeline of bulk copies (the pattern of a
// persistent decode kernel tried and dropped, docs/benchmarks/gdn_history.md).
#ifndef ROLLOUT_BENCH_RMW_MICRO_H_
#define ROLLOUT_BENCH_RMW_MICRO_H_

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace rollout::bench {

struct MicroResult {
  std::string name;
  double gbps = 0;  // bytes moved (read + write) / median time
  double ms = 0;    // median time of one pass
  bool ok = true;   // launch succeeded
};

// Runs every variant over a `bytes` buffer (a multiple of 64 MiB), `reps`
// timed passes each after one warm-up. Prints one line per variant.
std::vector<MicroResult> RunRmwMicro(cudaStream_t stream, size_t bytes,
                                     int reps);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_RMW_MICRO_H_
