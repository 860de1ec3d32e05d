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
// calls whose slot sets rotate over >= 256 MiB of state (state always comes
// from HBM; slots scattered over the pool unless noted), median over replays,
// µs per call = replay time / calls. The copy / in-place / read-only
// bandwidth ceilings and the batch-1 floors (an empty kernel, an in-place
// and a read-only pass over one layer's batch-1 state) are measured in the
// same run.
// Effective bandwidth counts the algorithmic minimum bytes: fp32 state read
// (+ write), ring reads/appends, q|k|v, a, b in and o out.
//
//   gdn_bench [--json=PATH] [--quick] [--micro] [--no-micro] [--explore]
//             [--profile[=HV/B]] [--replay-only] [--overlap] [--layer]
//             [--bounds] [--prefill]
// --micro: only the memory-pattern microbenchmarks (rmw_micro.h).
// --explore: the tiles and coefficient routes side by side (design runs).
// --profile[=HV/B]: a few plain launches for ncu (no timing; default 32/256).
// --overlap: the launch overlaps (gdn::DecodeOverlap) side by side at batch
//   1-64: packed (auto tile and bv8), ReplaySSM cycles (auto tile and
//   bv8-bv32; plain launch and kLaunch).
// --layer: one layer's decode kernels in model order (conv update, then the
//   packed or a ReplaySSM step), the decode launched plainly, as shipped
//   (kAuto) and with kPrologue, and as the pair of gdn/layer_decode.h, at
//   batch 1-512, then the conv update alone at B = 256 and 1024; the full
//   run measures B = 1, 8, 64 of the first.
// --prefill: only the chunked prefill lines (both routes), as in a full run:
//   µs per layer, M tok/s, the rate of the chunk algebra's fp32 products and
//   of the substitution (bench/prefill_work.h), the two-pass route's share of
//   the 3xTF32 ceiling (a third of the measured mma.sync tf32 rate) and the
//   HBM floor (the fewest bytes at the copy ceiling).
// --bounds: only the ReplaySSM speed-up bounds of the byte counts (no GPU;
//   runs with a GPU print them at the measured ceilings after those).
// --replay-only: the shipped packed and ReplaySSM configurations at the
//   batches of the ReplaySSM targets (aligned and staggered cycles), without
//   and with PDL, one line each, plus from B = 128 on slot orders, and at
//   every batch each coefficient route forced (fused with the ring staged or
//   not, precomputed) and the bf16 ring on each route (A/B runs of builds).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/bench_kernels.h"
#include "bench/decode_bytes.h"
#include "bench/prefill_work.h"
#include "bench/rmw_micro.h"
#include "gdn/conv.h"
#include "gdn/decode.h"
#include "gdn/layer_decode.h"
#include "gdn/prefill.h"
#include "nlohmann/json.hpp"

namespace rollout::bench {
namespace {

using gdn::DecodeTile;
using gdn::DType;
using nlohmann::json;

#define CK(x)                                                        \
  do {                                                               \
    const cudaError_t e_ = (x);                                      \
    if (e_ != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, \
                   cudaGetErrorString(e_));                          \
      std::exit(1);                                                  \
    }                                                                \
  } while (0)

#define OK(x)                                                \
  do {                                                       \
    const absl::Status s_ = (x);                             \
    if (!s_.ok()) {                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, \
                   s_.ToString().c_str());                   \
      std::exit(1);                                          \
    }                                                        \
  } while (0)

constexpr int kD = 128;
constexpr int kH = 16;
constexpr int kL = 16;
constexpr size_t kRotateBytes = 256ull << 20;
// The H200 ceilings of run 26 (the figures of record), for --bounds.
constexpr double kRun26CopyGbps = 4245, kRun26ReadGbps = 4334;

template <typename T>
T* Alloc(size_t n) {
  void* p = nullptr;
  CK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

// A device copy of `v` (slot lists, cursors, offsets).
int32_t* Upload(const std::vector<int32_t>& v) {
  int32_t* d = Alloc<int32_t>(v.size());
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(int32_t),
                cudaMemcpyHostToDevice));
  return d;
}

