#include "bench/gdn_bench_modes.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gdn/decode.h"

namespace rollout::bench {

using gdn::DecodeTile;
using gdn::DType;

namespace {

// "cycle (non-flush / flush) x ratio" of a ReplaySSM cycle in µs, the ratio
// against a packed step of `packed_us`.
std::string CycleText(const Runner::Cycle& c, double packed_us) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.2f (%.2f / %.2f) x %.3f", c.cycle_us,
                c.nonflush_us, c.flush_us, packed_us / c.cycle_us);
  return buf;
}

// The auto configuration with the state traffic's L2 policy forced.
Variant PolicyVariant(gdn::DecodeStatePolicy p) {
  Variant v;
  v.policy = p;
  return v;
}

}  // namespace

// --replay-only: the shipped packed (median of three) and ReplaySSM
// configurations at the batches of the ReplaySSM targets, then both with
// programmatic dependent launch (kPrologue), then launched plainly and with
// kLaunch; one line per shape and batch, for A/B runs of two builds in one
// call. At B <= 8 also the ReplaySSM cycle with force-flush flags passed (all
// 0: the kernels read them; the benchmark's other lines pass none).
void ReplayOnly(Runner& r, std::mt19937& rng, bool pdl_ok) {
  for (int HV : {32, 16}) {
    for (int B : {1, 8, 128, 256, 512, 1024}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      Variant v;
      const double p = r.PackedMedian3(st, v);
      const Runner::Cycle c = r.Replay(st, v);
      const double sg = r.Staggered(st, v);
      if (pdl_ok) v.overlap = gdn::DecodeOverlap::kPrologue;
      const double pp = r.Packed(st, v);
      const Runner::Cycle cp = r.Replay(st, v);
      const double sgp = r.Staggered(st, v);
      std::printf(
          "REPLAY HV=%d B=%d packed %.2f | replay %.2f (%.2f / %.2f) | "
          "x %.3f | staggered %.2f x %.3f || pdl: packed %.2f | replay %.2f "
          "(%.2f / %.2f) | x %.3f | staggered %.2f x %.3f\n",
          HV, B, p, c.cycle_us, c.nonflush_us, c.flush_us, p / c.cycle_us, sg,
          p / sg, pp, cp.cycle_us, cp.nonflush_us, cp.flush_us,
          pp / cp.cycle_us, sgp, pp / sgp);
      if (B <= 8) {  // force-flush flags passed (all 0), as an engine does
        Variant f;
        f.flags = true;
        const Runner::Cycle cf = r.Replay(st, f);
        std::printf(
            "FLAGS HV=%d B=%d packed %.2f | replay %.2f (%.2f / %.2f) "
            "| x %.3f\n",
            HV, B, p, cf.cycle_us, cf.nonflush_us, cf.flush_us,
            p / cf.cycle_us);
      }
      if (pdl_ok) {  // each launch kind forced: plain, PDL waiting first
        Variant n;
        n.overlap = gdn::DecodeOverlap::kNone;
        const double pn = r.Packed(st, n);
        const Runner::Cycle cn = r.Replay(st, n);
        n.overlap = gdn::DecodeOverlap::kLaunch;
        const double pw = r.Packed(st, n);
        const Runner::Cycle cw = r.Replay(st, n);
        std::printf(
            "LAUNCH HV=%d B=%d none: packed %.2f | replay %s || "
            "launch: packed %.2f | replay %s\n",
            HV, B, pn, CycleText(cn, pn).c_str(), pw,
            CycleText(cw, pw).c_str());
      }
      if (B >= 128) {  // slot order: scattered sets sorted, contiguous sets
        Variant o;
        o.sorted = true;
        const double ps = r.Packed(st, o);
        const Runner::Cycle cs = r.Replay(st, o);
        o.sorted = false;
        o.linear = true;
        const double pl = r.Packed(st, o);
        std::printf(
            "SLOTS HV=%d B=%d packed scattered %.2f sorted %.2f contiguous "
            "%.2f | replay sorted %s\n",
            HV, B, p, ps, pl, CycleText(cs, ps).c_str());
      }
      {  // each coefficient route forced: fused (ring staged or not), then
         // precomputed
        Variant f;
        f.route = gdn::ReplayCoefRoute::kFused;
        const Runner::Cycle fs = r.Replay(st, f);
        f.stage = false;
        const Runner::Cycle fu = r.Replay(st, f);
        Variant c;
        c.route = gdn::ReplayCoefRoute::kPrecomputed;
        const Runner::Cycle pc = r.Replay(st, c);
        std::printf(
            "FUSED HV=%d B=%d staged %s | unstaged %s | precomputed %s\n", HV,
            B, CycleText(fs, p).c_str(), CycleText(fu, p).c_str(),
            CycleText(pc, p).c_str());
      }
      {  // the bf16 ring: the shipped route, then each route forced
        st.AllocRing(DType::kBf16, r.s);
        Variant b;
        const Runner::Cycle ba = r.Replay(st, b);
        b.route = gdn::ReplayCoefRoute::kFused;
        const Runner::Cycle bf = r.Replay(st, b);
        b.route = gdn::ReplayCoefRoute::kPrecomputed;
        const Runner::Cycle bp = r.Replay(st, b);
        std::printf("BF16 HV=%d B=%d auto %s | fused %s | precomputed %s\n", HV,
                    B, CycleText(ba, p).c_str(), CycleText(bf, p).c_str(),
                    CycleText(bp, p).c_str());
      }
      std::fflush(stdout);
      st.Free();
    }
  }
}

