// The chunked prefill lines of the GDN benchmark (both routes, µs per
// layer and the rates against the measured ceilings).
#ifndef ROLLOUT_BENCH_GDN_BENCH_PREFILL_H_
#define ROLLOUT_BENCH_GDN_BENCH_PREFILL_H_

#include "bench/gdn_bench_ceilings.h"
#include "bench/gdn_bench_runner.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {

// The prefill lines of a full run: one sequence of 4096 tokens and 64 of
// 256, by each route.
void PrefillLines(Runner& r, const Ceilings& ceil, int HV,
                  nlohmann::json* recs);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_PREFILL_H_