// cudaFree of every non-null pointer given.
void FreeOne(const void* p) {
  if (p != nullptr) CK(cudaFree(const_cast<void*>(p)));
}
template <typename... T>
void FreeAll(T*... p) {
  (FreeOne(p), ...);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Captures the launches of `body` on `s` into an executable graph.
cudaGraphExec_t Capture(cudaStream_t s, const std::function<void()>& body) {
  cudaGraphExec_t exec;
  CK(CaptureGraph(s, body, &exec));
  return exec;
}

struct Events {
  cudaEvent_t a, b;
  Events() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Milliseconds of one run of `fn` on `s`.
  double Time(cudaStream_t s, const std::function<void()>& fn) {
    CK(cudaEventRecord(a, s));
    fn();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0.f;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

struct Ceilings {
  double copy_gbps = 0, rmw_gbps = 0, rmw_cs_gbps = 0, read_gbps = 0;
  double mma_tf32_tflops = 0;  // mma.sync m16n8k8 tf32, every SM busy
};

// The tf32 tensor ceiling (bench_kernels.h), ~0.7 ms per launch.
double MeasureMmaTf32(cudaStream_t s, Events& ev) {
  constexpr int kIters = 4096;
  float* out = Alloc<float>(1);
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    t.push_back(ev.Time(s, [&] { CK(MmaTf32Loop(kIters, out, s)); }));
  }
  t.erase(t.begin(), t.begin() + 2);  // warm-up
  FreeAll(out);
  return MmaTf32LoopFlops(kIters) / (Median(t) * 1e-3) / 1e12;
}

Ceilings MeasureCeilings(cudaStream_t s, Events& ev) {
  const size_t bytes = 2ull << 30, n = bytes / 4;
  float* src = Alloc<float>(n);
  float* dst = Alloc<float>(n);
  float* sum = Alloc<float>(1);
  CK(FillUniform(src, n, 1, -1.f, 1.f, s));
  CK(cudaMemsetAsync(dst, 0, bytes, s));
  std::vector<double> copy, rmw, rmw_cs, read;
  for (int i = 0; i < 12; ++i) {
    copy.push_back(ev.Time(s, [&] {
      CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    }));
    rmw.push_back(
        ev.Time(s, [&] { CK(ScaleInPlace(src, n, 1.0f, false, s)); }));
    rmw_cs.push_back(
        ev.Time(s, [&] { CK(ScaleInPlace(src, n, 1.0f, true, s)); }));
    read.push_back(ev.Time(s, [&] { CK(ReadSum(src, n, sum, s)); }));
  }
  Ceilings c;
  // Drop the first two of each (warm-up).
  for (auto* v : {&copy, &rmw, &rmw_cs, &read})
    v->erase(v->begin(), v->begin() + 2);
  c.copy_gbps = 2.0 * bytes / (Median(copy) * 1e-3) / 1e9;
  c.rmw_gbps = 2.0 * bytes / (Median(rmw) * 1e-3) / 1e9;
  c.rmw_cs_gbps = 2.0 * bytes / (Median(rmw_cs) * 1e-3) / 1e9;
  c.read_gbps = 1.0 * bytes / (Median(read) * 1e-3) / 1e9;
  FreeAll(src, dst, sum);
  c.mma_tf32_tflops = MeasureMmaTf32(s, ev);
  return c;
}

// Everything one (shape, batch) point needs on the device.
struct Setup {
  int H = kH, HV = 32, B = 1, nsets = 2, num_slots = 2;
  int conv_dim = 0;
  float* state = nullptr;          // [num_slots, HV, V, K]
  int32_t* sets = nullptr;         // [nsets, B] scattered disjoint slots
  int32_t* sets_lin = nullptr;     // [nsets, B] set s = slots s*B .. s*B+B-1
  int32_t* sets_sorted = nullptr;  // [nsets, B] the sets of `sets`, ascending
  int32_t* half_on = nullptr;      // [nsets, B/2] even rows of each set
  int32_t* half_off = nullptr;     // [nsets, B/2] odd rows
  int32_t* mixed_rings = nullptr;  // [nsets, B] slot or -1 (odd rows OFF)
  int32_t* cursors = nullptr;      // [L, B]: buffer s holds s everywhere
  // [L, B]: buffer s holds (s + row) % L: the flush phases staggered over the
  // rows as the engine schedules them (DESIGN.md), B / L rows flush per step.
  int32_t* stag_cursors = nullptr;
  uint16_t* qkv = nullptr;  // [B, conv_dim]
  uint16_t* a = nullptr;    // [B, HV]
  uint16_t* b = nullptr;
  float* A_log = nullptr;  // [HV]
  float* dt_bias = nullptr;
  uint16_t* o = nullptr;       // [B, HV*V]
  uint16_t* ring_k = nullptr;  // rings per slot: bf16 k rows + scales,
  float* ring_ks = nullptr;    // d fp32 or bf16 (ring_dtype)
  void* ring_d = nullptr;
  float* ring_g = nullptr;
  DType ring_dtype = DType::kFp32;
  float* coef = nullptr;  // ReplaySSM coefficient scratch [B, HV, 2L + 4]
  int64_t coef_floats = 0;

  void Free() {
    FreeAll(state, sets, sets_lin, sets_sorted, half_on, half_off, mixed_rings,
            cursors, stag_cursors, qkv, a, b, A_log, dt_bias, o, ring_k,
            ring_ks, ring_d, ring_g, coef);
  }

  // The slot list of set `set` (scattered, scattered in ascending order, or
  // contiguous).
  const int32_t* SlotSet(bool linear, bool sorted, int set) const {
    return (linear   ? sets_lin
            : sorted ? sets_sorted
                     : sets) +
           static_cast<int64_t>(set) * B;
  }

  void AllocRing(DType dt, cudaStream_t s) {
    FreeAll(ring_k, ring_ks, ring_d, ring_g);
    ring_dtype = dt;
    const size_t e = gdn::DTypeBytes(dt);
    const size_t nk = static_cast<size_t>(num_slots) * H * kL * kD;
    const size_t nks = static_cast<size_t>(num_slots) * H * kL;
    const size_t nd = static_cast<size_t>(num_slots) * HV * kL * kD;
    ring_k = Alloc<uint16_t>(nk);
    ring_ks = Alloc<float>(nks);
    ring_d = Alloc<uint8_t>(nd * e);
    ring_g = Alloc<float>(static_cast<size_t>(num_slots) * HV * kL);
    // Written before read by the cycle order; zeroed so nothing is garbage.
    CK(cudaMemsetAsync(ring_k, 0, nk * 2, s));
    CK(cudaMemsetAsync(ring_ks, 0, nks * 4, s));
    CK(cudaMemsetAsync(ring_d, 0, nd * e, s));
    CK(cudaMemsetAsync(ring_g, 0, num_slots * HV * kL * 4ull, s));
  }
};

Setup MakeSetup(int HV, int B, cudaStream_t s, std::mt19937& rng) {
  Setup st;
  st.HV = HV;
  st.B = B;
  st.conv_dim = 2 * kH * kD + HV * kD;
  const size_t set_bytes =
      static_cast<size_t>(B) * HV * bench::StateHeadBytes();
  st.nsets = std::max<int>(2, (kRotateBytes + set_bytes - 1) / set_bytes);
  st.num_slots = st.nsets * B;
  const size_t sf = static_cast<size_t>(HV) * kD * kD;
  st.state = Alloc<float>(st.num_slots * sf);
  CK(FillUniform(st.state, st.num_slots * sf, 7, -0.05f, 0.05f, s));
  std::vector<int32_t> perm(st.num_slots);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> on, off, mixed(perm.size());
  for (int i = 0; i < st.num_slots; ++i) {
    const int row = i % B;
    mixed[i] = row % 2 == 0 ? perm[i] : -1;
    if (B >= 2 && row < (B / 2) * 2)
      (row % 2 == 0 ? on : off).push_back(perm[i]);
  }
  st.sets = Upload(perm);
  {
    std::vector<int32_t> lin(perm.size());
    std::iota(lin.begin(), lin.end(), 0);
    st.sets_lin = Upload(lin);
  }
  {
    std::vector<int32_t> sorted = perm;
    for (int set = 0; set < st.nsets; ++set) {
      std::sort(sorted.begin() + set * B, sorted.begin() + (set + 1) * B);
    }
    st.sets_sorted = Upload(sorted);
  }
  st.mixed_rings = Upload(mixed);
  if (B >= 2) {
    st.half_on = Upload(on);
    st.half_off = Upload(off);
  }
  std::vector<int32_t> cur(static_cast<size_t>(kL) * B);
  for (int l = 0; l < kL; ++l) std::fill(&cur[l * B], &cur[l * B] + B, l);
  st.cursors = Upload(cur);
  for (int l = 0; l < kL; ++l) {
    for (int row = 0; row < B; ++row) cur[l * B + row] = (l + row) % kL;
  }
  st.stag_cursors = Upload(cur);
  st.qkv = Alloc<uint16_t>(static_cast<size_t>(B) * st.conv_dim);
  CK(FillUniformBf16(st.qkv, static_cast<size_t>(B) * st.conv_dim, 11, -1.f,
                     1.f, s));
  st.a = Alloc<uint16_t>(static_cast<size_t>(B) * HV);
  st.b = Alloc<uint16_t>(static_cast<size_t>(B) * HV);
  CK(FillUniformBf16(st.a, static_cast<size_t>(B) * HV, 12, -2.f, 2.f, s));
  CK(FillUniformBf16(st.b, static_cast<size_t>(B) * HV, 13, -3.f, 3.f, s));
  st.A_log = Alloc<float>(HV);
  st.dt_bias = Alloc<float>(HV);
  CK(FillUniform(st.A_log, HV, 14, -3.f, 1.f, s));
  CK(FillUniform(st.dt_bias, HV, 15, -1.f, 1.f, s));
  st.o = Alloc<uint16_t>(static_cast<size_t>(B) * HV * kD);
  st.coef_floats = gdn::GdnReplayParams::CoefScratchFloats(B, HV, kL);
  st.coef = Alloc<float>(st.coef_floats);
  CK(cudaStreamSynchronize(s));
  return st;
}

// Launch variants measured side by side.
struct Variant {
  DecodeTile tile = DecodeTile::kAuto;
  // Programmatic dependent launch (kAuto: the shipped choice).
  gdn::DecodeOverlap overlap = gdn::DecodeOverlap::kAuto;
  bool cs = false;    // evict-first state stores
  bool stage = true;  // ReplaySSM: ring staged in shared memory
  gdn::DecodeStatePolicy policy = gdn::DecodeStatePolicy::kAuto;
  bool linear = false;  // contiguous slot sets instead of scattered ones
  bool sorted = false;  // scattered slot sets, rows in ascending slot order
  gdn::ReplayCoefRoute route = gdn::ReplayCoefRoute::kAuto;
  std::string Name() const {
    std::string n = gdn::DecodeTileName(tile);
    if (overlap != gdn::DecodeOverlap::kAuto) {
      n += std::string("+") + gdn::DecodeOverlapName(overlap);
    }
    if (cs) n += "+cs";
    if (!stage) n += "+unstaged";
    if (policy == gdn::DecodeStatePolicy::kDefault) n += "+plain";
    if (policy == gdn::DecodeStatePolicy::kEvictLast) n += "+el";
    if (linear) n += "+linear";
    if (sorted) n += "+sorted";
    if (route == gdn::ReplayCoefRoute::kFused) n += "+fused";
    if (route == gdn::ReplayCoefRoute::kPrecomputed) n += "+coef";
    return n;
  }
};

gdn::GdnDecodeParams StepParams(const Setup& st, const int32_t* slots, int B,
                                const Variant& var) {
  gdn::GdnDecodeParams p;
  p.num_k_heads = st.H;
  p.num_v_heads = st.HV;
  p.batch = B;
  p.qkv = st.qkv;
  p.qkv_row_stride = st.conv_dim;
  p.a = st.a;
  p.b = st.b;
  p.ab_row_stride = st.HV;
  p.ab_dtype = DType::kBf16;
  p.A_log = st.A_log;
  p.dt_bias = st.dt_bias;
  p.state = st.state;
  p.num_slots = st.num_slots;
  p.slot_indices = slots;
  p.o = st.o;
  p.o_row_stride = static_cast<int64_t>(st.HV) * kD;
  p.o_dtype = DType::kBf16;
  p.tile = var.tile;
  p.overlap = var.overlap;
  p.stream_stores = var.cs;
  p.state_policy = var.policy;
  return p;
}

gdn::GdnReplayParams ReplayParams(const Setup& st, const int32_t* slots,
                                  const int32_t* rings, const int32_t* cursor,
                                  int B, const Variant& var) {
  gdn::GdnReplayParams p;
  p.step = StepParams(st, slots, B, var);
  p.stage_ring = var.stage;
  p.ring.length = kL;
  p.ring.dtype = st.ring_dtype;
  p.ring.k = st.ring_k;
  p.ring.k_scale = st.ring_ks;
  p.ring.d = st.ring_d;
  p.ring.g = st.ring_g;
  p.ring.num_ring_slots = st.num_slots;
  p.ring_indices = rings;
  p.write_pos = cursor;
  p.force_flush = nullptr;
  p.coef_route = var.route;
  p.coef_scratch = st.coef;
  p.coef_scratch_floats = st.coef_floats;
  return p;
}

// Byte counts (bench/decode_bytes.h: the state, ring, q|k|v, a, b and o
// traffic each step must move).
double PackedBytes(const Setup& st, int B) {
  return bench::PackedStepBytes({st.H, st.HV}, B);
}

// Bytes of one full ring cycle (L steps) of B ON rows.
double ReplayCycleBytes(const Setup& st, int B, DType ring) {
  return bench::ReplayCycleBytes({st.H, st.HV}, B, kL, gdn::DTypeBytes(ring));
}

// The largest ReplaySSM L = 16 speed-up over the packed step that the byte
// counts allow (bench/decode_bytes.h), per head shape and ring dtype: every
// step at one bandwidth, and (given ceilings) the non-flush steps at the
// read-only ceiling, the others at the copy ceiling. Printed and returned
// as JSON.
json RatioBounds(double copy_gbps, double read_gbps) {
  json j = json::array();
  std::printf(
      "ReplaySSM L = %d speed-up bounds from the byte counts (H = %d): equal "
      "bandwidth / non-flush steps at read %.0f, others at copy %.0f GB/s\n",
      kL, kH, read_gbps, copy_gbps);
  for (int HV : {16, 32, 48, 64}) {
    for (DType ring : {DType::kFp32, DType::kBf16}) {
      const bench::DecodeShape s{kH, HV};
      const int e = gdn::DTypeBytes(ring);
      const double eq = bench::ReplayRatioBound(s, kL, e);
      const double at =
          bench::ReplayRatioBoundAtCeilings(s, kL, e, copy_gbps, read_gbps);
      const char* name = gdn::DTypeName(ring);
      std::printf("  16/%-2d %s ring: %.3fx / %.3fx\n", HV, name, eq, at);
      j.push_back({{"hv", HV},
                   {"ring", name},
                   {"equal_bandwidth", eq},
                   {"at_ceilings", at}});
    }
  }
  return j;
}

struct Runner {
  cudaStream_t s;
  Events ev;
  int reps = 7;

  // Median ms of one graph replay (after two warm-ups).
  double TimeGraph(cudaGraphExec_t g) {
    for (int i = 0; i < 2; ++i) CK(cudaGraphLaunch(g, s));
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      t.push_back(ev.Time(s, [&] { CK(cudaGraphLaunch(g, s)); }));
    }
    return Median(t);
  }

  // µs per call of a graph of `calls` back-to-back calls; `launch(i)`
  // issues call i.
  double UsPerCall(int calls, const std::function<void(int)>& launch) {
    cudaGraphExec_t g = Capture(s, [&] {
      for (int i = 0; i < calls; ++i) launch(i);
    });
    const double ms = TimeGraph(g);
    CK(cudaGraphExecDestroy(g));
    return ms * 1e3 / calls;
  }

  // Packed decode: µs per call.
  double Packed(const Setup& st, const Variant& var) {
    return UsPerCall(std::max(st.nsets, 32), [&](int i) {
      OK(gdn::LaunchGdnPackedDecode(
          StepParams(st, st.SlotSet(var.linear, var.sorted, i % st.nsets), st.B,
                     var),
          s));
    });
  }

  struct Cycle {
    double nonflush_us = 0, flush_us = 0, cycle_us = 0;
  };

  // One full ring cycle per set, steps in order (cursor s = step s), the
  // flush step timed in its own graph of at least kMinFlushCalls calls (the
  // sets repeated: with 2 sets of 1-2 GiB at B >= 512 a graph of 2 flushes
  // varied by up to 20 % between identical timings). `launch(set, cursor)`
  // issues the launches of one layer call.
  static constexpr int kMinFlushCalls = 8;
  Cycle RingCycle(const Setup& st,
                  const std::function<void(int, const int32_t*)>& launch) {
    const int flush_calls = std::max(st.nsets, kMinFlushCalls);
    cudaGraphExec_t nf = Capture(s, [&] {
      for (int l = 0; l < kL - 1; ++l) {
        for (int set = 0; set < st.nsets; ++set) {
          launch(set, st.cursors + l * st.B);
        }
      }
    });
    cudaGraphExec_t f = Capture(s, [&] {
      for (int i = 0; i < flush_calls; ++i) {
        launch(i % st.nsets, st.cursors + (kL - 1) * st.B);
      }
    });
    for (int i = 0; i < 2; ++i) {
      CK(cudaGraphLaunch(nf, s));
      CK(cudaGraphLaunch(f, s));
    }
    std::vector<double> tn, tf;
    for (int i = 0; i < reps; ++i) {
      tn.push_back(ev.Time(s, [&] { CK(cudaGraphLaunch(nf, s)); }));
      tf.push_back(ev.Time(s, [&] { CK(cudaGraphLaunch(f, s)); }));
    }
    CK(cudaGraphExecDestroy(nf));
    CK(cudaGraphExecDestroy(f));
    Cycle c;
    const double mn = Median(tn), mf = Median(tf);
    c.nonflush_us = mn * 1e3 / ((kL - 1) * st.nsets);
    c.flush_us = mf * 1e3 / flush_calls;
    c.cycle_us = ((kL - 1) * c.nonflush_us + c.flush_us) / kL;
    return c;
  }

  Cycle Replay(const Setup& st, const Variant& var) {
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      const int32_t* slots = st.SlotSet(var.linear, var.sorted, set);
      OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, slots, slots, cursor, st.B, var), s));
    });
  }

  // The same ring cycle with the flush phases staggered over the rows
  // (Setup::stag_cursors, the engine's schedule): every step flushes B / L
  // rows in the same launch as the others' non-flush work. µs per step of
  // the steady state = the cycle average (each row still takes L - 1
  // non-flush steps and one flush per cycle).
  double Staggered(const Setup& st, const Variant& var) {
    // Call i = step l = i / nsets of set i % nsets (steps outer, sets inner).
    return UsPerCall(kL * st.nsets, [&](int i) {
      const int l = i / st.nsets;
      const int32_t* slots = st.SlotSet(var.linear, var.sorted, i % st.nsets);
      OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, slots, slots, st.stag_cursors + l * st.B, st.B, var),
          s));
    });
  }

  // Half the rows OFF: in the replay launch (ring index -1) ...
  Cycle MixedSameLaunch(const Setup& st) {
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, st.sets + set * st.B, st.mixed_rings + set * st.B,
                       cursor, st.B, Variant()),
          s));
    });
  }
  // ... or ON rows in the replay launch and OFF rows in a packed launch.
  Cycle MixedSplit(const Setup& st) {
    const int h = st.B / 2;
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      const int32_t* on = st.half_on + set * h;
      OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, on, on, cursor, h, Variant()), s));
      OK(gdn::LaunchGdnPackedDecode(
          StepParams(st, st.half_off + set * h, h, Variant()), s));
    });
  }
};