// --overlap: each launch overlap forced at small batches, where the launch
// latency is a large part of a call (the evidence of DecodeOverlapFor), and
// with kAuto's tiles at B = 128 and 256 (2048-8192 (row, value head) pairs:
// the range where run 113's kPrologue ReplaySSM steps, R.pdl, ran 1-3 %
// faster on an H200 than kAuto's plain launch).
void OverlapSweep(Runner& r, std::mt19937& rng) {
  using gdn::DecodeOverlap;
  const double peak_gbps = gdn::DevicePeakMemoryGbps();  // the tile tables
  for (int HV : {32, 16}) {
    for (int B : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      std::string line;
      auto add = [&](const char* what, double us) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), " %s %.2f", what, us);
        line += buf;
      };
      // Small tiles forced only where a batch is small enough to take them.
      const bool small = B <= 64;
      std::vector<DecodeTile> packed_tiles = {DecodeTile::kAuto};
      std::vector<DecodeTile> replay_tiles = {DecodeTile::kAuto};
      if (small) {
        packed_tiles.push_back(DecodeTile::kBv8);
        replay_tiles.insert(
            replay_tiles.end(),
            {DecodeTile::kBv8, DecodeTile::kBv16, DecodeTile::kBv32});
      }
      for (DecodeTile tile : packed_tiles) {
        for (DecodeOverlap ov : {DecodeOverlap::kNone, DecodeOverlap::kLaunch,
                                 DecodeOverlap::kPrologue}) {
          Variant v;
          v.tile = tile;
          v.overlap = ov;
          add(v.Name().c_str(), r.Packed(st, v));
        }
      }
      line += " | replay";
      for (DecodeTile tile : replay_tiles) {
        for (DecodeOverlap ov : {DecodeOverlap::kNone, DecodeOverlap::kLaunch,
                                 DecodeOverlap::kPrologue}) {
          if (ov == DecodeOverlap::kPrologue && tile != DecodeTile::kAuto) {
            continue;
          }
          Variant v;
          v.tile = tile;
          v.overlap = ov;
          add(v.Name().c_str(), r.Replay(st, v).cycle_us);
        }
      }
      std::printf(
          "OVERLAP HV=%d B=%d (auto: %s / %s, tiles %s / %s) packed%s\n", HV, B,
          gdn::DecodeOverlapName(
              gdn::DecodeOverlapFor(B, HV, false, peak_gbps)),
          gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, true, peak_gbps)),
          gdn::DecodeTileName(gdn::DecodeTileFor(B, HV, false, peak_gbps)),
          gdn::DecodeTileName(gdn::DecodeTileFor(B, HV, true, peak_gbps)),
          line.c_str());
      std::fflush(stdout);
      st.Free();
    }
  }
}

