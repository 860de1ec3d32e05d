// GDN decode kernels benchmark (a program, not a test).
//
// First the memory-pattern microbenchmarks (rmw_micro.h: which access pattern
// reaches the copy ceiling for an in-place update). Then, for each head shape
// (H/HV = 16/32 and 16/16) and batch (1 ... 1024):
//   - packed decode: every tile, the auto choice (tile, L2 state policy and
//     launch overlap), auto with the plain policy, launched without PDL
//     (where auto uses it), with PDL's prologue overlap, on
//     contiguous slot sets (the peers' layout) instead of scattered ones,
//     and on the scattered sets with the rows in ascending slot order;
//   - ReplaySSM L = 16 (fp32 ring: every tile and the same variants; bf16
//     ring: auto), averaged over a full ring cycle and split into non-flush /
//     flush steps (every row at the same cursor); the auto route also with
//     the flush phases staggered over the rows (B / L rows flush per step);
//   - mixed ON/OFF batches: OFF rows in the replay launch vs a separate packed
//     launch.
// Method (as ../shared/docs/peer_baseline.md): a CUDA graph of back-to-back
// calls whose slot sets rotate over >= 256 MiB of state and >= 256 MiB of
// ReplaySSM rings (both always come from HBM, as in a model whose other
// layers run between two steps of one layer: RingRotation in
// gdn_bench_setup.h; slots scattered over the pool unless noted), median over
// replays, µs per call = replay time / calls. The auto configurations (P.auto,
// R.auto: the figures of record) are the median of five such timings spread
// over the point; P.spr and R.spr are their spread, (max - min) / min. Every
// JSON record carries the Unix time its timing ended (t_unix), and one "point"
// record per shape and batch the point's figures. The copy / in-place /
// read-only bandwidth ceilings and the batch-1 floors (an empty kernel, an
// in-place and a read-only pass over one layer's batch-1 state) are measured
// in the same run. Effective bandwidth counts the algorithmic minimum bytes:
// fp32 state read (+ write), ring reads/appends, q|k|v, a, b in and o out.
//
//   gdn_bench [--json=PATH] [--quick] [--micro] [--no-micro] [--batches=B,...]
//             [--explore] [--profile[=HV/B]] [--replay-only] [--overlap]
//             [--flush-cost] [--tile-table] [--flush-policy] [--cold-rings]
//             [--layer] [--bounds] [--prefill] [--ceilings]
// --batches=B[,B...]: the full sweep (the decode table) at these batches
//   instead of 1, 8, 32, 64, 128, 256, 512, 1024 (each 1-4096), e.g. between
//   the documented ones to tell a fixed cost per step from wave quantisation.
// --micro: only the memory-pattern microbenchmarks (rmw_micro.h).
// --ceilings: only the ceilings (each allocation's copy rates) and the
//   batch-1 floors, the ReplaySSM bounds at those ceilings (a few seconds).
// --explore: the tiles and coefficient routes side by side (design runs).
// --profile[=HV/B]: a few plain launches for ncu (no timing; default 32/256).
// --overlap: the launch overlaps (gdn::DecodeOverlap) side by side at batch
//   1-64: packed (auto tile and bv8), ReplaySSM cycles (auto tile and
//   bv8-bv32; plain launch and kLaunch, kPrologue with the auto tile); at
//   B = 128 and 256 the auto tiles only.
// --flush-cost: the parts of a small-batch ReplaySSM cycle: at B = 1 and 8,
//   the packed step, the non-flush step by ring fill and the flush by the
//   entries it folds (forced flushes), each back to back in a graph, then
//   each variant's whole cycle (the copy orders and the unstaged ring side
//   by side).
// --tile-table: the kAuto tiles that depend on the card's peak DRAM
//   bandwidth, each beside the alternatives around their boundaries: the
//   packed step's tiles at 144-256 (row, value head) pairs, the ReplaySSM
//   32- and 64-row tiles and the packed step's L2 policies at 1024-6144,
//   then the ReplaySSM flush's L2 policy (plain, evict-last) at B = 128-1024.
// --flush-policy: only those last lines (FLUSHPOLICY: plain and evict-last,
//   twice each, cycle / non-flush / flush, and the packed step), at
//   B = 128-1024 of both shapes.
// --cold-rings: the shipped ReplaySSM cycle and packed step at B = 1-512 of
//   both shapes with the slot sets rotating over 256 MiB of state alone (the
//   sweep's method up to run 118: up to ~128 rows the rings of all sets fit
//   in L2, docs/benchmarks/gdn_history.md "Run 119"), then with the sweep's
//   sets, which rotate 256 MiB of rings too (COLDRINGS lines).
// --layer: one layer's decode kernels in model order (conv update, then the
//   packed or a ReplaySSM step), the decode launched plainly, as shipped
//   (kAuto) and with kPrologue, and as the pair of gdn/layer_decode.h, at
//   batch 1-512 (with 16/32 B = 5 and 16/16 B = 9), then the conv update
//   alone at B = 256 and 1024; the full run measures B = 1, 8, 64 of the
//   first.
// --prefill: only the chunked prefill lines (both routes), as in a full run:
//   µs per layer, M tok/s, the rate of the chunk algebra's fp32 products and
//   of the substitution (bench/prefill_work.h), the two-pass route's share of
//   the 3xTF32 ceiling (a third of the measured mma.sync tf32 rate) and the
//   HBM floor (the fewest bytes at the copy ceiling).
// --bounds: only the ReplaySSM speed-up bounds of the byte counts (no GPU;
//   runs with a GPU print them at the measured ceilings after those).
// --replay-only: the shipped packed and ReplaySSM configurations at the
//   batches of the ReplaySSM targets (aligned and staggered cycles), without
//   and with PDL, one line each, plus up to B = 8 the cycle with force-flush
//   flags passed (all 0, as an engine passes them), from B = 128 on slot
//   orders, and at every batch each coefficient route forced (fused with the
//   ring staged or not, precomputed) and the bf16 ring on each route (A/B runs
//   of builds).
//
// The parts, one file each: gdn_bench_device.h (checked calls, allocation,
// graph capture, timing), gdn_bench_setup.h (one shape and batch on the
// device, launch variants, byte counts), gdn_bench_runner.h (the timed
// graphs), gdn_bench_ceilings.h (ceilings, floors, ratio bounds),
// gdn_bench_sweep.h (the full sweep and its table), gdn_bench_layer.h,
// gdn_bench_prefill.h, gdn_bench_modes.h (the single-purpose modes) and
// gdn_bench_options.h.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <utility>
#include <vector>