// Chunked prefill throughput (plain stream timing; one launch per layer), by
// the two-pass route (with scratch) or the single pass, against the ceilings:
// the rate of the chunk algebra's fp32 products (prefill_work.h; the same
// count for both routes, though the single pass recomputes part of it) and,
// for the two-pass route, its share of the 3xTF32 ceiling (a third of the
// measured tf32 mma rate); the HBM floor is the fewest bytes at copy speed.
json BenchPrefill(Runner& r, const Ceilings& ceil, int HV, int seqs, int len,
                  bool two_pass) {
  const int conv_dim = 2 * kH * kD + HV * kD, tokens = seqs * len;
  uint16_t* qkv = Alloc<uint16_t>(static_cast<size_t>(tokens) * conv_dim);
  uint16_t* ab = Alloc<uint16_t>(static_cast<size_t>(tokens) * HV * 2);
  float* par = Alloc<float>(2 * HV);
  float* state = Alloc<float>(static_cast<size_t>(seqs) * HV * kD * kD);
  uint16_t* o = Alloc<uint16_t>(static_cast<size_t>(tokens) * HV * kD);
  std::vector<int32_t> hcu(seqs + 1), hs(seqs);
  for (int i = 0; i <= seqs; ++i) hcu[i] = i * len;
  std::iota(hs.begin(), hs.end(), 0);
  int32_t* cu = Upload(hcu);
  int32_t* slots = Upload(hs);
  CK(FillUniformBf16(qkv, static_cast<size_t>(tokens) * conv_dim, 21, -1, 1,
                     r.s));
  CK(FillUniformBf16(ab, static_cast<size_t>(tokens) * HV * 2, 22, -2, 2, r.s));
  CK(FillUniform(par, 2 * HV, 23, -1, 0.5f, r.s));
  gdn::GdnPrefillParams p;
  p.num_k_heads = kH;
  p.num_v_heads = HV;
  p.num_seqs = seqs;
  p.cu_seqlens = cu;
  p.qkv = qkv;
  p.qkv_row_stride = conv_dim;
  p.a = ab;
  p.b = ab + static_cast<size_t>(tokens) * HV;
  p.ab_row_stride = HV;
  p.A_log = par;
  p.dt_bias = par + HV;
  p.state = state;
  p.num_slots = seqs;
  p.slot_indices = slots;
  p.has_initial_state = nullptr;
  p.o = o;
  p.o_row_stride = static_cast<int64_t>(HV) * kD;
  float* scratch = nullptr;
  if (two_pass) {
    p.num_tokens = tokens;
    p.scratch_floats = gdn::GdnPrefillParams::ScratchFloats(tokens, HV);
    scratch = Alloc<float>(static_cast<size_t>(p.scratch_floats));
    p.scratch = scratch;
  }
  CK(cudaMemsetAsync(state, 0, static_cast<size_t>(seqs) * HV * kD * kD * 4,
                     r.s));
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    t.push_back(
        r.ev.Time(r.s, [&] { OK(gdn::LaunchGdnChunkedPrefill(p, r.s)); }));
  }
  t.erase(t.begin());
  const double ms = Median(t);
  FreeAll(qkv, ab, par, state, o, cu, slots, scratch);
  const char* route = two_pass ? "two-pass" : "single pass";
  const PrefillWork w = TwoPassPrefillWork(kH, HV, seqs, len);
  const double product_tflops = 2 * w.tensor_macs / (ms * 1e-3) / 1e12;
  const double subst_tflops = 2 * w.cuda_core_macs / (ms * 1e-3) / 1e12;
  const double hbm_bytes = w.io_bytes + (two_pass ? w.scratch_bytes : 0.0);
  const double floor_us = hbm_bytes / (ceil.copy_gbps * 1e9) * 1e6;
  const double share = product_tflops / (ceil.mma_tf32_tflops / 3);
  std::printf(
      "prefill HV=%d seqs=%d len=%d %s: %.1f us per layer, %.2f Mtok/s | "
      "fp32 products %.1f TFLOP/s",
      HV, seqs, len, route, ms * 1e3, tokens / (ms * 1e-3) / 1e6,
      product_tflops);
  if (two_pass) std::printf(" (%.0f %% of 3xTF32)", 100 * share);
  std::printf(", substitution %.1f TFLOP/s, HBM floor %.1f us\n", subst_tflops,
              floor_us);
  return {{"kind", "prefill"},
          {"route", route},
          {"hv", HV},
          {"seqs", seqs},
          {"len", len},
          {"us", ms * 1e3},
          {"mtok_per_s", tokens / (ms * 1e-3) / 1e6},
          {"product_tflops", product_tflops},
          {"substitution_tflops", subst_tflops},
          {"hbm_floor_us", floor_us}};
}

