// The GDN decode kernel family (private to gdn/decode*.cu): one templated body
// for the packed step, the ReplaySSM step (history route or flush) and the
// ReplaySSM fold.
//
// Work split. A CTA owns kBv v-rows of one (decode row, value head) over all
// K = 128 columns. A "row group" of kTpr adjacent lanes shares a v-row: lane
// t of the group holds the float4 columns (m * kTpr + t) * 4, m < kVec, so one
// warp instruction reads 32 / kTpr rows x 128 contiguous bytes (full lines).
// Each thread owns kRows v-rows; all its state loads (kRows * kVec 16-byte
// loads) are issued before any use, and the whole tile stays in registers
// until it is written back (packed step, flush) or dropped (history route):
// the state is read exactly once and written at most once.
//
// Per v-row the state's two contractions S.k and S.q are reduced inside the
// row group (log2(kTpr) shuffles), so d_v and o_v need no shared memory. The
// L2 norms of q and k are reduced the same way (every group reduces the full
// vector: K = 128 spread over its kTpr lanes).
//
// ReplaySSM, non-flush step (history route, no state write):
//   y_x[v] = A (C x)[v] + sum_{j<n} c^x_j d_j[v],   c^x_j = w_j (k_j . x)
// The n coefficients per x are computed once per CTA (warp w takes entries
// j = w, w + kWarps, ...; the ring's k_j are read through L2, shared by the r
// value heads and all v-blocks of a key group) and passed through shared
// memory; the d_j[v] terms are spread over the lanes of the row group (entry
// j goes to lane j % kTpr), so they fold into the same group reduction as C x.
// Flush step: the entries are folded into the register tile (S = A C +
// sum_j w_j d_j k_j^T, k_j columns re-read from L1/L2) and the packed step
// follows on the same registers: one state read, one write, no re-walk.
#ifndef ROLLOUT_GDN_DECODE_KERNEL_CUH_
#define ROLLOUT_GDN_DECODE_KERNEL_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "gdn/cuda_util.cuh"
#include "gdn/decode.h"

namespace rollout::gdn::internal {

constexpr int kDim = 128;                        // K = V
constexpr int kMaxRing = 64;                     // largest ring length L
constexpr float kQScale = 0.08838834764831845f;  // 128^-1/2

enum class DecodeMode : int { kPacked = 0, kReplay = 1, kFold = 2 };

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
  void* ring_k = nullptr;
  void* ring_d = nullptr;
  float* ring_g = nullptr;
  int L = 1;
  const int32_t* ring_idx = nullptr;
  const int32_t* write_pos = nullptr;
  const int8_t* force = nullptr;
};

template <int kTpr_, int kRows_, int kWarps_>
struct Tile {
  static constexpr int kTpr = kTpr_;    // lanes per v-row
  static constexpr int kRows = kRows_;  // v-rows per thread
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kGroups = kWarps * (32 / kTpr);  // row groups per CTA
  static constexpr int kBv = kGroups * kRows;           // v-rows per CTA
  static constexpr int kVec = kDim / (4 * kTpr);        // float4 per row-thread
  static constexpr int kNvb = kDim / kBv;               // CTAs per head
  // d_j entries per row held in registers before the reduction (covers
  // n <= 15, i.e. L = 16, without a second pass).
  static constexpr int kPreD = (16 + kTpr - 1) / kTpr;
  // Ring k_j vectors per warp loaded ahead of the coefficient phase.
  static constexpr int kPreJ = (16 + kWarps - 1) / kWarps;
  static_assert(kDim % (4 * kTpr) == 0 && kDim % kBv == 0, "tile shape");
};

// Ring element IO for fp32 and bf16 rings.
template <typename RingT>
struct RingIO;

template <>
struct RingIO<float> {
  static __device__ __forceinline__ float4 Load4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
  }
  static __device__ __forceinline__ void Store4(float* p, float4 v) {
    *reinterpret_cast<float4*>(p) = v;
  }
  static __device__ __forceinline__ float Load(const float* p) { return *p; }
  static __device__ __forceinline__ void Store(float* p, float v) { *p = v; }
};