#include "bench/gdn_bench_ceilings.h"
#include "bench/gdn_bench_device.h"
#include "bench/gdn_bench_layer.h"
#include "bench/gdn_bench_modes.h"
#include "bench/gdn_bench_options.h"
#include "bench/gdn_bench_prefill.h"
#include "bench/gdn_bench_runner.h"
#include "bench/gdn_bench_sweep.h"
#include "bench/rmw_micro.h"
#include "gdn/decode.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {
namespace {

using nlohmann::json;

// The memory-pattern microbenchmarks' table.
void PrintMicro(const std::vector<MicroResult>& micro_res) {
  if (!micro_res.empty()) {
    std::printf(
        "\n== memory patterns (2 GiB, in place unless copy/read/"
        "write; GB/s, %% of memcpy copy) ==\n");
    const double copy = micro_res.front().gbps;
    for (const MicroResult& x : micro_res) {
      std::printf("%-36s %6.0f %5.1f%%\n", x.name.c_str(), x.gbps,
                  100.0 * x.gbps / copy);
    }
  }
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  if (o.bounds) {  // no GPU needed: the ceilings of run 26
                   // (docs/benchmarks/gdn_history.md)
    RatioBounds(kRun26CopyGbps, kRun26ReadGbps);
    return 0;
  }
  cudaDeviceProp prop;
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  // The peak DRAM bandwidth picks the tile tables (gdn::DecodeTileFor).
  const double peak_gbps = gdn::DevicePeakMemoryGbps();
  std::printf(
      "device: %s, %d SMs, L2 %d MiB, peak DRAM %.0f GB/s (%s tile table)\n",
      prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, peak_gbps,
      gdn::NarrowMemory(peak_gbps) ? "narrow-memory" : "H200");
  Runner r;
  BENCH_CUDA(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  if (o.profile) {
    ProfileLaunches(r, o.profile_hv, o.profile_batch);
    return 0;
  }
  json out;
  out["device"] = prop.name;
  out["sms"] = prop.multiProcessorCount;
  out["peak_dram_gbps"] = peak_gbps;
  auto write_json = [&] {
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path);
      f << out.dump(1) << "\n";
    }
  };
  // Memory-pattern microbenchmarks (rmw_micro.h): which access pattern reaches
  // the copy ceiling for an in-place read-modify-write.
  std::vector<MicroResult> micro_res;
  if ((o.micro && !o.ceilings_only) || o.micro_only) {
    micro_res = RunRmwMicro(r.s, 2ull << 30, 7);
    json& m = out["micro"];
    for (const MicroResult& x : micro_res) {
      m.push_back(
          {{"name", x.name}, {"gbps", x.gbps}, {"ms", x.ms}, {"ok", x.ok}});
    }
  }
  if (o.micro_only) {
    write_json();
    return 0;
  }
  const Ceilings ceil = MeasureCeilings(r.s, r.ev);
  PrintCeilings(ceil);
  out["ceilings_gbps"] = CeilingsJson(ceil);
  out["ceiling_mma_tf32_tflops"] = ceil.mma_tf32_tflops;
  out["replay_ratio_bounds"] = RatioBounds(ceil.copy_gbps, ceil.read_gbps);
  const Floors floors = MeasureFloors(r);
  out["batch1_floors_us"] = {
      {"empty_1cta", floors.empty1},   {"empty_512x64", floors.empty512},
      {"rmw_2mib", floors.rmw_2mib},   {"rmw_1mib", floors.rmw_1mib},
      {"read_2mib", floors.read_2mib}, {"read_1mib", floors.read_1mib}};
  if (o.ceilings_only) {
    write_json();
    return 0;
  }
  json& recs = out["records"];
  if (o.prefill) {
    for (int HV : {32, 16}) PrefillLines(r, ceil, HV, &recs);
    write_json();
    return 0;
  }
  std::mt19937 rng(1234);
  const std::vector<int> batches =
      !o.batches.empty() ? o.batches
      : o.quick          ? std::vector<int>{1, 256}
                         : std::vector<int>{1, 8, 32, 64, 128, 256, 512, 1024};
  const bool pdl_ok = ProbePdl(r, rng);
  out["pdl_ok"] = pdl_ok;
  if (o.replay_only) {
    ReplayOnly(r, rng, pdl_ok);
    return 0;
  }
  // The single-purpose modes that need only the runner (gdn_bench_modes.h).
  const std::pair<bool, void (*)(Runner&, std::mt19937&)> modes[] = {
      {o.flush_cost, FlushCost},
      {o.tile_table, TileTable},
      {o.flush_policy, FlushPolicy},
      {o.cold_rings, ColdRings}};
  for (const auto& [on, mode] : modes) {
    if (on) {
      mode(r, rng);
      return 0;
    }
  }
  if (o.overlap) {
    if (!pdl_ok) {
      std::fprintf(stderr, "gdn_bench: --overlap needs PDL (sm_90)\n");
      return 1;
    }
    OverlapSweep(r, rng);
    return 0;
  }
  if (o.layer) {
    // B = 5 (16/32) and 9 (16/16): 144-160 (row, value head) pairs, where a
    // narrow-memory card's packed step takes 8-row tiles and the H200's
    // 64-row tiles (DecodeTileFor), both paired with kPrologue.
    for (int B : {1, 5, 8, 32, 64, 128, 256, 512}) LayerLine(r, rng, 32, B);
    for (int B : {1, 8, 9, 32, 64, 128, 256, 512}) LayerLine(r, rng, 16, B);
    for (int HV : {32, 16}) {
      for (int B : {256, 1024}) BenchConvDecode(r, HV, B);
    }
    return 0;
  }
  std::vector<Row> table;
  for (int HV : {32, 16}) {
    for (int B : batches) {
      table.push_back(SweepPoint(r, rng, o, ceil, pdl_ok, HV, B, recs));
      write_json();  // partial results survive a timeout
    }
  }
  for (int HV : {32, 16}) {
    for (int B : {1, 8, 64}) recs.push_back(LayerLine(r, rng, HV, B));
    recs.push_back(BenchConvDecode(r, HV, 256));
    PrefillLines(r, ceil, HV, &recs);
  }
  write_json();
  PrintMicro(micro_res);
  PrintTable(prop.name, ceil, table);
  BENCH_CUDA(cudaStreamDestroy(r.s));
  return 0;
}

}  // namespace
}  // namespace rollout::bench

int main(int argc, char** argv) { return rollout::bench::Main(argc, argv); }