// The prefill lines of a full run: one sequence of 4096 tokens and 64 of
// 256, by each route.
void PrefillLines(Runner& r, const Ceilings& ceil, int HV, json* recs) {
  for (bool two_pass : {true, false}) {
    recs->push_back(BenchPrefill(r, ceil, HV, 1, 4096, two_pass));
    recs->push_back(BenchPrefill(r, ceil, HV, 64, 256, two_pass));
  }
}

// The conv update of B decode rows: x and y dense [B, conv_dim], the conv
// state [num_slots, 3, conv_dim].
gdn::GdnConvParams ConvUpdateParams(int conv_dim, int B, const uint16_t* x,
                                    const uint16_t* w, uint16_t* state,
                                    int64_t num_slots, const int32_t* slots,
                                    uint16_t* y) {
  gdn::GdnConvParams p;
  p.conv_dim = conv_dim;
  p.num_seqs = B;
  p.x = x;
  p.x_row_stride = conv_dim;
  p.weight = w;
  p.conv_state = state;
  p.num_slots = num_slots;
  p.slot_indices = slots;
  p.y = y;
  p.y_row_stride = conv_dim;
  return p;
}

json BenchConvDecode(Runner& r, int HV, int B) {
  const int conv_dim = 2 * kH * kD + HV * kD;
  // Slot sets rotating over >= 256 MiB of conv state, as the decode steps.
  const size_t set_bytes = static_cast<size_t>(B) * 3 * conv_dim * 2;
  const int nsets =
      std::max<int>(8, (kRotateBytes + set_bytes - 1) / set_bytes);
  uint16_t* x = Alloc<uint16_t>(static_cast<size_t>(B) * conv_dim);
  uint16_t* y = Alloc<uint16_t>(static_cast<size_t>(B) * conv_dim);
  uint16_t* w = Alloc<uint16_t>(static_cast<size_t>(conv_dim) * 4);
  uint16_t* st = Alloc<uint16_t>(static_cast<size_t>(nsets) * B * 3 * conv_dim);
  std::vector<int32_t> hs(static_cast<size_t>(nsets) * B);
  std::iota(hs.begin(), hs.end(), 0);
  int32_t* slots = Upload(hs);
  CK(FillUniformBf16(x, static_cast<size_t>(B) * conv_dim, 31, -1, 1, r.s));
  CK(FillUniformBf16(w, static_cast<size_t>(conv_dim) * 4, 32, -1, 1, r.s));
  CK(FillUniformBf16(st, static_cast<size_t>(nsets) * B * 3 * conv_dim, 33, -1,
                     1, r.s));
  const double us = r.UsPerCall(std::max(nsets, 32), [&](int i) {
    OK(gdn::LaunchGdnCausalConv(
        ConvUpdateParams(conv_dim, B, x, w, st, static_cast<int64_t>(nsets) * B,
                         slots + (i % nsets) * B, y),
        r.s));
  });
  FreeAll(x, y, w, st, slots);
  // x and y rows, the Kc-1 = 3 state rows read and written (bf16).
  const double gbps = static_cast<double>(B) * conv_dim * 2 * 8 / (us * 1e3);
  std::printf("conv decode HV=%d B=%d: %.2f us per call, %.0f GB/s\n", HV, B,
              us, gbps);
  return {{"kind", "conv_decode"},
          {"hv", HV},
          {"batch", B},
          {"us", us},
          {"gbps", gbps}};
}

