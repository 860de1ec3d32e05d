// The GDN decode kernel family (private to gdn/decode*.cu): one templated body
// for the packed step, the ReplaySSM step (history route or flush) and the
// ReplaySSM fold.
//
// Work split. A CTA owns kBv v-rows of one (decode row, value head) over all
// K = 128 columns. A "row group" of 8 adjacent lanes shares a v-row: lane t of
// the group holds the float4 columns (m * 8 + t) * 4, m < 4, so one warp
// instruction covers 4 rows x 128 contiguous bytes (full lines, and
// conflict-free 16-byte shared-memory phases). Each thread owns kRows v-rows.
//
// Bytes in flight. The state tile is staged into shared memory with 16-byte
// cp.async copies issued as the first thing a CTA does (each thread copies
// exactly the chunks it later reads, so the packed path needs no barrier). In
// flight, the tile costs no registers, so an SM keeps 100-200 KB of tiles
// streaming while CTAs compute. Every other load of a CTA (slot, ring cursor,
// ring entries) is issued before the first wait, so a CTA's critical path is
// two memory latencies (index, data). With kStage the first 16 ring entries
// (k rows, this block's d) are staged the same way, as an older commit group,
// so the coefficient phase waits only for them. Programmatic dependent launch
// (decode.h, DecodeOverlap::kPrologue) moves everything before
// GridDependencyWait() ahead of the preceding kernel's tail; with kLaunch
// (DecodeArgs::wait_first) the kernel waits before its first load instead.
//
// What the H200 showed (docs/benchmarks/gdn_history.md, memory-pattern
// microbenchmarks): an in-place update reaches the copy ceiling only in small
// one-shot units (4 KB per CTA: 99 %; 16 KB: 96 %; persistent TMA pipelines:
// 88-96 %; a grid-stride loop: 92 %), hence the small packed tiles. Scattering
// the 4 KB units over the pool (the slots) costs ~3 % by itself; an L2
// evict-last policy on the state lines (DecodeArgs::cache) takes most of it
// back. Tiles of 128 threads per 2-4 KB were slower: their register footprint
// leaves fewer bytes in flight per SM.
//
// Per v-row the contractions S.k and S.q are reduced inside the row group (3
// shuffles each); the L2 norms of q and k are reduced the same way.
//
// ReplaySSM, non-flush step (history route, no state write):
//   y_x[v] = A (C x)[v] + sum_{j<n} c^x_j d_j[v],   c^x_j = w_j (k_j . x)
// The n coefficients per x are computed once per CTA and passed through
// shared memory (ring k_j are shared through L2 by the r value heads and the
// v-blocks of a key group). With the ring staged, row group g of warp w takes
// entry j = w + kWarps g (+ 4 kWarps per further pass) and dots the k row with
// the q, k it holds; unstaged, warp w takes j = w, w + kWarps, ... on a lane-
// layout copy of q, k. The d_j[v] terms go to lane j % 8 of the row group and
// fold into the same reduction as C x.
// The ring keeps k_j as the raw bf16 key with its norm scale r_j (decode.h);
// every weight w_j here multiplies a k_j term, so the weights carry r_j
// (RingWeights) and the k rows are used raw.
//
// With precomputed coefficients (DecodeMode::kReplayCoef, ReplayCoefKernel in
// decode_replay_prekernel.cu) a non-flush CTA skips all of that: it reads
// c^x_j and A from the (row, value head) record, stages only its d entries,
// and (unstaged) needs no barrier at all; its flush stages no k rows (they
// come from L2).
//
// Flush step (and fold): the ring is folded into the staged tile on chip,
// S = A C + sum_j w_j d_j k_j^T, with the k_j of 8 entries at a time held in
// registers in lane layout (lane = 4 columns) and the coefficients w_j d_j[v]
// in shared memory (on the precomputed route in place of the staged d_j);
// then the packed step runs on the tile: one state read, one write, no second
// pass over memory. On the fused route the tiles of four or more warps fold
// on tensor cores instead (bf16 mma.sync, the coefficients split in three
// bf16 parts so every product stays exact: kMmaFold below), 11-23 % shorter
// flush steps at B >= 128 (run 78).
#ifndef ROLLOUT_GDN_DECODE_KERNEL_CUH_
#define ROLLOUT_GDN_DECODE_KERNEL_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "gdn/cache_policy.cuh"
#include "gdn/cuda_util.cuh"
#include "gdn/decode.h"
#include "gdn/fast_div.h"

namespace rollout::gdn::internal {

constexpr int kDim = 128;                        // K = V
constexpr int kMaxRing = 64;                     // largest ring length L
constexpr int kFoldChunk = 8;                    // ring entries per fold pass
constexpr float kQScale = 0.08838834764831845f;  // 128^-1/2

// kReplayCoef: the ReplaySSM step whose non-flush rows take their ring
// coefficients from DecodeArgs::coef (filled by ReplayCoefKernel just before)
// instead of computing them per CTA.
enum class DecodeMode : int {
  kPacked = 0,
  kReplay = 1,
  kFold = 2,
  kReplayCoef = 3
};

// Device-side view of the launcher params (flat, passed by value).
struct DecodeArgs {
  int batch = 0, H = 0, HV = 0, r = 1;
  const uint16_t* qkv = nullptr;
  int64_t qkv_stride = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  int64_t ab_stride = 0;
  bool ab_fp32 = false;
  const float* A_log = nullptr;
  const float* dt_bias = nullptr;
  float* state = nullptr;
  const int32_t* slots = nullptr;
  void* o = nullptr;
  int64_t o_stride = 0;
  bool o_fp32 = false;
  uint16_t* ring_k = nullptr;  // raw bf16 k rows (decode.h)
  float* ring_ks = nullptr;    // their norm scales
  void* ring_d = nullptr;
  float* ring_g = nullptr;
  int L = 1;
  const int32_t* ring_idx = nullptr;
  const int32_t* write_pos = nullptr;
  const int8_t* force = nullptr;
  // kReplayCoef: per (row, value head) records of coef_stride floats:
  // [0, L) c^q_j, [L, 2L) c^k_j (j < n), [2L] A (decode.h, coef_scratch).
  float* coef = nullptr;
  int coef_stride = 0;
  // DecodeOverlap::kLaunch: the dependency wait before any memory access.
  bool wait_first = false;
  int cache = 0;  // state traffic (kCache* below): 0 plain, 1 evict-first
                  // stores (st.global.cs), 2 evict-last loads and stores
  // By HV and r (set by LaunchDecodeTile): the block index split.
  FastDiv hv_div, r_div;
  // Host only: at most this many CTAs of the kernel per SM (LaunchDecodeTile
  // pads its dynamic shared memory; ReplayCtasPerSmFor); 0: no cap.
  int max_ctas_per_sm = 0;
};

// The dynamic shared memory that caps a kernel at `n` CTAs per SM: enough
// that n + 1 of them, with the driver's 1 KB each, overflow an SM's 228 KB
// even without static arrays; never less than the kernel's own `own`. For
// n = 4 that is 45,696 bytes, under the 48 KB that needs no opt-in, and four
// still fit with up to 11 KB of static arrays (the kernels have under 5).
constexpr int CappedSmemBytes(int own, int n) {
  const int overflow = (228 * 1024) / (n + 1) - 1024 + 1;
  const int padded = (overflow + 127) / 128 * 128;
  return padded > own ? padded : own;
}
static_assert(CappedSmemBytes(0, 4) == 45696 &&
                  4 * (CappedSmemBytes(0, 4) + 1024 + 11 * 1024) <= 228 * 1024,
              "four capped CTAs fit an SM, five do not");

template <int kWarps_, int kRows_, int kMinBlocks_>
struct Tile {
  static constexpr int kTpr = 8;        // lanes per v-row
  static constexpr int kRows = kRows_;  // v-rows per thread
  static constexpr int kWarps = kWarps_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kGroups = kWarps * (32 / kTpr);  // row groups per CTA
  static constexpr int kBv = kGroups * kRows;           // v-rows per CTA
  static constexpr int kVec = kDim / (4 * kTpr);        // float4 per row-thread
  static constexpr int kNvb = kDim / kBv;               // CTAs per head
  static constexpr int kTileBytes = kBv * kDim * 4;     // dynamic smem
  // d_j entries per row prefetched (covers n <= 15, i.e. L = 16).
  static constexpr int kPreD = (16 + kTpr - 1) / kTpr;
  // Ring k_j vectors per warp prefetched for the coefficient phase.
  static constexpr int kPreJ = (16 + kWarps - 1) / kWarps;
  static_assert(kDim % kBv == 0, "tile shape");
};

// Ring entries staged in shared memory by the kStage kernels (the first
// kStageJ of a ring: all of them for L <= 17); later entries are read from
// global memory.
constexpr int kStageJ = 16;
// Whether a tile's ReplaySSM flush (fused route, ring staged) folds on tensor
// cores: the tiles of four or more warps. The two-warp tiles fold on CUDA
// cores; giving them the tensor-core layout below made their batch-1 and
// batch-8 steps 1-3 % slower (run 75's "mmafold").
template <class T>
constexpr bool FoldsOnTensorCores() {
  return T::kWarps >= 4;
}
// Row stride of the staged k rows (bf16 elements). The tensor-core tiles pad
// them to 272 bytes, so that the same columns of 8 consecutive rows lie in 8
// different bank groups (the tensor-core reads, ldmatrix, take 16 bytes of 8
// rows at a time); the others keep K.
template <class T>
constexpr int KRowStride() {
  return FoldsOnTensorCores<T>() ? kDim + 8 : kDim;
}

// Dynamic shared memory of a kernel: the state tile, plus the staged ring
// (bf16 k rows [kStageJ][K] unless the coefficients come precomputed, and
// this block's d [kStageJ][kBv]).
template <class T, typename RingT, bool kStage, bool kCoef>
constexpr int SmemBytes() {
  constexpr int kKs = KRowStride<T>();
  return T::kTileBytes +
         (kStage ? kStageJ * ((kCoef ? 0 : kKs * 2) +
                              T::kBv * static_cast<int>(sizeof(RingT)))
                 : 0);
}

// Ring d element IO for fp32 and bf16 rings.
template <typename RingT>
struct RingIO;

template <>
struct RingIO<float> {
  static __device__ __forceinline__ float Load(const float* p) { return *p; }
  static __device__ __forceinline__ void Store(float* p, float v) { *p = v; }
};

template <>
struct RingIO<uint16_t> {
  static __device__ __forceinline__ float Load(const uint16_t* p) {
    return Bf16ToFloat(*p);
  }
  static __device__ __forceinline__ void Store(uint16_t* p, float v) {
    *p = FloatToBf16(v);
  }
};

// The ring's k rows (raw bf16 with a norm scale per row, decode.h) are kept
// in L2 (evict-last reads, appends and staged copies, with
// EvictLastPolicy()): every committed k row is read again at every later step
// of its cycle (by the pre-kernel, or by each CTA of the key group on the
// fused route), while the non-flush steps stream the state past them once
// (kCacheReadOnce). Runs 22-24 (H200): non-flush steps 1-2.5 % faster at
// B = 128-256 (where the k rows fit in L2), the B = 1 flush 10 %.
//
// Columns 4 l .. 4 l + 3 of a k row (unscaled: the weights carry the scale,
// RingWeights).
__device__ __forceinline__ float4 LoadKRow4(const uint16_t* p) {
  return LoadBf16x4(p);
}
__device__ __forceinline__ float4 LoadKRow4Keep(const uint16_t* p,
                                                uint64_t pol) {
  return Bf16x4ToFloat4(LoadHint8(p, pol));
}

// x0, x1 as three bf16 pairs, hi + mid + lo = x to within 2^-24 |x| (each
// residual is exact in fp32): products with bf16 operands then keep fp32
// accuracy.
__device__ __forceinline__ void SplitBf16x2(float x0, float x1, uint32_t* hi,
                                            uint32_t* mid, uint32_t* lo) {
  uint32_t part[3][2];
  float x[2] = {x0, x1};
#pragma unroll
  for (int e = 0; e < 2; ++e) {
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      const uint16_t b = FloatToBf16(x[e]);
      part[k][e] = b;
      x[e] -= Bf16ToFloat(b);
    }
  }
  *hi = part[0][0] | (part[0][1] << 16);
  *mid = part[1][0] | (part[1][1] << 16);
  *lo = part[2][0] | (part[2][1] << 16);
}

