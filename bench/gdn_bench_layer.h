// One GDN layer's decode kernels in model order (conv update, then the
// packed or a ReplaySSM step; --layer) and the conv update alone.
#ifndef ROLLOUT_BENCH_GDN_BENCH_LAYER_H_
#define ROLLOUT_BENCH_GDN_BENCH_LAYER_H_

#include <random>

#include "bench/gdn_bench_runner.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {

// The conv update alone at B rows: µs per call and GB/s, the slot sets
// rotating over >= 256 MiB of conv state.
nlohmann::json BenchConvDecode(Runner& r, int HV, int B);

// One LAYER line (--layer) and its JSON record.
nlohmann::json LayerLine(Runner& r, std::mt19937& rng, int HV, int B);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_LAYER_H_