// One GDN layer's decode kernels in model order: the conv update (in_proj
// output x -> the q|k|v rows) and then the packed step or a ReplaySSM step
// reading those rows, µs per layer call (for ReplaySSM the L = 16 cycle
// average). Launched separately with the decode step plainly (kNone), as
// shipped (kAuto) and with kPrologue (whose contract conv -> decode meets),
// and as the pair of gdn/layer_decode.h (its own kAuto rule). Each value is
// the mean of three passes in rotating order (small-batch timings depend on
// what ran just before in the process).
struct LayerTimes {
  double conv = 0;
  double packed[4] = {0, 0, 0, 0};  // kNone, kAuto, kPrologue, the pair
  double replay[4] = {0, 0, 0, 0};
};
constexpr gdn::DecodeOverlap kLayerOverlaps[3] = {
    gdn::DecodeOverlap::kNone, gdn::DecodeOverlap::kAuto,
    gdn::DecodeOverlap::kPrologue};
LayerTimes LayerChain(Runner& r, Setup& st) {
  const int B = st.B, cd = st.conv_dim;
  uint16_t* x = Alloc<uint16_t>(static_cast<size_t>(B) * cd);
  uint16_t* w = Alloc<uint16_t>(static_cast<size_t>(cd) * 4);
  const size_t nstate = static_cast<size_t>(st.num_slots) * 3 * cd;
  uint16_t* cst = Alloc<uint16_t>(nstate);
  CK(FillUniformBf16(x, static_cast<size_t>(B) * cd, 41, -1, 1, r.s));
  CK(FillUniformBf16(w, static_cast<size_t>(cd) * 4, 42, -0.5, 0.5, r.s));
  CK(FillUniformBf16(cst, nstate, 43, -1, 1, r.s));
  auto conv_params = [&](const int32_t* slots) {  // y: the decode input
    return ConvUpdateParams(cd, B, x, w, cst, st.num_slots, slots, st.qkv);
  };
  const int calls = std::max(st.nsets, 32);
  // (separate launches with `overlap`, or the pair) -> µs per layer call.
  auto packed = [&](bool pair, gdn::DecodeOverlap overlap) {
    Variant v;
    v.overlap = overlap;
    return r.UsPerCall(calls, [&](int i) {
      const int32_t* slots = st.SlotSet(false, false, i % st.nsets);
      const gdn::GdnDecodeParams p = StepParams(st, slots, B, v);
      if (pair) {
        OK(gdn::LaunchGdnLayerDecode(conv_params(slots), p, r.s));
      } else {
        OK(gdn::LaunchGdnCausalConv(conv_params(slots), r.s));
        OK(gdn::LaunchGdnPackedDecode(p, r.s));
      }
    });
  };
  auto replay = [&](bool pair, gdn::DecodeOverlap overlap) {
    Variant v;
    v.overlap = overlap;
    return r
        .RingCycle(
            st,
            [&](int set, const int32_t* cursor) {
              const int32_t* slots = st.SlotSet(false, false, set);
              const gdn::GdnReplayParams p =
                  ReplayParams(st, slots, slots, cursor, B, v);
              if (pair) {
                OK(gdn::LaunchGdnLayerReplayDecode(conv_params(slots), p, r.s));
              } else {
                OK(gdn::LaunchGdnCausalConv(conv_params(slots), r.s));
                OK(gdn::LaunchGdnReplayDecode(p, r.s));
              }
            })
        .cycle_us;
  };
  LayerTimes t;
  std::vector<std::pair<double*, std::function<double()>>> measure;
  measure.push_back(
      {&t.conv, [&] {
         return r.UsPerCall(calls, [&](int i) {
           OK(gdn::LaunchGdnCausalConv(
               conv_params(st.SlotSet(false, false, i % st.nsets)), r.s));
         });
       }});
  for (int k = 0; k < 4; ++k) {
    const bool pair = k == 3;
    const gdn::DecodeOverlap ov =
        pair ? gdn::DecodeOverlap::kAuto : kLayerOverlaps[k];
    measure.push_back(
        {&t.packed[k], [&, pair, ov] { return packed(pair, ov); }});
    measure.push_back(
        {&t.replay[k], [&, pair, ov] { return replay(pair, ov); }});
  }
  constexpr int kPasses = 3;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (size_t k = 0; k < measure.size(); ++k) {
      auto& [dst, fn] = measure[(pass + k) % measure.size()];
      *dst += fn() / kPasses;
    }
  }
  FreeAll(x, w, cst);
  return t;
}

