// The GDN benchmark's full sweep: one head shape and batch at a time
// (packed decode, ReplaySSM, mixed ON/OFF, bf16 ring), and its table.
#ifndef ROLLOUT_BENCH_GDN_BENCH_SWEEP_H_
#define ROLLOUT_BENCH_GDN_BENCH_SWEEP_H_

#include <random>
#include <string>
#include <vector>

#include "bench/gdn_bench_ceilings.h"
#include "bench/gdn_bench_options.h"
#include "bench/gdn_bench_runner.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {

// One line of the final table: a head shape and batch.
struct Row {
  int hv = 0, batch = 0;
  double p_auto = 0, p_pct = 0, p_best = 1e30, p_plain = 0, p_none = 0,
         p_pdl = 0, p_best_pdl = 0, p_lin = 0, p_sorted = 0;
  std::string p_tile;
  double r_auto = 0, r_nf = 0, r_f = 0, r_best = 1e30, r_none = 0, r_pdl = 0,
         r_best_pdl = 0, r_lin = 0, r_bf16 = 0, r_fused = 0, r_stag = 0;
  std::string r_tile;
  // (max - min) / min of the five timings behind p_auto and r_auto.
  double p_spread = 0, r_spread = 0;
  double same = 0, split = 0;
};

// One head shape and batch of the sweep: packed decode (every tile, then the
// variants), ReplaySSM with the fp32 ring (every tile, then the variants;
// with --explore the coefficient routes side by side instead), mixed ON/OFF
// launches and the bf16 ring. Appends a record per measurement to `recs`.
Row SweepPoint(Runner& r, std::mt19937& rng, const Options& o,
               const Ceilings& ceil, bool pdl_ok, int HV, int B,
               nlohmann::json& recs);

// The decode sweep's table, then a FIT line per head shape (PrintFits).
void PrintTable(const char* device, const Ceilings& ceil,
                const std::vector<Row>& table);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_SWEEP_H_