template <>
struct RingIO<uint16_t> {
  static __device__ __forceinline__ float4 Load4(const uint16_t* p) {
    return LoadBf16x4(p);
  }
  static __device__ __forceinline__ void Store4(uint16_t* p, float4 v) {
    StoreBf16x4(p, v);
  }
  static __device__ __forceinline__ float Load(const uint16_t* p) {
    return Bf16ToFloat(*p);
  }
  static __device__ __forceinline__ void Store(uint16_t* p, float v) {
    *p = FloatToBf16(v);
  }
};

__device__ __forceinline__ float Dot4(float4 a, float4 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

__device__ __forceinline__ float4 Scale4(float4 a, float s) {
  return make_float4(a.x * s, a.y * s, a.z * s, a.w * s);
}

// Ring weights of n entries, computed identically by every warp: lane l gets
// w_l and w_{l+32} (w_j = exp(sum_{j<i<n} g_i), suffix sums: all <= 1) and
// the checkpoint decay A = exp(sum_{i<n} g_i). g_ring: [L] of this head.
__device__ __forceinline__ void RingWeights(const float* g_ring, int n,
                                            int lane, float* w_lo, float* w_hi,
                                            float* A) {
  float x0 = lane < n ? g_ring[lane] : 0.0f;
  float x1 = lane + 32 < n ? g_ring[lane + 32] : 0.0f;
  // Inclusive suffix sums inside each half.
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
  *w_lo = expf(lane == 31 ? total_hi : n0);
  *w_hi = expf(lane == 31 ? 0.0f : n1);
  *A = expf(__shfl_sync(0xffffffffu, x0, 0));
}

// w_j from the lane-distributed weights (j warp-uniform).
__device__ __forceinline__ float WeightOf(int j, float w_lo, float w_hi) {
  return __shfl_sync(0xffffffffu, j < 32 ? w_lo : w_hi, j & 31);
}

template <class T, DecodeMode kMode, typename RingT>
__global__ void __launch_bounds__(T::kThreads)
    GdnDecodeKernel(const DecodeArgs p) {
  constexpr int kTpr = T::kTpr, kRows = T::kRows, kVec = T::kVec;
  constexpr int kGroups = T::kGroups;
  __shared__ float sh_cq[kMaxRing], sh_ck[kMaxRing];

  int bid = blockIdx.x;
  const int vb = bid % T::kNvb;
  bid /= T::kNvb;
  const int h = bid % p.HV;
  const int row = bid / p.HV;
  const int kh = h / p.r;  // repeat_interleave: value head h -> key head h/r
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int t = lane & (kTpr - 1);
  const int v0 = vb * T::kBv + warp * (32 / kTpr) + lane / kTpr;
  auto vrow = [&](int i) { return v0 + i * kGroups; };
  const int64_t o_base = static_cast<int64_t>(row) * p.o_stride + h * kDim;

  const int slot = p.slots[row];
  if (slot < 0) {  // padding row: zeros out, nothing else
    if (kMode != DecodeMode::kFold && t == 0) {
#pragma unroll
      for (int i = 0; i < kRows; ++i)
        StoreAny(p.o, o_base + vrow(i), 0.0f, p.o_fp32);
    }
    return;
  }

  // ---- State tile: every load in flight before any use.
  float* S = p.state + (static_cast<int64_t>(slot) * p.HV + h) * (kDim * kDim);
  float4 s[kRows][kVec];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
#pragma unroll
    for (int m = 0; m < kVec; ++m) {
      s[i][m] = __ldcs(reinterpret_cast<const float4*>(S + vrow(i) * kDim +
                                                       (m * kTpr + t) * 4));
    }
  }

  // ---- Ring cursor of this row.
  int n = 0;
  bool flush = true;
  int rslot = -1;
  if constexpr (kMode != DecodeMode::kPacked) {
    // Independent loads (no chain through ring_idx).
    rslot = p.ring_idx[row];
    const int wp = p.write_pos[row];
    const bool forced = p.force != nullptr && p.force[row] != 0;
    if (rslot >= 0) {
      n = min(max(wp, 0), p.L - 1);  // a corrupt cursor cannot leave the ring
      flush = n == p.L - 1 || forced;
    }
    if constexpr (kMode == DecodeMode::kFold) {
      if (rslot < 0 || n == 0) return;
    }
  }
  const RingT* ring_k = nullptr;  // [L, K] of this key head
  RingT* ring_d = nullptr;        // [L, V] of this value head
  float* ring_g = nullptr;        // [L] of this value head
  if (rslot >= 0) {
    ring_k = static_cast<const RingT*>(p.ring_k) +
             (static_cast<int64_t>(rslot) * p.H + kh) * p.L * kDim;
    ring_d = static_cast<RingT*>(p.ring_d) +
             (static_cast<int64_t>(rslot) * p.HV + h) * p.L * kDim;
    ring_g = p.ring_g + (static_cast<int64_t>(rslot) * p.HV + h) * p.L;
  }

  // ---- Token inputs (row-group layout).
  float4 q[kVec], k[kVec];
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
      vv[i] = Bf16ToFloat(x[(2 * p.H + h) * kDim + vrow(i)]);
    }
    const int64_t ab = static_cast<int64_t>(row) * p.ab_stride + h;
    GateMath(LoadAny(p.a, ab, p.ab_fp32), LoadAny(p.b, ab, p.ab_fp32),
             p.A_log[h], p.dt_bias[h], &g, &beta);
  }

  if constexpr (kMode == DecodeMode::kReplay) {
    if (!flush) {
      // ================= History route (no state write) =================
      // Loads first: ring g, this warp's k_j, this lane's d_j[v], and q, k in
      // lane layout (lane holds columns 4*lane..4*lane+3).
      float w_lo, w_hi, A;
      float4 kj[T::kPreJ];
#pragma unroll
      for (int i = 0; i < T::kPreJ; ++i) {
        const int j = warp + i * T::kWarps;
        kj[i] = j < n ? RingIO<RingT>::Load4(ring_k + j * kDim + lane * 4)
                      : make_float4(0.f, 0.f, 0.f, 0.f);
      }
      float dj[kRows][T::kPreD];
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
#pragma unroll
        for (int m = 0; m < T::kPreD; ++m) {
          const int j = t + m * kTpr;
          dj[i][m] =
              j < n ? RingIO<RingT>::Load(ring_d + j * kDim + vrow(i)) : 0.0f;
        }
      }
      float4 ql = LoadBf16x4(x + kh * kDim + lane * 4);
      float4 kl = LoadBf16x4(x + (p.H + kh) * kDim + lane * 4);
      RingWeights(ring_g, n, lane, &w_lo, &w_hi, &A);
      ql = Scale4(ql, rsqrtf(GroupSum<32>(Dot4(ql, ql)) + kL2Eps) * kQScale);
      kl = Scale4(kl, rsqrtf(GroupSum<32>(Dot4(kl, kl)) + kL2Eps));
      // Coefficients c^q_j, c^k_j -> shared memory.
#pragma unroll
      for (int i = 0; i < T::kPreJ; ++i) {
        const int j = warp + i * T::kWarps;
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
      for (int j = warp + T::kPreJ * T::kWarps; j < n; j += T::kWarps) {
        const float4 kv = RingIO<RingT>::Load4(ring_k + j * kDim + lane * 4);
        const float dq = GroupSum<32>(Dot4(kv, ql));
        const float dk = GroupSum<32>(Dot4(kv, kl));
        const float wj = WeightOf(j, w_lo, w_hi);
        if (lane == 0) {
          sh_cq[j] = wj * dq;
          sh_ck[j] = wj * dk;
        }
      }
      // Row-group layout q, k: norms reduced inside the group.
      float nq = 0.f, nk = 0.f, qk = 0.f;
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        nq += Dot4(q[m], q[m]);
        nk += Dot4(k[m], k[m]);
        qk += Dot4(q[m], k[m]);
      }
      const float rq = rsqrtf(GroupSum<kTpr>(nq) + kL2Eps) * kQScale;
      const float rk = rsqrtf(GroupSum<kTpr>(nk) + kL2Eps);
      const float kq = GroupSum<kTpr>(qk) * rq * rk;
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        q[m] = Scale4(q[m], rq);
        k[m] = Scale4(k[m], rk);
      }
      const float alpha = expf(g);
      __syncthreads();  // coefficients visible
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        float pq = 0.f, pk = 0.f;
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          pq += Dot4(s[i][m], q[m]);
          pk += Dot4(s[i][m], k[m]);
        }
        pq *= A;
        pk *= A;