// One LAYER line (--layer) and its JSON record.
json LayerLine(Runner& r, std::mt19937& rng, int HV, int B) {
  Setup st = MakeSetup(HV, B, r.s, rng);
  st.AllocRing(DType::kFp32, r.s);
  const LayerTimes t = LayerChain(r, st);
  std::printf(
      "LAYER HV=%d B=%d conv %.2f | conv+packed none %.2f auto(%s) %.2f "
      "prologue %.2f pair(%s) %.2f | conv+replay cycle none %.2f auto(%s) "
      "%.2f prologue %.2f pair(%s) %.2f\n",
      HV, B, t.conv, t.packed[0],
      gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, false)), t.packed[1],
      t.packed[2],
      gdn::DecodeOverlapName(gdn::LayerDecodeOverlapFor(B, HV, false)),
      t.packed[3], t.replay[0],
      gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, true)), t.replay[1],
      t.replay[2],
      gdn::DecodeOverlapName(gdn::LayerDecodeOverlapFor(B, HV, true)),
      t.replay[3]);
  std::fflush(stdout);
  st.Free();
  json j = {{"kind", "conv_then_decode"},
            {"hv", HV},
            {"batch", B},
            {"conv_us", t.conv},
            {"pair_packed_us", t.packed[3]},
            {"pair_replay_cycle_us", t.replay[3]}};
  for (int k = 0; k < 3; ++k) {
    const std::string o = gdn::DecodeOverlapName(kLayerOverlaps[k]);
    j["conv_packed_" + o + "_us"] = t.packed[k];
    j["conv_replay_cycle_" + o + "_us"] = t.replay[k];
  }
  return j;
}

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
Floors MeasureFloors(Runner& r) {
  constexpr int kCalls = 128;
  const size_t pool = kRotateBytes / 4;  // floats
  float* x = Alloc<float>(pool);
  float* sink = Alloc<float>(1);
  CK(FillUniform(x, pool, 3, -1.f, 1.f, r.s));
  Floors f;
  f.empty1 = r.UsPerCall(kCalls, [&](int) { CK(LaunchEmpty(1, 32, r.s)); });
  f.empty512 = r.UsPerCall(kCalls, [&](int) { CK(LaunchEmpty(512, 64, r.s)); });
  for (const size_t mib : {2, 1}) {
    const size_t n = mib << 18, chunks = pool / n;
    (mib == 2 ? f.rmw_2mib : f.rmw_1mib) = r.UsPerCall(kCalls, [&](int i) {
      CK(ScaleInPlace(x + (i % chunks) * n, n, 1.0f, false, r.s));
    });
    (mib == 2 ? f.read_2mib : f.read_1mib) = r.UsPerCall(kCalls, [&](int i) {
      CK(ReadOnly(x + (i % chunks) * n, n, sink, r.s));
    });
  }
  FreeAll(x, sink);
  std::printf(
      "batch-1 floors (graph, us per call): empty kernel 1 CTA %.2f, 512 x 64 "
      "%.2f; in-place x *= c over 2 MiB %.2f, 1 MiB %.2f; read-only 2 MiB "
      "%.2f, 1 MiB %.2f (ReplaySSM L = 16 ratio at these floors: 2 MiB "
      "%.3fx, 1 MiB %.3fx)\n",
      f.empty1, f.empty512, f.rmw_2mib, f.rmw_1mib, f.read_2mib, f.read_1mib,
      Floors::RatioBound(f.rmw_2mib, f.read_2mib),
      Floors::RatioBound(f.rmw_1mib, f.read_1mib));
  return f;
}

// "cycle (non-flush / flush) x ratio" of a ReplaySSM cycle in µs, the ratio
// against a packed step of `packed_us`.
std::string CycleText(const Runner::Cycle& c, double packed_us) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.2f (%.2f / %.2f) x %.3f", c.cycle_us,
                c.nonflush_us, c.flush_us, packed_us / c.cycle_us);
  return buf;
}