void TileTable(Runner& r, std::mt19937& rng) {
  using gdn::DecodeOverlap;
  using gdn::DecodeStatePolicy;
  const double gbps = gdn::DevicePeakMemoryGbps();
  std::printf("TILETABLE peak DRAM %.0f GB/s\n", gbps);
  // One configuration: kAuto's picks, then the variants timed (us).
  auto line = [&](const char* what, int HV, int B,
                  const std::vector<Variant>& vars, bool replay) {
    Setup st = MakeSetup(HV, B, r.s, rng);
    if (replay) st.AllocRing(DType::kFp32, r.s);
    std::string text;
    for (const Variant& v : vars) {
      const double us = replay ? r.Replay(st, v).cycle_us : r.Packed(st, v);
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %s %.2f", v.Name().c_str(), us);
      text += buf;
    }
    std::printf("TILETABLE %s HV=%d B=%d units %d (auto: %s, %s)%s\n", what, HV,
                B, HV * B,
                gdn::DecodeTileName(gdn::DecodeTileFor(B, HV, replay, gbps)),
                gdn::DecodeStatePolicyFor(B, HV, replay) ==
                        DecodeStatePolicy::kEvictLast
                    ? "evict-last"
                    : "plain",
                text.c_str());
    std::fflush(stdout);
    st.Free();
  };
  auto tile = [](DecodeTile t, DecodeOverlap ov = DecodeOverlap::kAuto) {
    Variant v;
    v.tile = t;
    v.overlap = ov;
    return v;
  };
  // (value heads, batch) in the packed step's wide-tile range
  // (PackedWideTileRange: 129-256 pairs), then around the 2048-pair
  // boundary of the packed L2 policy and the 3072-pair one of the narrow
  // ReplaySSM tile.
  constexpr std::pair<int, int> kWide[] = {{16, 9}, {16, 12}, {16, 16}, {32, 5},
                                           {32, 6}, {32, 8},  {48, 3},  {48, 4},
                                           {48, 5}, {64, 3},  {64, 4}};
  constexpr std::pair<int, int> kLarge[] = {
      {16, 64},  {16, 128}, {16, 160}, {16, 192}, {16, 224},
      {16, 256}, {16, 384}, {32, 32},  {32, 64},  {32, 80},
      {32, 96},  {32, 112}, {32, 128}, {32, 192}};
  for (const auto& [HV, B] : kWide) {
    line("packed", HV, B,
         {Variant(), tile(DecodeTile::kBv8, DecodeOverlap::kLaunch),
          tile(DecodeTile::kBv64), tile(DecodeTile::kBv128),
          tile(DecodeTile::kBv128, DecodeOverlap::kLaunch)},
         false);
  }
  for (const auto& [HV, B] : kLarge) {
    // The plain policy timed both before and after evict-last: run 110 found
    // a plain step faster right after evict-last steps (their lines stay in
    // L2) than after plain ones, so the order decides a single comparison.
    line("policy", HV, B,
         {Variant(), PolicyVariant(DecodeStatePolicy::kDefault),
          PolicyVariant(DecodeStatePolicy::kEvictLast),
          PolicyVariant(DecodeStatePolicy::kDefault)},
         false);
    line("replay", HV, B,
         {Variant(), tile(DecodeTile::kBv32), tile(DecodeTile::kBv64)}, true);
  }
  FlushPolicy(r, rng);
}

void FlushPolicy(Runner& r, std::mt19937& rng) {
  using gdn::DecodeStatePolicy;
  // The ReplaySSM step's L2 policy (DecodeStatePolicyFor: evict-last from
  // 2048 pairs, after runs 117 and 118). It sets only the flush rows' state
  // traffic (the non-flush rows read the checkpoint evict-first), so the
  // flush is printed apart: one flush in L steps weighs 1/16 of a cycle,
  // below a single cycle's noise. Plain and evict-last alternate twice (run
  // 110's order effect: TileTable). The packed step (auto) of the same setup
  // gives each cycle's ratio in the same run.
  for (int HV : {32, 16}) {
    for (int B : {128, 256, 512, 1024}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      std::string text;
      for (int pass = 0; pass < 2; ++pass) {
        for (DecodeStatePolicy pol :
             {DecodeStatePolicy::kDefault, DecodeStatePolicy::kEvictLast}) {
          const Variant v = PolicyVariant(pol);
          const Runner::Cycle t = r.Replay(st, v);
          char buf[96];
          std::snprintf(buf, sizeof(buf), " %s %.2f/%.2f/%.2f",
                        v.Name().c_str(), t.cycle_us, t.nonflush_us,
                        t.flush_us);
          text += buf;
        }
      }
      const double packed_us = r.Packed(st, Variant());
      std::printf(
          "FLUSHPOLICY HV=%d B=%d (cycle/non-flush/flush us)%s packed %.2f\n",
          HV, B, text.c_str(), packed_us);
      std::fflush(stdout);
      st.Free();
    }
  }
}