#pragma unroll
        for (int m = 0; m < T::kPreD; ++m) {
          const int j = t + m * kTpr;
          if (j < n) {
            pq += sh_cq[j] * dj[i][m];
            pk += sh_ck[j] * dj[i][m];
          }
        }
        for (int j = t + T::kPreD * kTpr; j < n; j += kTpr) {
          const float d = RingIO<RingT>::Load(ring_d + j * kDim + vrow(i));
          pq += sh_cq[j] * d;
          pk += sh_ck[j] * d;
        }
        pq = GroupSum<kTpr>(pq);
        pk = GroupSum<kTpr>(pk);
        const float d = beta * (vv[i] - alpha * pk);
        if (t == 0) {
          StoreAny(p.o, o_base + vrow(i), alpha * pq + kq * d, p.o_fp32);
          RingIO<RingT>::Store(ring_d + n * kDim + vrow(i), d);
        }
      }
      // Append k once per key group (first value head, first v-block) and g
      // once per value head.
      if (h % p.r == 0 && vb == 0 && threadIdx.x < kTpr) {
        RingT* kdst = const_cast<RingT*>(ring_k) + n * kDim;
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          RingIO<RingT>::Store4(kdst + (m * kTpr + t) * 4, k[m]);
        }
      }
      if (vb == 0 && threadIdx.x == 0) ring_g[n] = g;
      return;
    }
  }

  // ================= Materialise (flush / fold) =================
  if constexpr (kMode != DecodeMode::kPacked) {
    if (n > 0) {
      float w_lo, w_hi, A;
      RingWeights(ring_g, n, lane, &w_lo, &w_hi, &A);
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
#pragma unroll
        for (int m = 0; m < kVec; ++m) s[i][m] = Scale4(s[i][m], A);
      }
#pragma unroll 2
      for (int j = 0; j < n; ++j) {
        const float wj = WeightOf(j, w_lo, w_hi);
        float4 kc[kVec];
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          kc[m] = RingIO<RingT>::Load4(ring_k + j * kDim + (m * kTpr + t) * 4);
        }
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
          const float c = wj * RingIO<RingT>::Load(ring_d + j * kDim + vrow(i));
#pragma unroll
          for (int m = 0; m < kVec; ++m) {
            s[i][m].x = fmaf(c, kc[m].x, s[i][m].x);
            s[i][m].y = fmaf(c, kc[m].y, s[i][m].y);
            s[i][m].z = fmaf(c, kc[m].z, s[i][m].z);
            s[i][m].w = fmaf(c, kc[m].w, s[i][m].w);
          }
        }
      }
    }
    if constexpr (kMode == DecodeMode::kFold) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