__device__ __forceinline__ float4 Zero4() {
  return make_float4(0.f, 0.f, 0.f, 0.f);
}

// Row-group L2 norms of q and k (a thread holds kVec float4 of its group's
// 128 columns): the scales rq = K^-1/2 / |q| and rk = 1 / |k|, and kq = the
// dot of the normalised vectors.
template <int kTpr, int kVec>
__device__ __forceinline__ void QKNorms(const float4 (&q)[kVec],
                                        const float4 (&k)[kVec], float* rq,
                                        float* rk, float* kq) {
  float nq = 0.f, nk = 0.f, qk = 0.f;
#pragma unroll
  for (int m = 0; m < kVec; ++m) {
    nq += Dot4(q[m], q[m]);
    nk += Dot4(k[m], k[m]);
    qk += Dot4(q[m], k[m]);
  }
  *rq = rsqrtf(GroupSum<kTpr>(nq) + kL2Eps) * kQScale;
  *rk = rsqrtf(GroupSum<kTpr>(nk) + kL2Eps);
  *kq = GroupSum<kTpr>(qk) * *rq * *rk;
}
template <int kVec>
__device__ __forceinline__ void ScaleQK(float4 (&q)[kVec], float4 (&k)[kVec],
                                        float rq, float rk) {
#pragma unroll
  for (int m = 0; m < kVec; ++m) {
    q[m] = Scale4(q[m], rq);
    k[m] = Scale4(k[m], rk);
  }
}

// Appends this step's k at ring entry n of the row's key head, from the
// kTpr lanes t of one row group before k is normalised: the raw columns each
// lane holds (bf16 values, so converting them back is exact) and, from lane
// 0, the norm scale rk (k_j = raw * rk, the row the fp32 recurrence uses).
template <int kTpr, int kVec>
__device__ __forceinline__ void AppendRingK(const float4 (&k)[kVec], float rk,
                                            int t, uint16_t* dst,
                                            float* scale_dst) {
  const uint64_t keep = EvictLastPolicy();
#pragma unroll
  for (int m = 0; m < kVec; ++m) {
    StoreHint8(dst + (m * kTpr + t) * 4, Float4ToBf16x4(k[m]), keep);
  }
  if (t == 0) *scale_dst = rk;
}

// Ring weights of n entries from the lane's g values (x0 = g_lane, x1 =
// g_{lane+32}, zero at or past n), computed identically by every warp: lane l
// gets w_l and w_{l+32} (w_j = exp(sum_{j<i<n} g_i), suffix sums: all <= 1)
// and the checkpoint decay A = exp(sum_{i<n} g_i). Every use of w_j
// multiplies the raw k row j, so the weights carry that row's norm scale
// (s0 = s_lane, s1 = s_{lane+32}, zero at or past n).
__device__ __forceinline__ void RingWeights(float x0, float x1, float s0,
                                            float s1, int lane, float* w_lo,
                                            float* w_hi, float* A) {
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const float y0 = __shfl_down_sync(0xffffffffu, x0, off);
    const float y1 = __shfl_down_sync(0xffffffffu, x1, off);
    if (lane + off < 32) {
      x0 += y0;
      x1 += y1;
    }
  }
  const float total_hi = __shfl_sync(0xffffffffu, x1, 0);
  x0 += total_hi;
  // Exclusive: the suffix starting after j.
  const float n0 = __shfl_down_sync(0xffffffffu, x0, 1);
  const float n1 = __shfl_down_sync(0xffffffffu, x1, 1);
  *w_lo = expf(lane == 31 ? total_hi : n0) * s0;
  *w_hi = expf(lane == 31 ? 0.0f : n1) * s1;
  *A = expf(__shfl_sync(0xffffffffu, x0, 0));
}

// w_j from the lane-distributed weights (j warp-uniform).
__device__ __forceinline__ float WeightOf(int j, float w_lo, float w_hi) {
  return __shfl_sync(0xffffffffu, j < 32 ? w_lo : w_hi, j & 31);
}

// w_j for a j of this lane's own (any lane pattern; every lane must call).
__device__ __forceinline__ float WeightOfLane(int j, float w_lo, float w_hi) {
  const float lo = __shfl_sync(0xffffffffu, w_lo, j & 31);
  const float hi = __shfl_sync(0xffffffffu, w_hi, j & 31);
  return j < 32 ? lo : hi;
}

// DecodeArgs::cache values. kCacheReadOnce is internal: the state tile of a
// ReplaySSM non-flush row is read once and never written, so it is loaded
// evict-first and does not push the ring's k rows out of L2.
constexpr int kCachePlain = 0;
constexpr int kCacheStreamStores = 1;  // st.global.cs state stores
constexpr int kCacheEvictLast = 2;
constexpr int kCacheReadOnce = 3;