// --replay-only: the shipped packed (median of three) and ReplaySSM
// configurations at the batches of the ReplaySSM targets, then both with
// programmatic dependent launch (kPrologue), then launched plainly and with
// kLaunch; one line per shape and batch, for A/B runs of two builds in one
// call.
void ReplayOnly(Runner& r, std::mt19937& rng, bool pdl_ok) {
  for (int HV : {32, 16}) {
    for (int B : {1, 8, 128, 256, 512, 1024}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      Variant v;
      const double p =
          Median({r.Packed(st, v), r.Packed(st, v), r.Packed(st, v)});
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
// latency is a large part of a call (the evidence of DecodeOverlapFor).
void OverlapSweep(Runner& r, std::mt19937& rng) {
  using gdn::DecodeOverlap;
  for (int HV : {32, 16}) {
    for (int B : {1, 2, 4, 8, 16, 32, 64}) {
      Setup st = MakeSetup(HV, B, r.s, rng);
      st.AllocRing(DType::kFp32, r.s);
      std::string line;
      auto add = [&](const char* what, double us) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), " %s %.2f", what, us);
        line += buf;
      };
      for (DecodeTile tile : {DecodeTile::kAuto, DecodeTile::kBv8}) {
        for (DecodeOverlap ov : {DecodeOverlap::kNone, DecodeOverlap::kLaunch,
                                 DecodeOverlap::kPrologue}) {
          Variant v;
          v.tile = tile;
          v.overlap = ov;
          add(v.Name().c_str(), r.Packed(st, v));
        }
      }
      line += " | replay";
      for (DecodeTile tile : {DecodeTile::kAuto, DecodeTile::kBv8,
                              DecodeTile::kBv16, DecodeTile::kBv32}) {
        for (DecodeOverlap ov :
             {DecodeOverlap::kNone, DecodeOverlap::kLaunch}) {
          Variant v;
          v.tile = tile;
          v.overlap = ov;
          add(v.Name().c_str(), r.Replay(st, v).cycle_us);
        }
      }
      std::printf(
          "OVERLAP HV=%d B=%d (auto: %s / %s, tiles %s / %s) packed%s\n", HV, B,
          gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, false)),
          gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, true)),
          gdn::DecodeTileName(gdn::DecodeTileFor(B, HV, false)),
          gdn::DecodeTileName(gdn::DecodeTileFor(B, HV, true)), line.c_str());
      std::fflush(stdout);
      st.Free();
    }
  }
}

// Command-line options (usage in the header comment).
struct Options {
  std::string json_path;
  bool quick = false, micro_only = false, micro = true, explore = false;
  bool profile = false, replay_only = false, overlap = false, bounds = false;
  bool layer = false, prefill = false;
  int profile_hv = 32, profile_batch = 256;  // --profile=HV/B
};

// False (after printing the usage) on an unknown argument.
bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--json=", 0) == 0) {
      o->json_path = a.substr(7);
    } else if (a == "--quick") {
      o->quick = true;
    } else if (a == "--micro") {
      o->micro_only = true;
    } else if (a == "--no-micro") {
      o->micro = false;
    } else if (a == "--explore") {
      o->explore = true;
    } else if (a == "--profile") {
      o->profile = true;
    } else if (a.rfind("--profile=", 0) == 0) {
      o->profile = true;
      if (std::sscanf(a.c_str() + 10, "%d/%d", &o->profile_hv,
                      &o->profile_batch) != 2 ||
          o->profile_hv <= 0 || o->profile_hv % 16 != 0 ||
          o->profile_batch <= 0) {
        std::fprintf(stderr,
                     "gdn_bench: --profile=HV/B, e.g. --profile=16/8 "
                     "(HV a multiple of 16, B > 0)\n");
        return false;
      }
    } else if (a == "--replay-only") {
      o->replay_only = true;
    } else if (a == "--overlap") {
      o->overlap = true;
    } else if (a == "--bounds") {
      o->bounds = true;
    } else if (a == "--layer") {
      o->layer = true;
    } else if (a == "--prefill") {
      o->prefill = true;
    } else {
      std::fprintf(stderr,
                   "usage: gdn_bench [--json=PATH] [--quick] [--micro] "
                   "[--no-micro] [--explore] [--profile[=HV/B]] "
                   "[--replay-only] [--overlap] [--layer] [--bounds] "
                   "[--prefill]\n");
      return false;
    }
  }
  return true;
}