#pragma unroll
        for (int m = 0; m < kVec; ++m) {
          __stcs(reinterpret_cast<float4*>(S + vrow(i) * kDim +
                                           (m * kTpr + t) * 4),
                 s[i][m]);
        }
      }
      return;
    }
  }

  // ================= Packed step on the register tile =================
  if constexpr (kMode != DecodeMode::kFold) {
    float nq = 0.f, nk = 0.f, qk = 0.f;
#pragma unroll
    for (int m = 0; m < kVec; ++m) {
      nq += Dot4(q[m], q[m]);
      nk += Dot4(k[m], k[m]);
      qk += Dot4(q[m], k[m]);
    }
    const float rq = rsqrtf(GroupSum<kTpr>(nq) + kL2Eps) * kQScale;
    const float rk = rsqrtf(GroupSum<kTpr>(nk) + kL2Eps);
    const float kq = GroupSum<kTpr>(qk) * rq * rk;
#pragma unroll
    for (int m = 0; m < kVec; ++m) {
      q[m] = Scale4(q[m], rq);
      k[m] = Scale4(k[m], rk);
    }
    const float alpha = expf(g);
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      float pq = 0.f, pk = 0.f;
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        pq += Dot4(s[i][m], q[m]);
        pk += Dot4(s[i][m], k[m]);
      }
      pq = GroupSum<kTpr>(pq);
      pk = GroupSum<kTpr>(pk);
      // S_t = alpha S + d k^T with d = beta (v - alpha S k);
      // o = S_t q = alpha S q + (k.q) d.
      const float d = beta * (vv[i] - alpha * pk);