// L2 policy of the state traffic (DecodeArgs::cache). Measured on the H200
// (docs/benchmarks/gdn_history.md): the in-place update of 4 KB blocks
// scattered over the pool (slots) loses ~3 % of the copy ceiling to the scatter
// alone; marking the state lines evict-last takes most of it back (large
// batches only).
__device__ __forceinline__ uint64_t StatePolicy(int cache) {
  if (cache == kCacheEvictLast) return EvictLastPolicy();
  if (cache == kCacheReadOnce) return EvictFirstPolicy();
  return 0;
}
__device__ __forceinline__ void CpAsync16Policy(void* smem, const void* gmem,
                                                int cache, uint64_t pol) {
  if (cache == kCacheEvictLast || cache == kCacheReadOnce) {
    CpAsync16Hint(smem, gmem, pol);
  } else {
    CpAsync16(smem, gmem);
  }
}
__device__ __forceinline__ void StoreState(float* dst, float4 u, int cache,
                                           uint64_t pol) {
  float4* d = reinterpret_cast<float4*>(dst);
  if (cache == kCacheStreamStores) {
    __stcs(d, u);
  } else if (cache == kCacheEvictLast) {
    StoreHint4(d, u, pol);
  } else {
    *d = u;
  }
}

// The thread's first element of its CTA's [kBv, K] block (toff = grp * K +
// t * 4 into it) in the state slot, and in the shared-memory tile (kSwizzle:
// the tensor-core fold's swizzled tile, explained in GdnDecodeKernel at
// kMmaFold).
__device__ __forceinline__ float* StateBlock(const DecodeArgs& p, int slot,
                                             int h, int vbase, int toff) {
  return p.state + (static_cast<int64_t>(slot) * p.HV + h) * (kDim * kDim) +
         static_cast<int64_t>(vbase) * kDim + toff;
}
template <bool kSwizzle>
__device__ __forceinline__ float* TileBlock(float* tile, int grp, int t,
                                            int toff) {
  return tile + (kSwizzle ? grp * kDim + (t ^ (grp & 7)) * 4 : toff);
}

// Copies the thread's chunks of its CTA's state block into the tile (S and
// tl from StateBlock and TileBlock), one commit group: chunk (i, m) at the
// compile-time offset i * kGroups * K + m * kTpr * 4 from both bases.
template <class T>
__device__ __forceinline__ void CopyTile(float* tl, const float* S,
                                         int load_cache) {
  const uint64_t lpol = StatePolicy(load_cache);
#pragma unroll
  for (int i = 0; i < T::kRows; ++i) {
#pragma unroll
    for (int m = 0; m < T::kVec; ++m) {
      const int off = i * T::kGroups * kDim + m * T::kTpr * 4;
      CpAsync16Policy(tl + off, S + off, load_cache, lpol);
    }
  }
  CpAsyncCommit();
}

// An ON row's committed entries n and whether its step flushes, from its
// cursor (a corrupt cursor cannot leave the ring) and force flag.
__device__ __forceinline__ void ReadCursor(int wp, int L, bool forced, int* n,
                                           bool* flush) {
  *n = min(max(wp, 0), L - 1);
  *flush = *n == L - 1 || forced;
}

// Waits for the staged ring's copies: ring first, the tile's may still fly.
template <bool kTileFirst>
__device__ __forceinline__ void RingWait() {
  if constexpr (kTileFirst) {
    CpAsyncWaitAll();
  } else {
    CpAsyncWaitAllButLast();
  }
}

