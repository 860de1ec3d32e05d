// The GDN benchmark's single-purpose modes besides the full sweep:
// --replay-only (A/B runs of builds), --overlap, --flush-cost, --profile
// (launches for ncu), and the probe of programmatic dependent launch.
#ifndef ROLLOUT_BENCH_GDN_BENCH_MODES_H_
#define ROLLOUT_BENCH_GDN_BENCH_MODES_H_

#include <random>

#include "bench/gdn_bench_runner.h"

namespace rollout::bench {

// --replay-only: the shipped packed (median of three) and ReplaySSM
// configurations at the batches of the ReplaySSM targets, then both with
// programmatic dependent launch (kPrologue), then launched plainly and with
// kLaunch; one line per shape and batch, for A/B runs of two builds in one
// call.
void ReplayOnly(Runner& r, std::mt19937& rng, bool pdl_ok);

// --overlap: each launch overlap forced at small batches, where the launch
// latency is a large part of a call (the evidence of DecodeOverlapFor), and
// with kAuto's tiles at B = 128 and 256.
void OverlapSweep(Runner& r, std::mt19937& rng);

// --tile-table: the kAuto tile boundaries that depend on the card
// (gdn::DecodeTileFor with the card's gdn::DevicePeakMemoryGbps): the packed
// step's 8-, 64- and 128-row tiles at 144-256 (row, value head) pairs and the
// ReplaySSM 32- and 64-row tiles at 1024-6144 pairs, with the packed step's
// L2 policies (gdn::DecodeStatePolicyFor) there too; one line each. Then the
// ReplaySSM step's policies at B = 128-1024 of both shapes (plain and
// evict-last, twice each): cycle, non-flush and flush step apart, since the
// policy sets only the flush rows' state traffic.
void TileTable(Runner& r, std::mt19937& rng);

// --flush-policy: only the last part of --tile-table: the ReplaySSM step's
// cycle, non-flush and flush step under the plain and the evict-last L2
// policy (twice each), with the packed step, at B = 128-1024 of both shapes.
void FlushPolicy(Runner& r, std::mt19937& rng);

// --cold-rings: the shipped ReplaySSM cycle (fp32 ring) and packed step at
// B = 1-512 of both shapes, with the slot sets rotated over 256 MiB of state
// alone (RingRotation::kStateOnly, the sweep's method up to run 118), then
// with the sweep's sets (the rings rotated over 256 MiB too). One COLDRINGS
// line per point where the two differ.
void ColdRings(Runner& r, std::mt19937& rng);

// --flush-cost: the packed step, the ReplaySSM non-flush step by ring fill
// and the flush by the number of entries it folds (forced by the force-flush
// flags), at B = 1 and 8 of both shapes: the parts of a small-batch cycle,
// then each variant's whole cycle and its ratio to the packed step.
void FlushCost(Runner& r, std::mt19937& rng);

// --profile[=HV/B]: a few plain launches (no graph) for a profiler (ncu): 16
// key heads, HV value heads, B rows (default 16/32, B = 256), the packed step
// (twice), then twice each the shipped ReplaySSM non-flush steps at cursors
// 0, 1 and 7 and the flush (cursor 15) (kAuto: at B = 256 the precomputed
// route, bv64), then the fused route's non-flush and flush steps (bv64), then
// the shipped flush forced by the force-flush flags at cursors 0 and 1: 14
// launches. Cursors 0 and 1 separate what a batch-1 non-flush step pays for
// its first ring entry (0.23-0.28 us on the H200, run 85's --flush-cost), the
// forced flushes what a flush pays for its fold's fixed part.
void ProfileLaunches(Runner& r, int HV, int B);

// Whether programmatic dependent launch works here (probed once, outside any
// capture).
bool ProbePdl(Runner& r, std::mt19937& rng);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_MODES_H_