void ColdRings(Runner& r, std::mt19937& rng) {
  // Runs 118 and 119 found the 16/16 non-flush step's cost per row ~8 %
  // higher from B = 160 on, where the rings of sets rotated over 256 MiB of
  // state alone stop fitting in L2: below that a set's ring entries were still
  // in L2 at its next step, which a model with many layers between two steps
  // of a layer never sees. The sweep now rotates the rings over kRotateBytes
  // too (RingRotation::kRotate); these lines time each point both ways.
  for (int HV : {32, 16}) {
    for (int B : {1, 8, 64, 128, 160, 256, 512}) {
      // Only where the two rotations differ.
      if (RotatingSets(HV, B, RingRotation::kStateOnly) ==
          RotatingSets(HV, B, RingRotation::kRotate)) {
        continue;
      }
      const double ring_set_bytes =
          static_cast<double>(B) *
          gdn::GdnReplayRing::SlotBytes(kH, HV, kD, kL, DType::kFp32);
      std::string text;
      // One timing of the point with the sets `rings` asks for, appended to
      // `text`.
      auto time_point = [&](const char* label, RingRotation rings) {
        Setup st = MakeSetup(HV, B, r.s, rng, 2, rings);
        st.AllocRing(DType::kFp32, r.s);
        const Runner::Cycle t = r.Replay(st, Variant());
        const double packed_us = r.Packed(st, Variant());
        char buf[160];
        std::snprintf(buf, sizeof(buf),
                      " %s: sets %d rings %.1f MB cycle/non-flush/flush "
                      "%.2f/%.2f/%.2f packed %.2f ratio %.3f",
                      label, st.nsets, st.nsets * ring_set_bytes / 1e6,
                      t.cycle_us, t.nonflush_us, t.flush_us, packed_us,
                      packed_us / t.cycle_us);
        text += buf;
        st.Free();
      };
      time_point("state only", RingRotation::kStateOnly);
      time_point("sweep", RingRotation::kRotate);
      std::printf("COLDRINGS HV=%d B=%d%s\n", HV, B, text.c_str());
      std::fflush(stdout);
    }
  }
}

// --flush-cost: where a small-batch ReplaySSM step's time goes, by ring
// fill. At B = 1 and 8 of both shapes: the packed step, the non-flush step
// at ring cursor n (n committed entries: the history it replays) and the
// flush step folding n entries (n < 15 forced by the force-flush flags, n =
// 15 the cycle's own flush), each in a graph of back-to-back calls over the
// rotating slot sets. flush(0) - packed is the replay kernel's flush path
// without a fold, flush(n) - flush(0) the fold of n entries. The auto tile,
// then at 16/32 B = 1 the 8-row tile (the auto tile before tile32); each
// staged with both copy orders forced (ReplayCopyOrder: kAuto copies the
// state tile first at B = 1, the ring first at B = 8), and with the ring
// unstaged (read from L2 into registers, no cp.async group of its own).
// Ring first, the staged bv8 kernel's first tile copy is SASS instruction
// 264 (the packed kernel's 97); tile first, 130 (run 103 measured its
// patch's 153 on an H100: batch-1 cycles 2.1-2.2 % shorter). Unstaged, the
// kernels copy the tile after the ring's arithmetic, at 202. Run 102 (H100):
// the unstaged kernels pay 0.6-1.2 us more than the staged ones at n = 0 (they
// load their ring registers for every j < L), and moving their tile copies to
// instruction 126 (tfirst, bench/results/run102) took 0.2-0.35 us of it.
void FlushCost(Runner& r, std::mt19937& rng) {
  constexpr int kFill[] = {0, 1, 4, 8, 14};  // non-flush cursors (< L - 1)
  constexpr int kFold[] = {0, 1, 4, 8, 15};  // entries a flush folds
  for (int HV : {32, 16}) {
    for (int B : {1, 8}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      int8_t* ones = Upload(std::vector<int8_t>(B, 1));
      std::vector<Variant> vars(1);
      if (HV == 32 && B == 1) {
        vars.emplace_back();
        vars.back().tile = DecodeTile::kBv8;
      }
      for (size_t i = 0, staged = vars.size(); i < staged; ++i) {
        for (gdn::ReplayCopyOrder o : {gdn::ReplayCopyOrder::kRingFirst,
                                       gdn::ReplayCopyOrder::kTileFirst}) {
          vars.push_back(vars[i]);
          vars.back().order = o;
        }
        vars.push_back(vars[i]);
        vars.back().stage = false;
      }
      const int calls = Runner::GraphCalls(st.nsets);
      for (const Variant& v : vars) {
        const double p = r.PackedMedian3(st, v);
        // One graph of `calls` steps at cursor n, flags forced or not.
        auto step = [&](int n, bool force) {
          return r.UsPerCall(calls, [&](int i) {
            const int32_t* slots = st.SlotSet(false, false, i % st.nsets);
            gdn::GdnReplayParams rp =
                ReplayParams(st, slots, slots, st.cursors + n * st.B, st.B, v);
            if (force) rp.force_flush = ones;
            BENCH_OK(gdn::LaunchGdnReplayDecode(rp, r.s));
          });
        };
        std::printf("FLUSHCOST HV=%d B=%d tile %s packed %.2f | non-flush", HV,
                    B, v.Name().c_str(), p);
        for (int n : kFill) std::printf(" n%d %.2f", n, step(n, false));
        std::printf(" | flush");
        for (int n : kFold) {
          std::printf(" n%d %.2f", n, step(n, n < kL - 1));
        }
        // The variant's whole cycle, timed as the sweep times R.auto.
        const Runner::Cycle c = r.Replay(st, v);
        std::printf(" | cycle %.2f ratio %.3f\n", c.cycle_us, p / c.cycle_us);
        std::fflush(stdout);
      }
      FreeAll(ones);
      st.Free();
    }
  }
}