// --profile[=HV/B]: a few plain launches (no graph) for a profiler (ncu): 16
// key heads, HV value heads, B rows (default 16/32, B = 256), the packed step
// (twice), then twice each the shipped ReplaySSM non-flush (cursor 7) and
// flush (cursor 15) steps (kAuto: at B = 256 the precomputed route, bv64),
// then the fused route's non-flush and flush steps (bv64).
void ProfileLaunches(Runner& r, int HV, int B) {
  std::mt19937 prng(99);
  Setup st = MakeSetup(HV, B, r.s, prng);
  st.AllocRing(DType::kFp32, r.s);
  for (int i = 0; i < 2; ++i) {
    OK(gdn::LaunchGdnPackedDecode(StepParams(st, st.sets, st.B, Variant()),
                                  r.s));
  }
  auto rep = [&](DecodeTile tile, gdn::ReplayCoefRoute route, int cursor) {
    Variant v;
    v.tile = tile;
    v.route = route;
    OK(gdn::LaunchGdnReplayDecode(
        ReplayParams(st, st.sets + st.B, st.sets + st.B,
                     st.cursors + cursor * st.B, st.B, v),
        r.s));
  };
  for (int i = 0; i < 2; ++i) {
    rep(DecodeTile::kAuto, gdn::ReplayCoefRoute::kAuto, 7);
    rep(DecodeTile::kAuto, gdn::ReplayCoefRoute::kAuto, 15);
  }
  rep(DecodeTile::kBv64, gdn::ReplayCoefRoute::kFused, 7);
  rep(DecodeTile::kBv64, gdn::ReplayCoefRoute::kFused, 15);
  CK(cudaStreamSynchronize(r.s));
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

// One line of the final table: a head shape and batch.
struct Row {
  int hv = 0, batch = 0;
  double p_auto = 0, p_pct = 0, p_best = 1e30, p_plain = 0, p_none = 0,
         p_pdl = 0, p_best_pdl = 0, p_lin = 0, p_sorted = 0;
  std::string p_tile;
  double r_auto = 0, r_nf = 0, r_f = 0, r_best = 1e30, r_none = 0, r_pdl = 0,
         r_best_pdl = 0, r_lin = 0, r_bf16 = 0, r_fused = 0, r_stag = 0;
  std::string r_tile;
  double same = 0, split = 0;
};

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
  auto rec = [&](json j) {
    j["hv"] = HV;
    j["h"] = kH;
    j["batch"] = B;
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
  // The shipped configurations are timed three times, spread over the
  // point: before the tile sweep, after it and after the variants (median).
  // Back-to-back timings shared whatever slow phase the call was in: one
  // right after the tile sweep came out 4-7 % slow at 16/32 B = 256 in runs
  // 11-12; in run 71 three in a row gave ReplaySSM cycles 6 % slower than
  // the same configuration minutes later (16/32 B = 512: 327.4 vs 308.8 us,
  // flush 820 us; 16/16 B = 1024: 330.8 vs 313.5).
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
    row.p_auto = Median(p_autos);
    row.p_pct = 100.0 * pb / (row.p_auto * 1e-6) / 1e9 / ceil.copy_gbps;
    // A plain launch: where kAuto launches plainly, the same configuration.
    row.p_none = row.p_auto;
    if (gdn::DecodeOverlapFor(B, HV, false) != gdn::DecodeOverlap::kNone) {
      v = Variant();
      v.overlap = gdn::DecodeOverlap::kNone;
      row.p_none = packed(v);
    }
  }
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
    std::sort(r_autos.begin(), r_autos.end(),
              [](const Runner::Cycle& x, const Runner::Cycle& y) {
                return x.cycle_us < y.cycle_us;
              });
    const Runner::Cycle& c = r_autos[1];  // the median cycle
    row.r_auto = c.cycle_us;
    row.r_nf = c.nonflush_us;
    row.r_f = c.flush_us;
    // A plain launch: where kAuto launches plainly, the same configuration.
    row.r_none = row.r_auto;
    if (gdn::DecodeOverlapFor(B, HV, true) != gdn::DecodeOverlap::kNone) {
      v = Variant();
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
  std::printf(
      "HV=%d B=%d packed auto %.2f us (%.1f%% copy; best %s %.2f; plain "
      "policy %.2f; no pdl %.2f; pdl %.2f / %.2f; linear %.2f; sorted %.2f) "
      "| replay auto %.2f us (nf %.2f, f %.2f; best %s %.2f; no pdl %.2f; "
      "pdl %.2f / %.2f; linear %.2f; staggered %.2f) | bf16 ring %.2f\n",
      HV, B, row.p_auto, row.p_pct, row.p_tile.c_str(), row.p_best, row.p_plain,
      row.p_none, row.p_pdl, row.p_best_pdl, row.p_lin, row.p_sorted,
      row.r_auto, row.r_nf, row.r_f, row.r_tile.c_str(), row.r_best, row.r_none,
      row.r_pdl, row.r_best_pdl, row.r_lin, row.r_stag, row.r_bf16);
  std::fflush(stdout);
  st.Free();
  return row;
}

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

// The decode sweep's table.
void PrintTable(const char* device, const Ceilings& ceil,
                const std::vector<Row>& table) {
  std::printf(
      "\n== GDN decode, %s: copy %.0f GB/s, in-place rmw %.0f, read %.0f. us "
      "per call; replay = L=16 fp32-ring cycle average ==\n",
      device, ceil.copy_gbps, ceil.rmw_gbps, ceil.read_gbps);
  std::printf(
      "%-6s %4s|%8s %5s %8s %-5s %8s %7s %7s %7s %8s %8s|%8s %7s %7s %8s "
      "%-5s %7s %7s %7s %8s %7s %7s|%5s %5s %5s %5s|%7s|%7s %7s\n",
      "heads", "B", "P.auto", "%cp", "P.best", "tile", "P.plain", "P.nopdl",
      "P.pdl", "P.bpdl", "P.lin", "P.sort", "R.auto", "nonfl", "flush",
      "R.best", "tile", "R.nopdl", "R.pdl", "R.bpdl", "R.lin", "R.fused",
      "R.stag", "x", "xnopd", "xpdl", "xstag", "bf16rg", "mixSam", "mixSpl");
  for (const Row& t : table) {
    std::printf(
        "16/%-3d %4d|%8.2f %5.1f %8.2f %-5s %8.2f %7.2f %7.2f %7.2f %8.2f "
        "%8.2f|%8.2f %7.2f %7.2f %8.2f %-5s %7.2f %7.2f %7.2f %8.2f %7.2f "
        "%7.2f|%5.2f %5.2f %5.2f %5.2f|%7.2f|%7.2f %7.2f\n",
        t.hv, t.batch, t.p_auto, t.p_pct, t.p_best, t.p_tile.c_str(), t.p_plain,
        t.p_none, t.p_pdl, t.p_best_pdl, t.p_lin, t.p_sorted, t.r_auto, t.r_nf,
        t.r_f, t.r_best, t.r_tile.c_str(), t.r_none, t.r_pdl, t.r_best_pdl,
        t.r_lin, t.r_fused, t.r_stag, t.p_auto / t.r_auto,
        t.r_none > 0 ? t.p_none / t.r_none : 0.0,
        t.r_best_pdl > 0 ? t.p_best_pdl / t.r_best_pdl : 0.0,
        t.p_auto / t.r_stag, t.r_bf16, t.same, t.split);
  }
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  if (o.bounds) {  // no GPU needed: the ceilings of run 26 (docs/BENCHMARKS.md)
    RatioBounds(kRun26CopyGbps, kRun26ReadGbps);
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20);
  Runner r;
  CK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  if (o.profile) {
    ProfileLaunches(r, o.profile_hv, o.profile_batch);
    return 0;
  }
  json out;
  out["device"] = prop.name;
  out["sms"] = prop.multiProcessorCount;
  auto write_json = [&] {
    if (!o.json_path.empty()) {
      std::ofstream f(o.json_path);
      f << out.dump(1) << "\n";
    }
  };
  // Memory-pattern microbenchmarks (rmw_micro.h): which access pattern reaches
  // the copy ceiling for an in-place read-modify-write.
  std::vector<MicroResult> micro_res;
  if (o.micro || o.micro_only) {
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
  std::printf(
      "ceilings: copy %.0f GB/s, in-place rmw %.0f GB/s (evict-first %.0f), "
      "read-only %.0f GB/s; tensor mma.sync tf32 %.0f TFLOP/s (3xTF32 fp32 "
      "products %.0f)\n",
      ceil.copy_gbps, ceil.rmw_gbps, ceil.rmw_cs_gbps, ceil.read_gbps,
      ceil.mma_tf32_tflops, ceil.mma_tf32_tflops / 3);
  out["ceilings_gbps"] = {{"copy", ceil.copy_gbps},
                          {"rmw", ceil.rmw_gbps},
                          {"rmw_evict_first", ceil.rmw_cs_gbps},
                          {"read", ceil.read_gbps}};
  out["ceiling_mma_tf32_tflops"] = ceil.mma_tf32_tflops;
  out["replay_ratio_bounds"] = RatioBounds(ceil.copy_gbps, ceil.read_gbps);
  const Floors floors = MeasureFloors(r);
  out["batch1_floors_us"] = {
      {"empty_1cta", floors.empty1},   {"empty_512x64", floors.empty512},
      {"rmw_2mib", floors.rmw_2mib},   {"rmw_1mib", floors.rmw_1mib},
      {"read_2mib", floors.read_2mib}, {"read_1mib", floors.read_1mib}};
  json& recs = out["records"];
  if (o.prefill) {
    for (int HV : {32, 16}) PrefillLines(r, ceil, HV, &recs);
    write_json();
    return 0;
  }
  std::mt19937 rng(1234);
  const std::vector<int> batches =
      o.quick ? std::vector<int>{1, 256}
              : std::vector<int>{1, 8, 32, 64, 128, 256, 512, 1024};
  const bool pdl_ok = ProbePdl(r, rng);
  out["pdl_ok"] = pdl_ok;
  if (o.replay_only) {
    ReplayOnly(r, rng, pdl_ok);
    return 0;
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
    for (int HV : {32, 16}) {
      for (int B : {1, 8, 32, 64, 128, 256, 512}) LayerLine(r, rng, HV, B);
    }
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
  CK(cudaStreamDestroy(r.s));
  return 0;
}

}  // namespace
}  // namespace rollout::bench

int main(int argc, char** argv) { return rollout::bench::Main(argc, argv); }