template <class T, DecodeMode kMode, typename RingT, bool kStage,
          bool kTileFirst = false>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    GdnDecodeKernel(const DecodeArgs p) {
  constexpr int kTpr = T::kTpr, kRows = T::kRows, kVec = T::kVec;
  constexpr int kGroups = T::kGroups, kBv = T::kBv, kWarps = T::kWarps;
  constexpr int kE = static_cast<int>(sizeof(RingT));
  constexpr int kKs = KRowStride<T>();
  // The ReplaySSM step (history route or flush), coefficients computed here
  // or precomputed.
  constexpr bool kRep =
      kMode == DecodeMode::kReplay || kMode == DecodeMode::kReplayCoef;
  constexpr bool kCoef = kMode == DecodeMode::kReplayCoef;
  constexpr bool kStageK = kStage && !kCoef;  // k rows staged too
  static_assert(!kStage || kBv * kE >= 16, "staged d rows need 16 bytes");
  // kTileFirst: the state tile's copies are the first commit group and the
  // staged ring's the second (ReplayCopyOrder::kTileFirst), else the other
  // way round.
  static_assert(!kTileFirst || (kStage && kMode == DecodeMode::kReplay),
                "the copy order is of the fused route's staged kernels");
  GDN_DYNAMIC_SHARED(float4, smem_tile4);
  float* tile = reinterpret_cast<float*>(smem_tile4);  // [kBv][K]
  uint16_t* ks =
      reinterpret_cast<uint16_t*>(tile + kBv * kDim);  // [kStageJ][kKs]
  RingT* ds = reinterpret_cast<RingT*>(
      ks + (kStageK ? kStageJ * kKs : 0));  // [kStageJ][kBv]
  GDN_SHARED(float, sh_cq, [kMaxRing]);
  GDN_SHARED(float, sh_ck, [kMaxRing]);
  GDN_SHARED(float, sh_w, [kMaxRing]);
  GDN_SHARED(float, sh_coef, [kFoldChunk][kBv]);

  // Block = (row, h, vb), vb fastest. The divisions by HV and r go through
  // FastDiv: they precede the first load of every CTA.
  const int vb = static_cast<int>(blockIdx.x % T::kNvb);
  const int rh = static_cast<int>(blockIdx.x / T::kNvb);
  const int row = p.hv_div.Div(rh);
  const int h = rh - row * p.HV;
  const int kh = p.r_div.Div(h);  // repeat_interleave: value head h -> h / r
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int t = lane & (kTpr - 1);
  const int grp = warp * (32 / kTpr) + lane / kTpr;      // row group in the CTA
  auto vloc = [&](int i) { return grp + i * kGroups; };  // local v-row
  const int vbase = vb * kBv;
  const int64_t o_base = static_cast<int64_t>(row) * p.o_stride + h * kDim;

  // ---- Independent index loads first (one latency for all of them). With
  // DecodeOverlap::kPrologue these, the state and the ring are read before
  // the preceding kernel finishes (decode.h states the contract); with
  // kLaunch the dependency wait comes first.
  if (p.wait_first) GridDependencyWait();
  const int slot =
      kMode == DecodeMode::kPacked ? p.slots[row] : LoadIndex(p.slots + row);
  int rslot = -1, wp = 0;
  bool forced = false;
  if constexpr (kMode != DecodeMode::kPacked) {
    rslot = LoadIndex(p.ring_idx + row);
    wp = LoadIndex(p.write_pos + row);
    forced = p.force != nullptr && p.force[row] != 0;
  }
  if constexpr (kMode == DecodeMode::kFold) {
    if (slot < 0 || rslot < 0 || wp <= 0) return;  // nothing to fold
  }
  if (slot < 0) {  // padding row: zeros out, nothing else
    GridDependencyWait();
    GridLaunchDependents();
    if (kMode != DecodeMode::kFold && t == 0) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        StoreAny(p.o, o_base + vbase + vloc(i), 0.0f, p.o_fp32);
      }
    }
    return;
  }

  // ---- Tile first: the state tile's copies leave before the ring's address
  // arithmetic and copies, as in the packed kernel. The cursor only picks
  // their cache policy (a non-flush step reads the checkpoint once:
  // load_cache's rule below, written out in both places because a shared
  // helper changed the packed kernels' SASS); the addresses are computed
  // again below, where the compiler shares them.
  // ---- Ring cursor (an OFF row: n = 0, flush: the packed step).
  int n = 0;
  bool flush = true;
  if constexpr (kTileFirst) {
    if (rslot >= 0) ReadCursor(wp, p.L, forced, &n, &flush);
    const int toff = grp * kDim + t * 4;
    CopyTile<T>(TileBlock<FoldsOnTensorCores<T>()>(tile, grp, t, toff),
                StateBlock(p, slot, h, vbase, toff),
                flush ? p.cache : kCacheReadOnce);
  }
  uint16_t* ring_k = nullptr;     // [L, K] of this key head (raw bf16)
  float* ring_ks = nullptr;       // [L] their norm scales
  RingT* ring_d = nullptr;        // [L, V] of this value head
  const float* ring_g = nullptr;  // [L] of this value head
  if constexpr (kMode != DecodeMode::kPacked) {
    if (rslot >= 0) {
      if constexpr (!kTileFirst) ReadCursor(wp, p.L, forced, &n, &flush);
      const int64_t kr = static_cast<int64_t>(rslot) * p.H + kh;
      ring_k = p.ring_k + kr * p.L * kDim;
      ring_ks = p.ring_ks + kr * p.L;
      ring_d = static_cast<RingT*>(p.ring_d) +
               (static_cast<int64_t>(rslot) * p.HV + h) * p.L * kDim;
      ring_g = p.ring_g + (static_cast<int64_t>(rslot) * p.HV + h) * p.L;
    }
  }
  // Entry j's k row and d value: shared memory when staged, else global. A
  // pointer that may point into either space compiles to generic loads (with
  // their address-window arithmetic), so on the fused route (kSmemRing) the
  // coefficient dots' passes of staged entries only and the flush fold's
  // chunks of staged entries read ks / ds directly: non-flush steps
  // 1 % and flush steps 3-5 % faster at B <= 128 (runs 44, 46). Not with a
  // bf16 ring, nor in the non-flush row loop's d reads as a rolled loop:
  // there the extra code spilled (ptxas: 4-68 bytes) and runs 43 and 46
  // measured 4-7 % slower steps. Unrolled, in the tiles of four or more
  // warps, those reads are typed (run 107, below).
  // Tiles of four or more warps on the fused route fold a flush on tensor
  // cores (below). Their tile is swizzled in shared memory: row v keeps its
  // 16-byte chunk q at q ^ (v % 8), so that the fold's fragment updates (8
  // rows, the same columns) hit 8 different bank groups. A thread's rows all
  // have v % 8 = grp % 8 (kGroups is a multiple of 8), so its chunks keep
  // compile-time offsets from one swizzled base.
  constexpr bool kMmaFold =
      kMode == DecodeMode::kReplay && kStage && FoldsOnTensorCores<T>();
  static_assert(!kMmaFold || (kTpr == 8 && kGroups % 8 == 0), "swizzle");
  constexpr bool kSmemRing =
      kStage && kMode == DecodeMode::kReplay && sizeof(RingT) == sizeof(float);
  auto krow = [&](int j) -> const uint16_t* {
    return (kStageK && j < kStageJ) ? ks + j * kKs : ring_k + j * kDim;
  };
  auto dptr = [&](int j, int vl) -> const RingT* {
    return (kStage && j < kStageJ) ? ds + j * kBv + vl
                                   : ring_d + j * kDim + vbase + vl;
  };

  // ---- Stage the ring (a small commit group), then, ring first, the state
  // tile (another). Every copy of a thread is its base pointer plus a
  // compile-time offset (immediate operands: no 64-bit address arithmetic per
  // copy); a ring copy is predicated on its entry being committed (j < m).
  // Ring first, the CTA can dot the staged k rows while the tile still
  // flies; tile first (above), the tile leaves ~100 instructions earlier
  // (SASS of the fp32 staged kernels), which at batch 1 is the step's
  // critical path (decode.h's ReplayCopyOrder has the measurements).
  if constexpr (kStage) {
    const int m = min(n, kStageJ);  // 0 for OFF rows
    constexpr int kKChunks = kDim * 2 / 16, kDChunks = kBv * kE / 16;
    constexpr int kPer = 16 / kE;  // d elements per 16-byte chunk
    // Entries one pass of the CTA's threads covers.
    constexpr int kKPass = T::kThreads / kKChunks;
    constexpr int kDPass = T::kThreads / kDChunks;
    static_assert(T::kThreads % kKChunks == 0 && T::kThreads % kDChunks == 0,
                  "a thread copies the same chunk of every entry it stages");
    if constexpr (kStageK) {
      const uint64_t keep = EvictLastPolicy();
      const int j0 = threadIdx.x / kKChunks, q = threadIdx.x % kKChunks;
      uint16_t* dst = ks + j0 * kKs + q * 8;
      const uint16_t* src = ring_k + j0 * kDim + q * 8;
#pragma unroll
      for (int it = 0; it < kStageJ / kKPass; ++it) {
        if (j0 + it * kKPass < m) {
          CpAsync16Policy(dst + it * kKPass * kKs, src + it * kKPass * kDim,
                          kCacheEvictLast, keep);
        }
      }
    }
    {
      const int j0 = threadIdx.x / kDChunks, q = threadIdx.x % kDChunks;
      RingT* dst = ds + j0 * kBv + q * kPer;
      const RingT* src = ring_d + j0 * kDim + vbase + q * kPer;
#pragma unroll
      for (int it = 0; it < (kStageJ + kDPass - 1) / kDPass; ++it) {
        if (j0 + it * kDPass < m) {
          CpAsync16(dst + it * kDPass * kBv, src + it * kDPass * kDim);
        }
      }
    }
    CpAsyncCommit();
  }
  // The thread's first element of the block: its chunk (i, m) lies at the
  // compile-time offset Off(i, m) from here, in the tile as in the state.
  // (StateBlock's and TileBlock's arithmetic, written out: through the
  // helpers ptxas scheduled the ring-first kernels differently, and their
  // SASS is the one runs 85-103 measured.)
  const int toff = grp * kDim + t * 4;
  auto Off = [](int i, int m) { return i * kGroups * kDim + m * kTpr * 4; };
  float* S = p.state + (static_cast<int64_t>(slot) * p.HV + h) * (kDim * kDim) +
             static_cast<int64_t>(vbase) * kDim + toff;  // [kBv, K] block
  float* tl =
      tile + (kMmaFold ? grp * kDim + (t ^ (grp & 7)) * 4 : toff);  // swizzled
  const uint64_t pol = StatePolicy(p.cache);
  const int load_cache = (kRep && !flush) ? kCacheReadOnce : p.cache;
  if constexpr (!kTileFirst) CopyTile<T>(tl, S, load_cache);

  // ---- Unstaged kernels prefetch the non-flush step's ring reads into
  // registers (entries < L are valid memory; masked by n later).
  float gl0 = 0.f, gl1 = 0.f, sl0 = 0.f, sl1 = 0.f;
  float4 kj[kStage ? 1 : T::kPreJ];
  float dj[kRows][kStage ? 1 : T::kPreD];
  if constexpr (kMode != DecodeMode::kPacked) {
    // (With precomputed coefficients only the flush needs g and the k
    // scales.)
    if (rslot >= 0 && (!kCoef || flush)) {
      gl0 = lane < p.L ? ring_g[lane] : 0.f;
      gl1 = lane + 32 < p.L ? ring_g[lane + 32] : 0.f;
      sl0 = lane < n ? ring_ks[lane] : 0.f;
      sl1 = lane + 32 < n ? ring_ks[lane + 32] : 0.f;
    }
  }
  if constexpr (kRep && !kStage) {
    const uint64_t keep = kCoef ? 0 : EvictLastPolicy();
#pragma unroll
    for (int i = 0; i < (kCoef ? 0 : T::kPreJ); ++i) {
      const int j = warp + i * kWarps;
      kj[i] = (rslot >= 0 && j < p.L)
                  ? LoadKRow4Keep(ring_k + j * kDim + lane * 4, keep)
                  : Zero4();
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
#pragma unroll
      for (int m = 0; m < T::kPreD; ++m) {
        const int j = t + m * kTpr;
        dj[i][m] =
            (rslot >= 0 && j < p.L)
                ? RingIO<RingT>::Load(ring_d + j * kDim + vbase + vloc(i))
                : 0.f;
      }
    }
  }

  // ---- Inputs produced by the preceding kernel: after the dependency wait.
  GridDependencyWait();
  GridLaunchDependents();
  float4 q[kVec], k[kVec], ql = Zero4(), kl = Zero4();
  float vv[kRows];
  float g = 0.0f, beta = 0.0f;
  const uint16_t* x = p.qkv + static_cast<int64_t>(row) * p.qkv_stride;
  if constexpr (kMode != DecodeMode::kFold) {
#pragma unroll
    for (int m = 0; m < kVec; ++m) {
      const int c = (m * kTpr + t) * 4;
      q[m] = LoadBf16x4(x + kh * kDim + c);
      k[m] = LoadBf16x4(x + (p.H + kh) * kDim + c);
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      vv[i] = Bf16ToFloat(x[(2 * p.H + h) * kDim + vbase + vloc(i)]);
    }
    if constexpr (kMode == DecodeMode::kReplay && !kStage) {  // their dots
      ql = LoadBf16x4(x + kh * kDim + lane * 4);
      kl = LoadBf16x4(x + (p.H + kh) * kDim + lane * 4);
    }
    const int64_t ab = static_cast<int64_t>(row) * p.ab_stride + h;
    GateMath(LoadAny(p.a, ab, p.ab_fp32), LoadAny(p.b, ab, p.ab_fp32),
             p.A_log[h], p.dt_bias[h], &g, &beta);
  }

  if constexpr (kCoef) {
    if (!flush) {
      // ===== History route, coefficients precomputed (ReplayCoefKernel) =====
      // No ring k, no g, no coefficient phase and (unstaged) no barrier: the
      // CTA reads its tile, this block's d entries and 2 n + 1 floats.
      const float* rec =
          p.coef + (static_cast<int64_t>(row) * p.HV + h) * p.coef_stride;
      const float A = rec[2 * p.L];
      float cq[T::kPreD], ck[T::kPreD];
#pragma unroll
      for (int m = 0; m < T::kPreD; ++m) {
        const int j = t + m * kTpr;
        cq[m] = j < n ? rec[j] : 0.f;
        ck[m] = j < n ? rec[p.L + j] : 0.f;
      }
      float rq, rk, kq;
      QKNorms<kTpr>(q, k, &rq, &rk, &kq);
      // Append k once per key group (first value head, first v-block).
      if (h == kh * p.r && vb == 0 && threadIdx.x < kTpr) {
        AppendRingK<kTpr>(k, rk, t, ring_k + n * kDim, ring_ks + n);
      }
      ScaleQK(q, k, rq, rk);
      const float alpha = expf(g);
      CpAsyncWaitAll();  // own tile chunks (and the staged d entries)
      if constexpr (kStage) __syncthreads();  // d entries of other threads
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        float pq = 0.f, pk = 0.f;
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          const float4 s = *reinterpret_cast<const float4*>(tl + Off(i, m));
          pq += Dot4(s, q[m]);
          pk += Dot4(s, k[m]);
        }
        pq *= A;
        pk *= A;
#pragma unroll
        for (int m = 0; m < T::kPreD; ++m) {
          const int j = t + m * kTpr;
          if (j < n) {
            const float d = kStage ? RingIO<RingT>::Load(dptr(j, vloc(i)))
                                   : dj[i][kStage ? 0 : m];
            pq += cq[m] * d;
            pk += ck[m] * d;
          }
        }
        for (int j = t + T::kPreD * kTpr; j < n; j += kTpr) {
          const float d = RingIO<RingT>::Load(dptr(j, vloc(i)));
          pq += rec[j] * d;
          pk += rec[p.L + j] * d;
        }
        pq = GroupSum<kTpr>(pq);
        pk = GroupSum<kTpr>(pk);
        const float d = beta * (vv[i] - alpha * pk);
        if (t == 0) {
          StoreAny(p.o, o_base + vbase + vloc(i), alpha * pq + kq * d,
                   p.o_fp32);
          RingIO<RingT>::Store(ring_d + n * kDim + vbase + vloc(i), d);
        }
      }
      // Append g once per value head (k went before the norms).
      if (vb == 0 && threadIdx.x == 0) const_cast<float*>(ring_g)[n] = g;
      return;
    }
  }

  if constexpr (kMode == DecodeMode::kReplay) {
    if (!flush) {
      // ================= History route (no state write) =================
      float w_lo, w_hi, A;
      RingWeights(lane < n ? gl0 : 0.f, lane + 32 < n ? gl1 : 0.f, sl0, sl1,
                  lane, &w_lo, &w_hi, &A);
      // Row-group layout q, k: norms reduced inside the group; k appended
      // once per key group (first value head, first v-block) before it is
      // normalised.
      float rq, rk, kq;
      auto normalise_qk = [&]() {
        QKNorms<kTpr>(q, k, &rq, &rk, &kq);
        if (h == kh * p.r && vb == 0 && threadIdx.x < kTpr) {
          AppendRingK<kTpr>(k, rk, t, ring_k + n * kDim, ring_ks + n);
        }
        ScaleQK(q, k, rq, rk);
      };
      // Tile first (ReplayCopyOrder::kTileFirst: batch 1), the wait for the
      // staged ring is a wait for the tile too, so the row loop's dots with
      // the checkpoint (S q, S k) come before the coefficients' barrier,
      // beside the coefficient dots, and the staged passes of those run
      // unrolled (below). Run 108 (H100, two A/B passes): 16/32 B = 1 cycle
      // -2.1 % (1.018 -> 1.040x), 16/16 B = 1 -3.1 % (0.934 -> 0.976x); the
      // non-flush steps 0.1-0.2 us shorter from n = 1 on, 0.1 us longer at
      // n = 0 (the passes run whatever n is: skipping them at n = 0 made the
      // others slower, rowearly2 and rowearly3).
      constexpr bool kRowEarly = kTileFirst && kSmemRing;
      float eq[kRowEarly ? kRows : 1], ek[kRowEarly ? kRows : 1];
      // Coefficients c^q_j, c^k_j -> shared memory.
      if constexpr (kStage) {
        normalise_qk();
        RingWait<kTileFirst>();
        __syncthreads();
        if constexpr (kRowEarly) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) {
            eq[i] = ek[i] = 0.f;
#pragma unroll
            for (int m = 0; m < kVec; ++m) {
              const float4 s = *reinterpret_cast<const float4*>(tl + Off(i, m));
              eq[i] += Dot4(s, q[m]);
              ek[i] += Dot4(s, k[m]);
            }
          }
        }
        // Each row group takes one entry per pass and dots its k row with
        // the normalised q, k it already holds: three shuffles per dot, and
        // no second copy of q, k in lane layout.
        constexpr int kPass = (32 / kTpr) * kWarps;  // entries per pass
        auto dots = [&](const uint16_t* kr, float* dq, float* dk) {
#pragma unroll
          for (int m = 0; m < kVec; ++m) {
            const float4 kv = LoadKRow4(kr + (m * kTpr + t) * 4);
            *dq += Dot4(kv, q[m]);
            *dk += Dot4(kv, k[m]);
          }
        };
        // Tile first, the passes of staged entries are unrolled with no
        // branch at all, so their loads and shuffle reductions overlap (run
        // 108's "passes" alone: -1.8 / -2.1 % of the batch-1 cycles): a row
        // group past n dots whatever its staged row holds (never committed:
        // possibly NaN), which stays in its own group's sums and is never
        // stored.
        constexpr int kEarlyPasses = kRowEarly ? kStageJ / kPass : 0;
        if constexpr (kEarlyPasses > 0) {
          float dq[kEarlyPasses], dk[kEarlyPasses];
#pragma unroll
          for (int e = 0; e < kEarlyPasses; ++e) {
            const int j = e * kPass + warp + kWarps * (lane / kTpr);
            dq[e] = dk[e] = 0.f;
            dots(ks + j * kKs, &dq[e], &dk[e]);
          }
#pragma unroll
          for (int e = 0; e < kEarlyPasses; ++e) {
            const int j = e * kPass + warp + kWarps * (lane / kTpr);
            dq[e] = GroupSum<kTpr>(dq[e]);
            dk[e] = GroupSum<kTpr>(dk[e]);
            const float wj = WeightOfLane(j, w_lo, w_hi);
            if (t == 0 && j < n) {
              sh_cq[j] = wj * dq[e];
              sh_ck[j] = wj * dk[e];
            }
          }
        }
        for (int jb = kEarlyPasses * kPass; jb < n; jb += kPass) {
          const int j = jb + warp + kWarps * (lane / kTpr);
          float dq = 0.f, dk = 0.f;
          if (j < n) {
            // A pass of staged entries only (kSmemRing): typed reads.
            if (kSmemRing && jb + kPass <= kStageJ) {
              dots(ks + j * kKs, &dq, &dk);
            } else {
              dots(krow(j), &dq, &dk);
            }
          }
          dq = GroupSum<kTpr>(dq);
          dk = GroupSum<kTpr>(dk);
          const float wj = WeightOfLane(j, w_lo, w_hi);
          if (t == 0 && j < n) {
            sh_cq[j] = wj * dq;
            sh_ck[j] = wj * dk;
          }
        }
      } else {
        // Unstaged: the first entries' k rows were prefetched in lane layout
        // (kj), so the dots take q, k in that layout too.
        ql = Scale4(ql, RowNormScale(ql) * kQScale);
        kl = Scale4(kl, RowNormScale(kl));
#pragma unroll
        for (int i = 0; i < T::kPreJ; ++i) {
          const int j = warp + i * kWarps;
          if (j < n) {
            const float dq = GroupSum<32>(Dot4(kj[i], ql));
            const float dk = GroupSum<32>(Dot4(kj[i], kl));
            const float wj = WeightOf(j, w_lo, w_hi);
            if (lane == 0) {
              sh_cq[j] = wj * dq;
              sh_ck[j] = wj * dk;
            }
          }
        }
        for (int j = warp + T::kPreJ * kWarps; j < n; j += kWarps) {
          const float4 kv = LoadKRow4(krow(j) + lane * 4);
          const float dq = GroupSum<32>(Dot4(kv, ql));
          const float dk = GroupSum<32>(Dot4(kv, kl));
          const float wj = WeightOf(j, w_lo, w_hi);
          if (lane == 0) {
            sh_cq[j] = wj * dq;
            sh_ck[j] = wj * dk;
          }
        }
        normalise_qk();
      }
      const float alpha = expf(g);
      CpAsyncWaitAll();  // own chunks of the tile
      __syncthreads();   // coefficients visible
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        float pq = 0.f, pk = 0.f;
        if constexpr (kRowEarly) {
          pq = eq[i];
          pk = ek[i];
        } else {
#pragma unroll
          for (int m = 0; m < kVec; ++m) {
            const float4 s = *reinterpret_cast<const float4*>(tl + Off(i, m));
            pq += Dot4(s, q[m]);
            pk += Dot4(s, k[m]);
          }
        }
        pq *= A;
        pk *= A;
        int j0 = t;
        if constexpr (!kStage) {
#pragma unroll
          for (int m = 0; m < T::kPreD; ++m) {
            const int j = t + m * kTpr;
            if (j < n) {
              pq += sh_cq[j] * dj[i][m];
              pk += sh_ck[j] * dj[i][m];
            }
          }
          j0 = t + T::kPreD * kTpr;
        }
        if constexpr (kSmemRing && kWarps >= 4) {
          // The staged entries' d terms unrolled, as typed shared-memory
          // reads: every load of the row in flight at once. Run 107 (H100):
          // the 16/32 B = 1 non-flush step 3.03 -> 2.95 us (the cycle 3.12
          // -> 3.04 us, 0.994 -> 1.016x), B = 8 0.7-2.5 % shorter, larger
          // batches level; the two-warp tiles were slower so (16/16 B = 1
          // +2.3 %) and keep the loop below.
          static_assert(kStageJ % kTpr == 0, "whole passes of staged entries");
#pragma unroll
          for (int m = 0; m < kStageJ / kTpr; ++m) {
            const int j = t + m * kTpr;
            if (j < n) {
              const float d = ds[j * kBv + vloc(i)];
              pq += sh_cq[j] * d;
              pk += sh_ck[j] * d;
            }
          }
          j0 = t + kStageJ;
        }
        for (int j = j0; j < n; j += kTpr) {
          const float d = RingIO<RingT>::Load(dptr(j, vloc(i)));
          pq += sh_cq[j] * d;
          pk += sh_ck[j] * d;
        }
        pq = GroupSum<kTpr>(pq);
        pk = GroupSum<kTpr>(pk);
        const float d = beta * (vv[i] - alpha * pk);
        if (t == 0) {
          StoreAny(p.o, o_base + vbase + vloc(i), alpha * pq + kq * d,
                   p.o_fp32);
          RingIO<RingT>::Store(ring_d + n * kDim + vbase + vloc(i), d);
        }
      }
      // Append g once per value head (k went before the norms).
      if (vb == 0 && threadIdx.x == 0) const_cast<float*>(ring_g)[n] = g;
      return;
    }
  }

  // ================= Fold the ring into the tile (flush / fold) ============
  // Coefficients w_j d_j[v], one chunk of kFoldChunk entries at a time. The
  // precomputed route with a staged fp32 ring scales the staged entries in
  // place, taking the weights from the warp's registers by shuffle, so it
  // needs no static shared memory: its bv64 CTA then takes 36.9 KB and six
  // fit an SM instead of five. It runs only for L <= kStageJ + 1
  // (decode.cu), so every committed entry (n <= L - 1 <= kStageJ) is staged
  // and no chunk passes kStageJ entries. The other kernels go through sh_w
  // and sh_coef.
  constexpr bool kInPlaceCoef =
      kCoef && kStage && sizeof(RingT) == sizeof(float);
  // The fused route's bv8 tile with a staged fp32 ring (batch 1, kRows = 1):
  // the ring's part of the fold, F = sum_j w_j d_j k_j^T over the thread's
  // own chunks, accumulates in registers from the staged entries (ring
  // first, while the tile is still in flight; tile first, as at batch 1
  // under kAuto, once both have arrived); the packed step below then takes
  // A S + F. No shared-memory round trip of the tile, no per-chunk barriers.
  // Not in bv16 (run 75: its flush, 16/16 B = 8, 24 % slower) nor in the
  // register-capped tiles.
  constexpr bool kRegFold = kSmemRing && kRows == 1 && T::kMinBlocks == 1;
  float4 F[kRegFold ? kRows : 1][kRegFold ? kVec : 1];
  float A_fold = 1.0f;
  if constexpr (kRegFold) {
    if (n > 0) {
      float w_lo, w_hi;
      RingWeights(lane < n ? gl0 : 0.f, lane + 32 < n ? gl1 : 0.f, sl0, sl1,
                  lane, &w_lo, &w_hi, &A_fold);
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
#pragma unroll
        for (int m = 0; m < kVec; ++m) F[i][m] = Zero4();
      }
      // Adds entry j: its k row (this thread's columns) and d (its v-rows).
      auto add = [&](int j, const uint16_t* kr, auto d_of) {
        const float w = WeightOf(j, w_lo, w_hi);  // j warp-uniform
        float4 kv[kVec];
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          kv[m] = LoadKRow4(kr + (m * kTpr + t) * 4);
        }
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
          const float c = w * d_of(i);
#pragma unroll
          for (int m = 0; m < kVec; ++m) {
            Fma4(c, kv[m], &F[i][m]);
          }
        }
      };
      RingWait<kTileFirst>();
      __syncthreads();  // entries staged by other threads
      const int ns = min(n, kStageJ);
      // The staged entries kFoldGroup at a time: a group's loads and weight
      // shuffles first, then its products in entry order (as a rolled loop,
      // ptxas issued each entry's loads only after the previous entry's
      // products). An entry of the last group past n loads staged memory
      // that was never committed and is not folded. Run 108 (H100, three
      // --flush-cost runs): the 16/16 B = 1 flush at n = 15 3.55 -> 3.41 us,
      // its cycle estimate -1.8 % (0.973 -> 0.993x).
      constexpr int kFoldGroup = 4;
      static_assert(kStageJ % kFoldGroup == 0, "whole groups of entries");
