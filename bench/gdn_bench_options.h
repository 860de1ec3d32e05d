// Command-line options of the GDN benchmark (usage: the header comment of
// gdn_bench.cc).
#ifndef ROLLOUT_BENCH_GDN_BENCH_OPTIONS_H_
#define ROLLOUT_BENCH_GDN_BENCH_OPTIONS_H_

#include <string>
#include <vector>

namespace rollout::bench {

struct Options {
  std::string json_path;
  bool quick = false, micro_only = false, micro = true, explore = false;
  bool profile = false, replay_only = false, overlap = false, bounds = false;
  bool layer = false, prefill = false, flush_cost = false, tile_table = false;
  bool ceilings_only = false, flush_policy = false, cold_rings = false;
  int profile_hv = 32, profile_batch = 256;  // --profile=HV/B
  // --batches=B[,B...]: the full sweep's batches, in order (empty: the
  // documented list, or --quick's).
  std::vector<int> batches;
};

// The largest batch --batches takes: two slot sets of 4096 rows at 16/32
// (the rotation's minimum) are 16 GiB of state.
inline constexpr int kMaxSweepBatch = 4096;

// False (after printing the usage) on an unknown argument.
bool ParseArgs(int argc, char** argv, Options* o);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_OPTIONS_H_
