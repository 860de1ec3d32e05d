#include "bench/gdn_bench_sweep.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "bench/step_fit.h"
#include "gdn/decode.h"

namespace rollout::bench {

using gdn::DecodeTile;
using gdn::DType;
using nlohmann::json;

// One head shape and batch of the sweep: packed decode (every tile, then the
// variants), ReplaySSM with the fp32 ring (every tile, then the variants;
// with --explore the coefficient routes side by side instead), mixed ON/OFF
// launches and the bf16 ring. Appends a record per measurement to `recs`.
Row SweepPoint(Runner& r, std::mt19937& rng, const Options& o,
               const Ceilings& ceil, bool pdl_ok, int HV, int B, json& recs) {
  Setup st = MakeSetup(HV, B, r.s, rng);
  Row row;
  row.hv = HV;
  row.batch = B;
  const double pb = PackedBytes(st, B);
  const double peak_gbps = gdn::DevicePeakMemoryGbps();  // kAuto's tables
  // Every record carries the wall-clock time its measurement ended (Unix
  // seconds): the GPU's clock and power samples of the documented run
  // (smi.csv, bench/clock_trace.py) line up with it.
  auto rec = [&](json j) {
    j["hv"] = HV;
    j["h"] = kH;
    j["batch"] = B;
    j["t_unix"] = UnixSeconds();
    recs.push_back(j);
  };
  auto packed = [&](const Variant& v) {
    const double us = r.Packed(st, v);
    const double gbps = pb / (us * 1e-6) / 1e9;
    rec({{"kind", "packed"},
         {"variant", v.Name()},
         {"tile", gdn::DecodeTileName(v.tile)},
         {"overlap", gdn::DecodeOverlapName(v.overlap)},
         {"policy", static_cast<int>(v.policy)},
         {"linear_slots", v.linear},
         {"sorted_slots", v.sorted},
         {"us", us},
         {"bytes", pb},
         {"gbps", gbps},
         {"pct_copy", 100.0 * gbps / ceil.copy_gbps}});
    return us;
  };
  auto replay = [&](const Variant& v, DType ring) {
    const Runner::Cycle c = r.Replay(st, v);
    const double cb = ReplayCycleBytes(st, B, ring);
    const double gbps = cb / (c.cycle_us * kL * 1e-6) / 1e9;
    rec({{"kind", ring == DType::kFp32 ? "replay_fp32" : "replay_bf16"},
         {"variant", v.Name()},
         {"tile", gdn::DecodeTileName(v.tile)},
         {"overlap", gdn::DecodeOverlapName(v.overlap)},
         {"stage", v.stage},
         {"copy_order", gdn::ReplayCopyOrderName(v.order)},
         {"policy", static_cast<int>(v.policy)},
         {"linear_slots", v.linear},
         {"sorted_slots", v.sorted},
         {"coef_route", static_cast<int>(v.route)},
         {"precomputed", v.route == gdn::ReplayCoefRoute::kPrecomputed ||
                             (v.route == gdn::ReplayCoefRoute::kAuto &&
                              gdn::ReplayCoefRouteFor(B, kH, HV, ring))},
         {"L", kL},
         {"cycle_us", c.cycle_us},
         {"nonflush_us", c.nonflush_us},
         {"flush_us", c.flush_us},
         {"cycle_bytes", cb},
         {"gbps", gbps},
         {"pct_copy", 100.0 * gbps / ceil.copy_gbps}});
    return c;
  };
  // The shipped configurations are timed five times, spread over the
  // point: before the tile sweep, after it, after the variants and twice
  // more at the end, packed and ReplaySSM in turn (the median of the five).
  // Back-to-back timings shared whatever slow phase the call was in: one
  // right after the tile sweep came out 4-7 % slow at 16/32 B = 256 in runs
  // 11-12; in run 71 three in a row gave ReplaySSM cycles 6 % slower than
  // the same configuration minutes later (16/32 B = 512: 327.4 vs 308.8 us,
  // flush 820 us; 16/16 B = 1024: 330.8 vs 313.5). On the H200 (runs 76,
  // 79, 85) the ReplaySSM timings of a point spread by up to 23 % (two of
  // three slow at 16/32 B = 512 in run 85: 312.5 and 371.5 against
  // 301.5 us) while its packed timings agreed within 0.3 %; on the H100
  // both agree within 0.3 % (run 98). Hence five, and the spread printed.
  std::vector<double> p_autos = {packed(Variant())};
  // Packed decode: every tile (overlap auto), then variants.
  DecodeTile best_p = DecodeTile::kAuto;
  for (int t = 1; t < gdn::kNumDecodeTiles; ++t) {
    Variant v;
    v.tile = static_cast<DecodeTile>(t);
    const double us = packed(v);
    if (us < row.p_best) {
      row.p_best = us;
      best_p = v.tile;
    }
  }
  row.p_tile = gdn::DecodeTileName(best_p);
  {
    Variant v;
    p_autos.push_back(packed(v));
    v.policy = gdn::DecodeStatePolicy::kDefault;
    row.p_plain = packed(v);
    v = Variant();
    v.linear = true;
    row.p_lin = packed(v);
    v = Variant();
    v.sorted = true;
    row.p_sorted = packed(v);
    if (pdl_ok) {
      v = Variant();
      v.overlap = gdn::DecodeOverlap::kPrologue;
      row.p_pdl = packed(v);
      v.tile = best_p;
      row.p_best_pdl = packed(v);
    }
    p_autos.push_back(packed(Variant()));
  }
  // The packed figures from the auto timings taken (the median), and the
  // plain launch: where kAuto launches plainly, the same configuration.
  auto packed_figures = [&] {
    row.p_auto = Median(p_autos);
    row.p_spread = Spread(p_autos);
    row.p_pct = 100.0 * pb / (row.p_auto * 1e-6) / 1e9 / ceil.copy_gbps;
    row.p_none = row.p_auto;
    if (gdn::DecodeOverlapFor(B, HV, false, peak_gbps) !=
        gdn::DecodeOverlap::kNone) {
      Variant v;
      v.overlap = gdn::DecodeOverlap::kNone;
      row.p_none = packed(v);
    }
  };
  // ReplaySSM, fp32 ring: every tile (staged ring, overlap auto), then
  // variants.
  st.AllocRing(DType::kFp32, r.s);
  if (o.explore) {
    // The coefficient routes side by side: fused (per CTA) vs
    // precomputed (pre-kernel) for every tile, staged and unstaged.
    using gdn::ReplayCoefRoute;
    std::string line;
    auto one = [&](DecodeTile tile, ReplayCoefRoute route, bool stage,
                   bool pdl) {
      Variant v;
      v.tile = tile;
      v.route = route;
      v.stage = stage;
      if (pdl) v.overlap = gdn::DecodeOverlap::kPrologue;
      const Runner::Cycle c = replay(v, DType::kFp32);
      char buf[160];
      std::snprintf(buf, sizeof(buf), " %s=%.2f(%.2f/%.2f)", v.Name().c_str(),
                    c.cycle_us, c.nonflush_us, c.flush_us);
      line += buf;
      return c;
    };
    const Runner::Cycle fused =
        one(DecodeTile::kAuto, ReplayCoefRoute::kFused, true, false);
    const Runner::Cycle autoc =
        one(DecodeTile::kAuto, ReplayCoefRoute::kAuto, true, false);
    packed_figures();
    row.r_auto = autoc.cycle_us;
    row.r_nf = autoc.nonflush_us;
    row.r_f = autoc.flush_us;
    row.r_fused = fused.cycle_us;
    for (int t = 2; t < gdn::kNumDecodeTiles; ++t) {
      const Runner::Cycle c = one(static_cast<DecodeTile>(t),
                                  ReplayCoefRoute::kPrecomputed, true, false);
      if (c.cycle_us < row.r_best) {
        row.r_best = c.cycle_us;
        row.r_tile = gdn::DecodeTileName(static_cast<DecodeTile>(t));
      }
    }
    for (int t = 1; t < gdn::kNumDecodeTiles - 1; ++t) {
      one(static_cast<DecodeTile>(t), ReplayCoefRoute::kPrecomputed, false,
          false);
    }
    if (pdl_ok) {
      row.r_pdl =
          one(DecodeTile::kAuto, ReplayCoefRoute::kFused, true, true).cycle_us;
      row.r_best_pdl =
          one(DecodeTile::kAuto, ReplayCoefRoute::kPrecomputed, true, true)
              .cycle_us;
    }
    std::printf("EXPLORE HV=%d B=%d packed auto %.2f best %s %.2f |%s\n", HV, B,
                row.p_auto, row.p_tile.c_str(), row.p_best, line.c_str());
    std::fflush(stdout);
    st.Free();
    return row;
  }
  std::vector<Runner::Cycle> r_autos = {replay(Variant(), DType::kFp32)};
  DecodeTile best_r = DecodeTile::kAuto;
  for (int t = 1; t < gdn::kNumDecodeTiles; ++t) {
    Variant v;
    v.tile = static_cast<DecodeTile>(t);
    const Runner::Cycle c = replay(v, DType::kFp32);
    if (c.cycle_us < row.r_best) {
      row.r_best = c.cycle_us;
      best_r = v.tile;
    }
  }
  row.r_tile = gdn::DecodeTileName(best_r);
  {
    Variant v;
    // (The flush step's timing also varied by up to 15 % between minutes
    // of one call in run 25, e.g. 16/32 B = 512: 817 vs 701-751 us.)
    r_autos.push_back(replay(v, DType::kFp32));
    row.r_stag = r.Staggered(st, v);
    rec({{"kind", "replay_fp32_staggered"},
         {"tile", "auto"},
         {"cycle_us", row.r_stag}});
    v.route = gdn::ReplayCoefRoute::kFused;  // run 7's route
    row.r_fused = replay(v, DType::kFp32).cycle_us;
    v = Variant();
    v.linear = true;
    row.r_lin = replay(v, DType::kFp32).cycle_us;
    if (pdl_ok) {
      v = Variant();
      v.overlap = gdn::DecodeOverlap::kPrologue;
      row.r_pdl = replay(v, DType::kFp32).cycle_us;
      v.tile = best_r;
      row.r_best_pdl = replay(v, DType::kFp32).cycle_us;
    }
    r_autos.push_back(replay(Variant(), DType::kFp32));
  }
  // The last two timings of each shipped configuration, in turn.
  for (int i = 0; i < 2; ++i) {
    p_autos.push_back(packed(Variant()));
    r_autos.push_back(replay(Variant(), DType::kFp32));
  }
  packed_figures();
  std::sort(r_autos.begin(), r_autos.end(),
            [](const Runner::Cycle& x, const Runner::Cycle& y) {
              return x.cycle_us < y.cycle_us;
            });
  const Runner::Cycle& c = r_autos[r_autos.size() / 2];  // the median cycle
  row.r_auto = c.cycle_us;
  row.r_nf = c.nonflush_us;
  row.r_f = c.flush_us;
  std::vector<double> cycles;
  for (const Runner::Cycle& x : r_autos) cycles.push_back(x.cycle_us);
  row.r_spread = Spread(cycles);
  {
    // A plain launch: where kAuto launches plainly, the same configuration.
    row.r_none = row.r_auto;
    if (gdn::DecodeOverlapFor(B, HV, true, peak_gbps) !=
        gdn::DecodeOverlap::kNone) {
      Variant v;
      v.overlap = gdn::DecodeOverlap::kNone;
      row.r_none = replay(v, DType::kFp32).cycle_us;
    }
  }
  if (B >= 2 && (B == 8 || B == 128 || B == 512 || o.quick)) {
    const Runner::Cycle same = r.MixedSameLaunch(st);
    const Runner::Cycle split = r.MixedSplit(st);
    row.same = same.cycle_us;
    row.split = split.cycle_us;
    rec({{"kind", "mixed_half_off"},
         {"same_launch_cycle_us", same.cycle_us},
         {"split_launch_cycle_us", split.cycle_us}});
  }
  // bf16 ring, auto tile.
  st.AllocRing(DType::kBf16, r.s);
  row.r_bf16 = replay(Variant(), DType::kBf16).cycle_us;
  // The point's figures (the medians of the shipped configurations).
  rec({{"kind", "point"},
       {"packed_us", row.p_auto},
       {"packed_spread", row.p_spread},
       {"pct_copy", row.p_pct},
       {"cycle_us", row.r_auto},
       {"nonflush_us", row.r_nf},
       {"flush_us", row.r_f},
       {"cycle_spread", row.r_spread},
       {"ratio", row.p_auto / row.r_auto}});
  std::printf(
      "HV=%d B=%d packed auto %.2f us (%.1f%% copy; spread %.1f%%; best %s "
      "%.2f; plain policy %.2f; no pdl %.2f; pdl %.2f / %.2f; linear %.2f; "
      "sorted %.2f) | replay auto %.2f us (nf %.2f, f %.2f; spread %.1f%%; "
      "best %s %.2f; no pdl %.2f; pdl %.2f / %.2f; linear %.2f; staggered "
      "%.2f) | bf16 ring %.2f\n",
      HV, B, row.p_auto, row.p_pct, 100.0 * row.p_spread, row.p_tile.c_str(),
      row.p_best, row.p_plain, row.p_none, row.p_pdl, row.p_best_pdl, row.p_lin,
      row.p_sorted, row.r_auto, row.r_nf, row.r_f, 100.0 * row.r_spread,
      row.r_tile.c_str(), row.r_best, row.r_none, row.r_pdl, row.r_best_pdl,
      row.r_lin, row.r_stag, row.r_bf16);
  std::fflush(stdout);
  st.Free();
  return row;
}

namespace {

// Where the steps are bound by bandwidth (run 123: straight from 64 rows on).
constexpr int kFitMinBatch = 64;

// Per head shape, over the table's batches from kFitMinBatch on: each step's
// cost per row and fixed cost per call (least squares), and the cycle's.
void PrintFits(const std::vector<Row>& table) {
  std::vector<int> shapes;
  for (const Row& t : table) {
    if (std::find(shapes.begin(), shapes.end(), t.hv) == shapes.end()) {
      shapes.push_back(t.hv);
    }
  }
  for (int hv : shapes) {
    std::vector<int> b;
    std::vector<double> p, nf, f;
    for (const Row& t : table) {
      if (t.hv != hv || t.batch < kFitMinBatch) continue;
      b.push_back(t.batch);
      p.push_back(t.p_auto);
      nf.push_back(t.r_nf);
      f.push_back(t.r_f);
    }
    const std::optional<CycleFit> c = FitCycle(b, p, nf, f, kL);
    if (!c) continue;
    std::printf(
        "FIT 16/%d B=%d-%d (%zu batches): us = per row x B + fixed | packed "
        "%.4f + %.2f | non-flush %.4f + %.2f | flush %.4f + %.2f | cycle "
        "%.4f + %.2f | per-row ratio %.3f\n",
        hv, *std::min_element(b.begin(), b.end()),
        *std::max_element(b.begin(), b.end()), b.size(), c->packed.per_row_us,
        c->packed.fixed_us, c->nonflush.per_row_us, c->nonflush.fixed_us,
        c->flush.per_row_us, c->flush.fixed_us, c->cycle.per_row_us,
        c->cycle.fixed_us, c->per_row_ratio);
  }
}

}  // namespace

// The decode sweep's table, then a FIT line per head shape (PrintFits).
void PrintTable(const char* device, const Ceilings& ceil,
                const std::vector<Row>& table) {
  std::printf(
      "\n== GDN decode, %s: copy %.0f GB/s, in-place rmw %.0f, read %.0f. us "
      "per call; replay = L=16 fp32-ring cycle average ==\n",
      device, ceil.copy_gbps, ceil.rmw_gbps, ceil.read_gbps);
  std::printf(
      "%-6s %4s|%8s %5s %8s %-5s %8s %7s %7s %7s %8s %8s|%8s %7s %7s %8s "
      "%-5s %7s %7s %7s %8s %7s %7s|%5s %5s %5s %5s|%7s|%7s %7s|%5s %5s\n",
      "heads", "B", "P.auto", "%cp", "P.best", "tile", "P.plain", "P.nopdl",
      "P.pdl", "P.bpdl", "P.lin", "P.sort", "R.auto", "nonfl", "flush",
      "R.best", "tile", "R.nopdl", "R.pdl", "R.bpdl", "R.lin", "R.fused",
      "R.stag", "x", "xnopd", "xpdl", "xstag", "bf16rg", "mixSam", "mixSpl",
      "P.spr", "R.spr");
  for (const Row& t : table) {
    std::printf(
        "16/%-3d %4d|%8.2f %5.1f %8.2f %-5s %8.2f %7.2f %7.2f %7.2f %8.2f "
        "%8.2f|%8.2f %7.2f %7.2f %8.2f %-5s %7.2f %7.2f %7.2f %8.2f %7.2f "
        "%7.2f|%5.2f %5.2f %5.2f %5.2f|%7.2f|%7.2f %7.2f|%5.1f %5.1f\n",
        t.hv, t.batch, t.p_auto, t.p_pct, t.p_best, t.p_tile.c_str(), t.p_plain,
        t.p_none, t.p_pdl, t.p_best_pdl, t.p_lin, t.p_sorted, t.r_auto, t.r_nf,
        t.r_f, t.r_best, t.r_tile.c_str(), t.r_none, t.r_pdl, t.r_best_pdl,
        t.r_lin, t.r_fused, t.r_stag, t.p_auto / t.r_auto,
        t.r_none > 0 ? t.p_none / t.r_none : 0.0,
        t.r_best_pdl > 0 ? t.p_best_pdl / t.r_best_pdl : 0.0,
        t.p_auto / t.r_stag, t.r_bf16, t.same, t.split, 100.0 * t.p_spread,
        100.0 * t.r_spread);
  }
  PrintFits(table);
}

}  // namespace rollout::bench