#pragma unroll
      for (int jg = 0; jg < kStageJ; jg += kFoldGroup) {
        if (jg < ns) {
          float4 kv[kFoldGroup][kVec];
          float c[kFoldGroup][kRows];
#pragma unroll
          for (int e = 0; e < kFoldGroup; ++e) {
            const int j = jg + e;
            const float w = WeightOf(j, w_lo, w_hi);  // j warp-uniform
#pragma unroll
            for (int m = 0; m < kVec; ++m) {
              kv[e][m] = LoadKRow4(ks + j * kKs + (m * kTpr + t) * 4);
            }
#pragma unroll
            for (int i = 0; i < kRows; ++i) c[e][i] = w * ds[j * kBv + vloc(i)];
          }
#pragma unroll
          for (int e = 0; e < kFoldGroup; ++e) {
            if (jg + e < ns) {
#pragma unroll
              for (int i = 0; i < kRows; ++i) {
#pragma unroll
                for (int m = 0; m < kVec; ++m) {
                  Fma4(c[e][i], kv[e][m], &F[i][m]);
                }
              }
            }
          }
        }
      }
      for (int j = kStageJ; j < n; ++j) {  // rings longer than kStageJ + 1
        add(j, ring_k + j * kDim, [&](int i) {
          return RingIO<RingT>::Load(ring_d + j * kDim + vbase + vloc(i));
        });
      }
    }
  } else if constexpr (kMode != DecodeMode::kPacked) {
    if (n > 0) {
      float w_lo, w_hi, A;
      RingWeights(lane < n ? gl0 : 0.f, lane + 32 < n ? gl1 : 0.f, sl0, sl1,
                  lane, &w_lo, &w_hi, &A);
      if constexpr (!kInPlaceCoef) {
        if (warp == 0) {
          sh_w[lane] = w_lo;
          sh_w[lane + 32] = w_hi;
        }
      }
      // kMmaFold, every entry staged: the fold on tensor cores, S = A S + C K
      // with C [kBv, 16] = w_j d_j[v] split into three bf16 parts and K
      // [16, K] the staged raw bf16 keys (exact), so each product is exact
      // and only the fp32 sums' order differs from the CUDA-core fold (~16
      // FMA per state element, and the tile's rows through shared memory
      // once per 8 entries). Warp w takes the 16-row tile w % kMt and kNt of
      // the 16 column tiles of 8; its C fragments update the tile in place.
      // Where a warp's accumulators fit its registers (kNt <= 8: the 32-row
      // tile, 32 floats), C K is computed whole before the tile's updates:
      // the four k-row loads first (ptxas cannot move one past an update of
      // the tile, which may alias), then the eight product chains side by
      // side (run 85: the 16/32 B = 1 flush 3.1 % faster). The products come
      // before the tile's wait in the source, but ptxas places that wait
      // after the loads and the first product: the products do not overlap
      // the tile's arrival.
      bool folded = false;
      if constexpr (kMmaFold) {
        if (n <= kStageJ) {
          constexpr int kMt = kBv / 16, kNt = 16 / (kWarps / kMt);
          static_assert(kBv % 16 == 0 && kWarps % kMt == 0 && kNt % 2 == 0,
                        "mma fold tiling");
          constexpr bool kEarly = kNt <= 8;
          if constexpr (kEarly) {
            RingWait<kTileFirst>();
          } else {
            CpAsyncWaitAll();
          }
          __syncthreads();  // staged ring (and, not kEarly, the tile) visible
          const int g = lane >> 2, tq = lane & 3;
          const int v0 = 16 * (warp % kMt), nt0 = (warp / kMt) * kNt;
          float wt[2][2];  // w_j of this lane's entries 2 tq (+ 1) (+ 8)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              wt[hh][e] = WeightOfLane(2 * tq + 8 * hh + e, w_lo, w_hi);
            }
          }
          uint32_t ah[4], am[4], al[4];
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            const int v = v0 + g + 8 * (r & 1), hh = r >> 1;
            const int j = 2 * tq + 8 * hh;
            const float x0 =
                j < n ? wt[hh][0] * RingIO<RingT>::Load(ds + j * kBv + v) : 0.f;
            const float x1 =
                j + 1 < n
                    ? wt[hh][1] * RingIO<RingT>::Load(ds + (j + 1) * kBv + v)
                    : 0.f;
            SplitBf16x2(x0, x1, &ah[r], &am[r], &al[r]);
          }
          // Rows of K past n were never staged: zero them (0 times
          // whatever shared memory held may be NaN).
          const uint32_t m0 =
              (2 * tq < n ? 0xffffu : 0u) | (2 * tq + 1 < n ? 0xffff0000u : 0u);
          const uint32_t m1 = (2 * tq + 8 < n ? 0xffffu : 0u) |
                              (2 * tq + 9 < n ? 0xffff0000u : 0u);
          const uint16_t* brow =
              ks + ((lane & 7) + 8 * ((lane >> 3) & 1)) * kKs + 8 * (lane >> 4);
          // Rows v0 + g and v0 + g + 8 (both % 8 = g) of the swizzled tile.
          float* r0 = tile + (v0 + g) * kDim;
          float* r1 = r0 + 8 * kDim;
          // C K of column tile nt (8 columns) into acc.
          auto product = [&](const uint32_t(&b)[4], int h2, float(&acc)[4]) {
            const uint32_t b0 = b[2 * h2] & m0, b1 = b[2 * h2 + 1] & m1;
            acc[0] = acc[1] = acc[2] = acc[3] = 0.f;
            MmaBf16(acc, al, b0, b1);  // the small parts first
            MmaBf16(acc, am, b0, b1);
            MmaBf16(acc, ah, b0, b1);
          };
          // S = A S + acc over columns 8 nt + 2 tq (+ 1): chunk 2 nt + tq / 2.
          auto update = [&](int nt, const float(&acc)[4]) {
            const int off = (((2 * nt + (tq >> 1)) ^ g) << 2) + 2 * (tq & 1);
            float2* s0 = reinterpret_cast<float2*>(r0 + off);
            float2* s1 = reinterpret_cast<float2*>(r1 + off);
            float2 u0 = *s0, u1 = *s1;
            u0.x = fmaf(A, u0.x, acc[0]);
            u0.y = fmaf(A, u0.y, acc[1]);
            u1.x = fmaf(A, u1.x, acc[2]);
            u1.y = fmaf(A, u1.y, acc[3]);
            *s0 = u0;
            *s1 = u1;
          };
          if constexpr (kEarly) {
            uint32_t b[kNt / 2][4];
#pragma unroll
            for (int p2 = 0; p2 < kNt / 2; ++p2) {
              LdMatrixX4Trans(b[p2], brow + 8 * (nt0 + 2 * p2));
            }
            float acc[kNt][4];
#pragma unroll
            for (int p2 = 0; p2 < kNt / 2; ++p2) {
#pragma unroll
              for (int h2 = 0; h2 < 2; ++h2)
                product(b[p2], h2, acc[2 * p2 + h2]);
            }
            CpAsyncWaitAll();
            __syncthreads();  // the whole tile
#pragma unroll
            for (int c = 0; c < kNt; ++c) update(nt0 + c, acc[c]);
          } else {
#pragma unroll
            for (int p2 = 0; p2 < kNt / 2; ++p2) {
              const int nt = nt0 + 2 * p2;
              uint32_t b[4];
              LdMatrixX4Trans(b, brow + 8 * nt);
#pragma unroll
              for (int h2 = 0; h2 < 2; ++h2) {
                float acc[4];
                product(b, h2, acc);
                update(nt + h2, acc);
              }
            }
          }
          __syncthreads();  // the tile folded
          folded = true;
        }
      }
      if (!folded) {
        CpAsyncWaitAll();
        __syncthreads();  // whole tile, staged ring and sh_w visible
      }
      for (int c0 = 0; !folded && c0 < n; c0 += kFoldChunk) {
        // Coefficients of this chunk (kRows entries per thread: a uniform trip
        // count, every lane takes part in the shuffles).
        // Fused route, the chunk's entries all staged: shared-memory reads.
        const bool smem_chunk = kSmemRing && c0 + kFoldChunk <= kStageJ;
        for (int e = threadIdx.x; e < kFoldChunk * kBv; e += T::kThreads) {
          const int jj = e / kBv, v = e % kBv, j = c0 + jj;
          if (smem_chunk) {
            sh_coef[jj][v] =
                j < n ? sh_w[j] * RingIO<RingT>::Load(ds + j * kBv + v) : 0.f;
          } else if constexpr (kInPlaceCoef) {
            const float w = WeightOfLane(j, w_lo, w_hi);
            // Entries c0 + jj < kStageJ: past n, zeros over unstaged memory.
            ds[j * kBv + v] = j < n ? w * ds[j * kBv + v] : 0.f;
          } else {
            sh_coef[jj][v] =
                j < n ? sh_w[j] * RingIO<RingT>::Load(dptr(j, v)) : 0.f;
          }
        }
        // k_j of the chunk in lane layout (lane = 4 columns).
        float4 kc[kFoldChunk];
#pragma unroll
        for (int jj = 0; jj < kFoldChunk; ++jj) {
          const int j = c0 + jj;
          kc[jj] = j >= n       ? Zero4()
                   : smem_chunk ? LoadKRow4(ks + j * kKs + lane * 4)
                                : LoadKRow4(krow(j) + lane * 4);
        }
        __syncthreads();  // coefficients visible
        for (int v = warp; v < kBv; v += kWarps) {
          float4* sp = reinterpret_cast<float4*>(tile + v * kDim) +
                       (kMmaFold ? lane ^ (v & 7) : lane);
          // The row's coefficients first, all in flight before the first
          // FMA (ptxas otherwise may issue each load just before its use and
          // stall on every one: run 51).
          float c[kFoldChunk];
#pragma unroll
          for (int jj = 0; jj < kFoldChunk; ++jj) {
            // c0 + jj and v are warp-uniform.
            c[jj] = kInPlaceCoef ? ds[(c0 + jj) * kBv + v] : sh_coef[jj][v];
          }
          float4 s = *sp;
          if (c0 == 0) s = Scale4(s, A);
#pragma unroll
          for (int jj = 0; jj < kFoldChunk; ++jj) {
            Fma4(c[jj], kc[jj], &s);
          }
          *sp = s;
        }
        __syncthreads();  // tile updated; sh_coef free for reuse
      }
    }
    if constexpr (kMode == DecodeMode::kFold) {
      CpAsyncWaitAll();
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          const float4 u = *reinterpret_cast<const float4*>(tl + Off(i, m));
          StoreState(S + Off(i, m), u, p.cache, pol);
        }
      }
      return;
    }
  }

  // ================= Packed step on the staged tile =================
  if constexpr (kMode != DecodeMode::kFold) {
    float rq, rk, kq;
    QKNorms<kTpr>(q, k, &rq, &rk, &kq);
    ScaleQK(q, k, rq, rk);
    const float alpha = expf(g);
    CpAsyncWaitAll();  // own chunks (the fold path synchronised already)
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      float4 s[kVec];
      float pq = 0.f, pk = 0.f;
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        s[m] = *reinterpret_cast<const float4*>(tl + Off(i, m));
        if constexpr (kRegFold) {
          if (n > 0) {  // the flush: S = A S + F
            s[m].x = fmaf(A_fold, s[m].x, F[i][m].x);
            s[m].y = fmaf(A_fold, s[m].y, F[i][m].y);
            s[m].z = fmaf(A_fold, s[m].z, F[i][m].z);
            s[m].w = fmaf(A_fold, s[m].w, F[i][m].w);
          }
        }
        pq += Dot4(s[m], q[m]);
        pk += Dot4(s[m], k[m]);
      }
      pq = GroupSum<kTpr>(pq);
      pk = GroupSum<kTpr>(pk);
      // S_t = alpha S + d k^T with d = beta (v - alpha S k);
      // o = S_t q = alpha S q + (k.q) d.
      const float d = beta * (vv[i] - alpha * pk);
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        float4 u;
        u.x = fmaf(d, k[m].x, alpha * s[m].x);
        u.y = fmaf(d, k[m].y, alpha * s[m].y);
        u.z = fmaf(d, k[m].z, alpha * s[m].z);
        u.w = fmaf(d, k[m].w, alpha * s[m].w);
        StoreState(S + Off(i, m), u, p.cache, pol);
      }
      if (t == 0) {
        StoreAny(p.o, o_base + vbase + vloc(i), alpha * pq + kq * d, p.o_fp32);
      }
    }
  }
}