#pragma unroll
      for (int m = 0; m < kVec; ++m) {
        float4 u;
        u.x = fmaf(d, k[m].x, alpha * s[i][m].x);
        u.y = fmaf(d, k[m].y, alpha * s[i][m].y);
        u.z = fmaf(d, k[m].z, alpha * s[i][m].z);
        u.w = fmaf(d, k[m].w, alpha * s[i][m].w);
        __stcs(
            reinterpret_cast<float4*>(S + vrow(i) * kDim + (m * kTpr + t) * 4),
            u);
      }
      if (t == 0) {
        StoreAny(p.o, o_base + vrow(i), alpha * pq + kq * d, p.o_fp32);
      }
    }
  }
}

template <class T, DecodeMode kMode, typename RingT>
void LaunchDecodeTile(const DecodeArgs& a, cudaStream_t stream) {
  const int64_t blocks = static_cast<int64_t>(a.batch) * a.HV * T::kNvb;
  GdnDecodeKernel<T, kMode, RingT>
      <<<static_cast<unsigned>(blocks), T::kThreads, 0, stream>>>(a);
}

// The tile table (decode.h's DecodeTile). kAuto must be resolved before.
template <DecodeMode kMode, typename RingT>
void LaunchDecodeForTile(DecodeTile tile, const DecodeArgs& a,
                         cudaStream_t stream) {
  switch (tile) {
    case DecodeTile::kBv4:
      return LaunchDecodeTile<Tile<16, 1, 2>, kMode, RingT>(a, stream);
    case DecodeTile::kBv8:
      return LaunchDecodeTile<Tile<8, 1, 2>, kMode, RingT>(a, stream);
    case DecodeTile::kBv16:
      return LaunchDecodeTile<Tile<8, 1, 4>, kMode, RingT>(a, stream);
    case DecodeTile::kBv32:
      return LaunchDecodeTile<Tile<8, 2, 4>, kMode, RingT>(a, stream);
    case DecodeTile::kBv64:
      return LaunchDecodeTile<Tile<8, 4, 4>, kMode, RingT>(a, stream);
    case DecodeTile::kBv64W8:
      return LaunchDecodeTile<Tile<8, 2, 8>, kMode, RingT>(a, stream);
    case DecodeTile::kBv32T4:
      return LaunchDecodeTile<Tile<4, 1, 4>, kMode, RingT>(a, stream);
    case DecodeTile::kAuto:
      break;
  }
}

// Entry points of the instantiation files (one per mode / ring dtype, so nvcc
// compiles them in parallel). Fold uses the kBv32 tile.
void LaunchPackedDecodeKernel(DecodeTile tile, const DecodeArgs& a,
                              cudaStream_t stream);
void LaunchReplayDecodeKernelF32(DecodeTile tile, const DecodeArgs& a,
                                 cudaStream_t stream);
void LaunchReplayDecodeKernelBf16(DecodeTile tile, const DecodeArgs& a,
                                  cudaStream_t stream);
void LaunchReplayFoldKernelF32(const DecodeArgs& a, cudaStream_t stream);
void LaunchReplayFoldKernelBf16(const DecodeArgs& a, cudaStream_t stream);

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_DECODE_KERNEL_CUH_