// --profile[=HV/B]: a few plain launches (no graph) for a profiler (ncu): 16
// key heads, HV value heads, B rows (default 16/32, B = 256), the packed step
// (twice), then twice each the shipped ReplaySSM non-flush steps at cursors
// 0, 1 and 7 and the flush (cursor 15) (kAuto: at B = 256 the precomputed
// route, bv64), then the fused route's non-flush and flush steps (bv64), then
// the shipped flush forced by the force-flush flags at cursors 0 and 1: 14
// launches. Cursors 0 and 1 separate what a batch-1 non-flush step pays for
// its first ring entry (0.23-0.28 us on the H200, run 85's --flush-cost), the
// forced flushes what a flush pays for its fold's fixed part (flush(1) -
// flush(0): 0.3-0.9 us at B = 1 on the H100, run 109's --flush-cost).
void ProfileLaunches(Runner& r, int HV, int B) {
  std::mt19937 prng(99);
  Setup st = MakeSetup(HV, B, r.s, prng);
  st.AllocRing(DType::kFp32, r.s);
  int8_t* ones = Upload(std::vector<int8_t>(B, 1));
  for (int i = 0; i < 2; ++i) {
    BENCH_OK(gdn::LaunchGdnPackedDecode(
        StepParams(st, st.sets, st.B, Variant()), r.s));
  }
  auto rep = [&](DecodeTile tile, gdn::ReplayCoefRoute route, int cursor,
                 bool force = false) {
    Variant v;
    v.tile = tile;
    v.route = route;
    gdn::GdnReplayParams rp = ReplayParams(st, st.sets + st.B, st.sets + st.B,
                                           st.cursors + cursor * st.B, st.B, v);
    if (force) rp.force_flush = ones;
    BENCH_OK(gdn::LaunchGdnReplayDecode(rp, r.s));
  };
  for (int i = 0; i < 2; ++i) {
    for (const int cursor : {0, 1, 7, 15}) {
      rep(DecodeTile::kAuto, gdn::ReplayCoefRoute::kAuto, cursor);
    }
  }
  rep(DecodeTile::kBv64, gdn::ReplayCoefRoute::kFused, 7);
  rep(DecodeTile::kBv64, gdn::ReplayCoefRoute::kFused, 15);
  for (const int cursor : {0, 1}) {
    rep(DecodeTile::kAuto, gdn::ReplayCoefRoute::kAuto, cursor, true);
  }
  BENCH_CUDA(cudaStreamSynchronize(r.s));
  FreeAll(ones);
  st.Free();
  std::printf("profile launches done\n");
}

// Whether programmatic dependent launch works here (probed once, outside any
// capture).
bool ProbePdl(Runner& r, std::mt19937& rng) {
  Setup st = MakeSetup(16, 1, r.s, rng);
  Variant v;
  v.overlap = gdn::DecodeOverlap::kPrologue;
  const bool pdl_ok =
      gdn::LaunchGdnPackedDecode(StepParams(st, st.sets, 1, v), r.s).ok() &&
      cudaStreamSynchronize(r.s) == cudaSuccess;
  cudaGetLastError();
  st.Free();
  std::printf("programmatic dependent launch: %s\n",
              pdl_ok ? "ok" : "unavailable");
  return pdl_ok;
}

}  // namespace rollout::bench