template <class T, DecodeMode kMode, typename RingT, bool kStage,
          bool kTileFirst = false>
cudaError_t LaunchDecodeTile(const DecodeArgs& a, cudaStream_t stream,
                             bool pdl) {
  auto kernel = GdnDecodeKernel<T, kMode, RingT, kStage, kTileFirst>;
  constexpr int kSmem =
      SmemBytes<T, RingT, kStage, kMode == DecodeMode::kReplayCoef>();
  // The register cap of __launch_bounds__ is for T::kMinBlocks CTAs per SM;
  // a cap for more CTAs than the shared memory lets in only costs spills
  // (smemcap, LaunchDecodeForTile). The dynamic part (with the driver's 1 KB
  // per CTA) must fit the SM's 228 KB; the static arrays add up to 4.8 KB.
  static_assert(T::kMinBlocks * (kSmem + 1024) <= 228 * 1024,
                "the tile's kMinBlocks CTAs do not fit an SM's shared memory");
  // Above 48 KB of dynamic shared memory a kernel must opt in (once).
  static const cudaError_t attr =
      kSmem > 48 * 1024
          ? cudaFuncSetAttribute(
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem)
          : cudaSuccess;
  if (attr != cudaSuccess) return attr;
  // A capped launch (a.max_ctas_per_sm) asks for more dynamic shared memory
  // than the kernel uses, so that fewer of its CTAs fit an SM.
  // Caps of four or more need no opt-in above 48 KB (CappedSmemBytes); fewer
  // are not offered (ReplayCtasPerSmFor).
  const int smem =
      a.max_ctas_per_sm > 0 ? CappedSmemBytes(kSmem, a.max_ctas_per_sm) : kSmem;
  if (smem > kSmem && smem > 48 * 1024) return cudaErrorInvalidValue;
  const int64_t blocks = static_cast<int64_t>(a.batch) * a.HV * T::kNvb;
  DecodeArgs k = a;
  k.hv_div = FastDiv(static_cast<uint32_t>(a.HV));
  k.r_div = FastDiv(static_cast<uint32_t>(a.r));
  if (!pdl) {
    GDN_LAUNCH(kernel, static_cast<unsigned>(blocks), T::kThreads, smem, stream,
               k);
    return cudaSuccess;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(T::kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, k);
}

// The tile table (decode.h's DecodeTile). kAuto must be resolved before. The
// kBv4 tile never stages the ring (its d rows are shorter than a 16-byte
// copy for bf16), so it has one copy order too.
template <DecodeMode kMode, typename RingT, bool kStage,
          bool kTileFirst = false>
cudaError_t LaunchDecodeForTile(DecodeTile tile, const DecodeArgs& a,
                                cudaStream_t stream, bool pdl) {
  // The fused route's staged kernels hold the staged k rows and d entries
  // and the static coefficient arrays in shared memory beside the tile: bv64
  // 42-45 KB per block with the driver's 1 KB (bf16 / fp32 ring: five fit an
  // SM's 228 KB), bv128 78-82 KB (two). Their register caps follow those
  // counts instead of the tiles' six and three, which no SM reached and
  // which cost them spills (ptxas: 4-8 bytes at 80 registers; 95-103
  // registers now, none spilled). Run 97 (H100, fp32 ring), at the kAuto
  // lines on the staged bv64 it measured (16/32 B = 128-512, 16/16
  // B = 128-1024): flush steps 0.7-1.2 % and cycles 0.1-0.3 % faster.
  constexpr bool kFusedStaged = kMode == DecodeMode::kReplay && kStage;
  // coef5: the precomputed route's staged fp32 bv64 (16/32 B = 1024 under
  // kAuto) at five CTAs per SM (96 registers, no spills) instead of six (80,
  // spills). That line on the H100: cycle -0.5 % (run 97), -0.4 % (run 101;
  // flush -0.9 %), every other line level.
  constexpr bool kCoef5 = kMode == DecodeMode::kReplayCoef && kStage &&
                          sizeof(RingT) == sizeof(float);
  switch (tile) {
    case DecodeTile::kBv4:
      return LaunchDecodeTile<Tile<1, 1, 1>, kMode, RingT, false>(a, stream,
                                                                  pdl);
    case DecodeTile::kBv8:
      return LaunchDecodeTile<Tile<2, 1, 1>, kMode, RingT, kStage, kTileFirst>(
          a, stream, pdl);
    case DecodeTile::kBv16:
      return LaunchDecodeTile<Tile<2, 2, 1>, kMode, RingT, kStage, kTileFirst>(
          a, stream, pdl);
    case DecodeTile::kBv32:
      return LaunchDecodeTile<Tile<4, 2, 6>, kMode, RingT, kStage, kTileFirst>(
          a, stream, pdl);
    case DecodeTile::kBv64:
      return LaunchDecodeTile<Tile<4, 4, kFusedStaged || kCoef5 ? 5 : 6>, kMode,
                              RingT, kStage, kTileFirst>(a, stream, pdl);
    case DecodeTile::kBv128:
      return LaunchDecodeTile<Tile<8, 4, kFusedStaged ? 2 : 3>, kMode, RingT,
                              kStage, kTileFirst>(a, stream, pdl);
    default:  // kAuto: resolved before
      break;
  }
  return cudaErrorInvalidValue;
}

// The ring-staged or unstaged kernels of a mode.
template <DecodeMode kMode, typename RingT>
cudaError_t LaunchDecodeStaged(DecodeTile tile, bool stage, const DecodeArgs& a,
                               cudaStream_t stream, bool pdl) {
  return stage ? LaunchDecodeForTile<kMode, RingT, true>(tile, a, stream, pdl)
               : LaunchDecodeForTile<kMode, RingT, false>(tile, a, stream, pdl);
}

// The fused route's kernels of a ring dtype: staged (in either copy order,
// ReplayCopyOrder) or unstaged. Only the fused route instantiates the
// tile-first order (the precomputed route is taken at large batch only).
template <typename RingT>
cudaError_t LaunchReplayFused(DecodeTile tile, bool stage, bool tile_first,
                              const DecodeArgs& a, cudaStream_t stream,
                              bool pdl) {
  if (stage && tile_first) {
    return LaunchDecodeForTile<DecodeMode::kReplay, RingT, true, true>(
        tile, a, stream, pdl);
  }
  return LaunchDecodeStaged<DecodeMode::kReplay, RingT>(tile, stage, a, stream,
                                                        pdl);
}

// ReplaySSM coefficient pre-kernel of the precomputed route
// (decode_replay_prekernel.cu): the records DecodeMode::kReplayCoef reads.
// The ring's k rows are bf16 for either ring dtype, so one kernel serves both.
cudaError_t LaunchReplayCoef(const DecodeArgs& a, cudaStream_t stream);

// The precomputed route: the pre-kernel, then the decode kernel reading its
// records. The decode kernel is always a programmatic dependent of the
// pre-kernel, whatever the step's overlap: the pre-kernel is a plain launch
// (it starts after the caller's preceding kernel has finished) and writes
// only the records, which the decode kernel reads after its dependency wait.
// So under DecodeOverlap::kNone the decode kernel streams its state while the
// pre-kernel runs, with the semantics of a plain launch towards the caller's
// kernels (under kLaunch it still waits first).
template <typename RingT>
cudaError_t LaunchReplayCoefDecode(DecodeTile tile, bool stage,
                                   const DecodeArgs& a, cudaStream_t stream) {
  if (const cudaError_t e = LaunchReplayCoef(a, stream); e != cudaSuccess) {
    return e;
  }
  return LaunchDecodeStaged<DecodeMode::kReplayCoef, RingT>(tile, stage, a,
                                                            stream, true);
}

// Entry points of the instantiation files (one per mode / ring dtype, so nvcc
// compiles them in parallel). Fold uses the kBv32 tile, unstaged.
cudaError_t LaunchPackedDecodeKernel(DecodeTile tile, const DecodeArgs& a,
                                     cudaStream_t stream, bool pdl);
cudaError_t LaunchReplayDecodeKernelF32(DecodeTile tile, bool stage,
                                        bool tile_first, const DecodeArgs& a,
                                        cudaStream_t stream, bool pdl);
cudaError_t LaunchReplayDecodeKernelBf16(DecodeTile tile, bool stage,
                                         bool tile_first, const DecodeArgs& a,
                                         cudaStream_t stream, bool pdl);
cudaError_t LaunchReplayFoldKernelF32(const DecodeArgs& a, cudaStream_t stream);
// Pre-kernel + decode with precomputed coefficients (the decode kernel a
// programmatic dependent of the pre-kernel: LaunchReplayCoefDecode).
cudaError_t LaunchReplayCoefDecodeKernelF32(DecodeTile tile, bool stage,
                                            const DecodeArgs& a,
                                            cudaStream_t stream);
cudaError_t LaunchReplayCoefDecodeKernelBf16(DecodeTile tile, bool stage,
                                             const DecodeArgs& a,
                                             cudaStream_t stream);
cudaError_t LaunchReplayFoldKernelBf16(const DecodeArgs& a,
                                       cudaStream_t stream);

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_DECODE_KERNEL_CUH_
