// The ceilings and floors the GDN benchmark's figures are held against,
// measured in the same run: copy / in-place / read-only bandwidth, the tf32
// tensor rate, the batch-1 floors, and the ReplaySSM speed-up bounds the
// byte counts allow at those ceilings.
#ifndef ROLLOUT_BENCH_GDN_BENCH_CEILINGS_H_
#define ROLLOUT_BENCH_GDN_BENCH_CEILINGS_H_

#include <vector>

#include "bench/gdn_bench_runner.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {

struct Ceilings {
  double copy_gbps = 0, rmw_gbps = 0, rmw_cs_gbps = 0, read_gbps = 0;
  double mma_tf32_tflops = 0;  // mma.sync m16n8k8 tf32, every SM busy
  // The copy rate of each allocation by cudaMemcpyAsync and by the one-shot
  // copy kernel (bench_kernels.h: CopyOneShot).
  std::vector<double> copy_memcpy_gbps, copy_kernel_gbps;
};

// The copy, in-place and read-only bandwidth over 2 GiB and the tf32 tensor
// rate. One allocation's figure moves by ~1-2 % from one allocation (or run)
// to the next: on the H200 cudaMemcpyAsync measured 4194-4277 GB/s in runs
// 18-85 (docs/benchmarks/gdn_history.md), while the packed kernels' times
// stayed within 0.6 %. So each ceiling is the median over three 2 GiB
// allocations of the per-allocation medians (after warm-up), and the copy of an
// allocation is the faster of cudaMemcpyAsync and the copy kernel.
Ceilings MeasureCeilings(cudaStream_t s, Events& ev);
// One line: the ceilings, with each allocation's two copy rates.
void PrintCeilings(const Ceilings& c);
// The ceilings as the benchmark JSON's "ceilings_gbps".
nlohmann::json CeilingsJson(const Ceilings& c);

// The H200 ceilings of run 26 (the figures of record), for --bounds.
inline constexpr double kRun26CopyGbps = 4245, kRun26ReadGbps = 4334;

// The largest ReplaySSM L = 16 speed-up over the packed step that the byte
// counts allow (bench/decode_bytes.h), per head shape and ring dtype: every
// step at one bandwidth, and (given ceilings) the non-flush steps at the
// read-only ceiling, the others at the copy ceiling. Printed and returned
// as JSON.
nlohmann::json RatioBounds(double copy_gbps, double read_gbps);

// The floors of a batch-1 call inside a CUDA graph (µs per call): an empty
// kernel of one CTA and of the packed batch-1 grid at 16/32 (512 CTAs of 64
// threads), the in-place x *= c over 2 MiB and 1 MiB (one layer's batch-1
// state at 16/32 and 16/16: the packed step's bytes with none of its work)
// and a read-only pass over them (a non-flush step's state bytes), the
// chunks rotating over 256 MiB like the slot sets. From them, the batch-1
// ReplaySSM ratio if every step cost only its state bytes' floor: a packed
// step the in-place floor, an L = 16 cycle 15 read-only passes and one
// in-place.
struct Floors {
  double empty1 = 0, empty512 = 0, rmw_2mib = 0, rmw_1mib = 0;
  double read_2mib = 0, read_1mib = 0;
  static double RatioBound(double rmw, double read) {
    return rmw / ((15.0 * read + rmw) / 16.0);
  }
};
Floors MeasureFloors(Runner& r);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_CEILINGS_H_
