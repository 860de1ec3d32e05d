// The two-pass GDN chunked prefill (gdn/prefill.h): everything of the chunk
// algebra that does not depend on the state (prefill_kernel.cuh: A, its
// forward substitution into W and U~, M .* Q K^T, gam) is computed for every
// chunk at once by the chunk pass; the state pass then walks each sequence's
// chunks in order and does only the state products per chunk. The matrix
// products of both run on tensor cores in 3xTF32 (mma_tf32.cuh).
//
// Why two passes: the single-pass kernel (prefill.cu) spends most of a chunk
// on state-independent work, recomputed by each of a head's four v-block CTAs,
// and on a 64-step forward substitution with a barrier per step, all on the
// sequence's serial path. Here that work runs once per (chunk, value head),
// in parallel over the chunks, and the substitution needs no barrier (each
// thread solves its own column in registers).
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "gdn/mma_tf32.cuh"
#include "gdn/prefill.h"
#include "gdn/prefill_chunk_map.h"
#include "gdn/prefill_kernel.cuh"

namespace rollout::gdn::internal {
namespace {

// ---- Chunk pass: one CTA per (chunk, key head), looping over the key
// head's r value heads (the Gram products k.k and q.k are shared by them;
// they run on tensor cores in 3xTF32, mma_tf32.cuh).
constexpr int kLdQK = kPDim + 4;  // q, k rows: fragment reads on 4 g + t
constexpr int kLdA4 = kPC + 4;    // A rows as float4 (broadcast reads)
constexpr int kChunkSmemFloats = 2 * kPC * kLdQK + kPC * kLdA4 + 3 * kPC;
constexpr size_t kChunkSmemBytes = kChunkSmemFloats * sizeof(float);

__global__ void __launch_bounds__(kPThreads, 2)
    PrefillChunkKernel(const PrefillArgs p) {
  GDN_DYNAMIC_SHARED(float, sm);
  float* Qs = sm;                 // [kPC][kLdQK] q, then a value head's v
  float* Ks = Qs + kPC * kLdQK;   // [kPC][kLdQK] k
  float* As = Ks + kPC * kLdQK;   // [kPC][kLdA4] A
  float* gam = As + kPC * kLdA4;  // [kPC]
  float* bet = gam + kPC;         // [kPC] beta
  float* wsc = bet + kPC;         // [kPC] beta e^gam (W's right-hand side)

  const int tid = threadIdx.x, kh = blockIdx.y;
  // Tokens past num_tokens have no scratch rows: not processed.
  const ChunkSpan span = ChunkSpanOf(p.cu, p.num_seqs, p.num_tokens,
                                     static_cast<int>(blockIdx.x), kPC);
  // No chunk here (prefill_chunk_map.h), or a padding sequence.
  if (span.len == 0 || p.slots[span.seq] < 0) return;
  const int64_t tok0 = span.tok0;
  const int c = span.len;

  LoadChunkQK(p, tok0, c, kh, Qs, Ks, kLdQK);
  __syncthreads();
  // Grams K K^T and Q K^T [64, 64]: warp w takes rows m0 .. m0 + 15 and
  // columns n0 .. n0 + 31; its lane holds (C fragments) rows m0 + g (+ 8)
  // and columns n0 + 8 n + 2 t (+ 1).
  const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
  float kk[4][4] = {}, qk[4][4] = {};
#pragma unroll 4
  for (int c0 = 0; c0 < kPDim; c0 += 8) {
    const FragA ak = LoadFragA(Ks + m0 * kLdQK + c0, kLdQK, 1);
    const FragA aq = LoadFragA(Qs + m0 * kLdQK + c0, kLdQK, 1);
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      const FragB b = LoadFragB(Ks + (n0 + 8 * n) * kLdQK + c0, 1, kLdQK);
      Mma3xTf32(kk[n], ak, b);
      Mma3xTf32(qk[n], aq, b);
    }
  }

  for (int e = 0; e < p.r; ++e) {
    const int h = kh * p.r + e;
    __syncthreads();  // Qs, As, gam free (Gram, or the previous value head)
    // Gates and their cumulative sum (warp 0: rows lane and lane + 32).
    if (tid < 32) {
      float g0 = 0.f, g1 = 0.f, b0 = 0.f, b1 = 0.f;
      const float A_log = p.A_log[h], dt_bias = p.dt_bias[h];
      if (lane < c) {
        const int64_t ab = (tok0 + lane) * p.ab_stride + h;
        GateMath(LoadAny(p.a, ab, p.ab_fp32), LoadAny(p.b, ab, p.ab_fp32),
                 A_log, dt_bias, &g0, &b0);
      }
      if (lane + 32 < c) {
        const int64_t ab = (tok0 + lane + 32) * p.ab_stride + h;
        GateMath(LoadAny(p.a, ab, p.ab_fp32), LoadAny(p.b, ab, p.ab_fp32),
                 A_log, dt_bias, &g1, &b1);
      }
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        const float y0 = __shfl_up_sync(0xffffffffu, g0, off);
        const float y1 = __shfl_up_sync(0xffffffffu, g1, off);
        if (lane >= off) g0 += y0, g1 += y1;
      }
      g1 += __shfl_sync(0xffffffffu, g0, 31);
      gam[lane] = g0;
      gam[lane + 32] = g1;
      bet[lane] = b0;
      bet[lane + 32] = b1;
      wsc[lane] = b0 * expf(g0);
      wsc[lane + 32] = b1 * expf(g1);
    }
    // This value head's v rows into Qs (q is only needed by the Gram).
    for (int e4 = tid; e4 < kPC * kPDim / 4; e4 += kPThreads) {
      const int i = e4 / (kPDim / 4), c4 = (e4 % (kPDim / 4)) * 4;
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (i < c) {
        v = LoadBf16x4(p.qkv + (tok0 + i) * p.qkv_stride +
                       (2 * p.H + h) * kPDim + c4);
      }
      *reinterpret_cast<float4*>(Qs + i * kLdQK + c4) = v;
    }
    __syncthreads();
    // A into shared memory; M .* Q K^T and gam into the scratch.
#pragma unroll
    for (int n = 0; n < 4; ++n) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = m0 + g + 8 * (r >> 1), j = n0 + 8 * n + 2 * t + (r & 1);
        const float decay = expf(gam[i] - gam[j]);  // used only for j <= i
        As[i * kLdA4 + j] = (j < i && i < c) ? bet[i] * decay * kk[n][r] : 0.0f;
        if (i < c) {
          p.pm[((tok0 + i) * p.HV + h) * kPC + j] =
              j <= i ? decay * qk[n][r] : 0.0f;
        }
      }
    }
    if (tid < c) p.gam[(tok0 + tid) * p.HV + h] = gam[tid];
    __syncthreads();
    // Forward substitution (I + A) y = x for one column per thread: columns
    // of W (threads 0-127, x = beta e^gam k) and of U~ (128-255, x = beta v).
    // Rows past c have x = 0 and A = 0, so y = 0 there.
    const bool is_w = tid < kPDim;
    const int col = tid & (kPDim - 1);
    const float* X = (is_w ? Ks : Qs) + col;  // row stride kLdQK
    const float* xs = is_w ? wsc : bet;
    float y[kPC];
#pragma unroll
    for (int i = 0; i < kPC; ++i) {
      const float4* ai = reinterpret_cast<const float4*>(As + i * kLdA4);
      float acc[4] = {xs[i] * X[i * kLdQK], 0.f, 0.f, 0.f};
#pragma unroll
      for (int j4 = 0; j4 < i / 4; ++j4) {
        const float4 a = LdShared4(ai + j4);
        acc[0] = fmaf(-a.x, y[4 * j4], acc[0]);
        acc[1] = fmaf(-a.y, y[4 * j4 + 1], acc[1]);
        acc[2] = fmaf(-a.z, y[4 * j4 + 2], acc[2]);
        acc[3] = fmaf(-a.w, y[4 * j4 + 3], acc[3]);
      }
#pragma unroll
      for (int j = i / 4 * 4; j < i; ++j) {
        acc[j % 4] = fmaf(-As[i * kLdA4 + j], y[j], acc[j % 4]);
      }
      y[i] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    float* dst = (is_w ? p.w : p.u) + (tok0 * p.HV + h) * kPDim + col;
    const int64_t row = static_cast<int64_t>(p.HV) * kPDim;
#pragma unroll
    for (int i = 0; i < kPC; ++i) {
      if (i < c) dst[i * row] = y[i];
    }
  }
}

// ---- State pass: one CTA per (v-block, value head, sequence), walking the
// sequence's chunks with its state block in shared memory. Per chunk, on
// tensor cores in 3xTF32 (prefill_kernel.cuh):
//   [e^gam Q; W] S0^T   one product over the stacked rows   [2 kPC, kBv]
//   U = U~ - W S0^T,  O = e^gam Q S0^T + (M .* Q K^T) U      (warps 0-3)
//   S = e^gam_c S0 + U^T (e^(gam_c - gam) K)                 (warps 4-7)
// k waits in registers (raw bf16) until [Q; W] is free, so two CTAs fit an
// SM. Row strides are chosen so that every fragment read of a warp hits 32
// distinct banks (4 g + t or 8 t + g).
// kBv v-rows per CTA: 32, or 16 where 32 leaves SMs without a second CTA
// (StateTileRows).
constexpr int kLdQW = kPDim + 4;  // [Q; W] and S rows
constexpr int kLdP = kPC + 4;     // M .* Q K^T rows
constexpr int kLdKd = kPDim + 8;  // scaled k rows (read as B)
template <int kBv>
struct StateTile {
  static constexpr int kLdU = kBv + 8;  // U rows (read as A^T and as B)
  static constexpr int kMt = kBv / 16;  // 16-row tiles of the state block
  static constexpr size_t kSmemBytes =
      (2 * kPC * kLdQW + kBv * kLdQW + kPC * kLdP + kPC * kLdU + 2 * kPC + 4) *
      sizeof(float);
  static_assert(kBv == 16 || kBv == 32, "state tile rows");
  static_assert(kPC * kLdKd <= 2 * kPC * kLdQW, "k rows reuse [Q; W]");
  static_assert(2 * (kSmemBytes + 1024) <= 228 * 1024, "two CTAs per SM");
};

// An output element as fp32 or bf16.
__device__ __forceinline__ void Put(float* o, float v) { *o = v; }
__device__ __forceinline__ void Put(uint16_t* o, float v) {
  *o = FloatToBf16(v);
}

template <int kBv>
__global__ void __launch_bounds__(kPThreads, 2)
    PrefillStateKernel(const PrefillArgs p) {
  constexpr int kLdU = StateTile<kBv>::kLdU, kMt = StateTile<kBv>::kMt;
  GDN_DYNAMIC_SHARED(float, sm);
  float* QW = sm;                    // [2 kPC][kLdQW]; later k [kPC][kLdKd]
  float* Ss = QW + 2 * kPC * kLdQW;  // [kBv][kLdQW] state block
  float* Ps = Ss + kBv * kLdQW;      // [kPC][kLdP] M .* Q K^T
  float* Us = Ps + kPC * kLdP;       // [kPC][kLdU] U~, then U
  float* eq = Us + kPC * kLdU;       // [kPC] e^gam (q rows' scale)
  float* ek = eq + kPC;  // [kPC + 1] e^(gam_c - gam) (k rows'), then e^gam_c

  const int vb = blockIdx.x, h = blockIdx.y, seq = blockIdx.z;
  const int kh = h / p.r, tid = threadIdx.x;
  const int warp = tid >> 5, g = (tid & 31) >> 2, t = tid & 3;
  const int slot = p.slots[seq];
  const int64_t start = p.cu[seq];
  if (slot < 0 || start < 0) return;  // padding, or a corrupt cu_seqlens
  const int64_t end = min(static_cast<int64_t>(p.cu[seq + 1]), p.num_tokens);
  const int64_t T = end - start;
  float* S = p.state + (static_cast<int64_t>(slot) * p.HV + h) * kPDim * kPDim +
             static_cast<int64_t>(vb) * kBv * kPDim;  // [kBv, K] block
  LoadStateBlock(S, kBv, p.has_init == nullptr || p.has_init[seq] != 0, Ss,
                 kLdQW);

  for (int64_t t0 = 0; t0 < T; t0 += kPC) {
    const int c = static_cast<int>(min(static_cast<int64_t>(kPC), T - t0));
    const int64_t tok0 = start + t0;
    __syncthreads();  // the previous chunk is done with every tile
    // Every load of the chunk at once: q, k rows (registers, raw); W, U~,
    // M .* Q K^T (straight into their tiles); gam of each row and of the
    // chunk's last row, as the row scales e^gam and e^(gam_c - gam). Each
    // thread walks its rows with one pointer per array (kPThreads / row width
    // rows apart).
    uint2 qr[kRowsPerWarp], kr[kRowsPerWarp];
    ChunkRowsRaw(p, tok0, c, kh, qr, kr);
    const int64_t step = static_cast<int64_t>(p.HV) * kPDim;  // token stride
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    {
      constexpr int kRows = kPThreads / (kPDim / 4);  // rows per iteration
      const int i0 = tid / (kPDim / 4), c4 = tid % (kPDim / 4) * 4;
      const float* w = p.w + ((tok0 + i0) * p.HV + h) * kPDim + c4;
#pragma unroll
      for (int it = 0; it < kPC / kRows; ++it, w += kRows * step) {
        const int i = i0 + it * kRows;
        *reinterpret_cast<float4*>(QW + (kPC + i) * kLdQW + c4) =
            i < c ? *reinterpret_cast<const float4*>(w) : zero;
      }
    }
    {
      constexpr int kRows = kPThreads / kBv;
      const int i0 = tid / kBv, v = tid % kBv;
      const float* u = p.u + ((tok0 + i0) * p.HV + h) * kPDim + vb * kBv + v;
#pragma unroll
      for (int it = 0; it < kPC / kRows; ++it, u += kRows * step) {
        const int i = i0 + it * kRows;
        Us[i * kLdU + v] = i < c ? *u : 0.f;
      }
    }
    {
      constexpr int kRows = kPThreads / (kPC / 4);
      const int i0 = tid / (kPC / 4), j4 = tid % (kPC / 4) * 4;
      const float* pm = p.pm + ((tok0 + i0) * p.HV + h) * kPC + j4;
#pragma unroll
      for (int it = 0; it < kPC / kRows; ++it, pm += kRows * (step / 2)) {
        const int i = i0 + it * kRows;
        *reinterpret_cast<float4*>(Ps + i * kLdP + j4) =
            i < c ? *reinterpret_cast<const float4*>(pm) : zero;
      }
    }
    if (tid < kPC) {
      const float* g = p.gam + tok0 * p.HV + h;
      const float gi = tid < c ? g[tid * p.HV] : 0.f;
      const float gc = g[(c - 1) * p.HV];
      eq[tid] = expf(gi);
      ek[tid] = expf(gc - gi);
      if (tid == c - 1) ek[kPC] = expf(gc);  // e^gam_c, after the last row
    }
    __syncthreads();  // eq, ek
    // q normalised (times K^-1/2) and e^gam into the first rows of [Q; W];
    // k keeps its raw bf16 and its norm scale.
    float rk[kRowsPerWarp];
    {
      float4 q[kRowsPerWarp];
#pragma unroll
      for (int it = 0; it < kRowsPerWarp; ++it) {
        q[it] = NormalizedQ(qr[it]);
        rk[it] = RowNormScale(Bf16x4ToFloat4(kr[it]));
      }
      StoreChunkRows(q, QW, kLdQW, [&](int i) { return eq[i]; });
    }
    __syncthreads();

    // ---- [e^gam Q; W] S0^T: warp w takes rows 16 w .. 16 w + 15, all kBv
    // columns (n-tiles of 8).
    float acc[kBv / 8][4] = {};
#pragma unroll 4
    for (int kk = 0; kk < kPDim; kk += 8) {
      const FragA a = LoadFragA(QW + 16 * warp * kLdQW + kk, kLdQW, 1);
#pragma unroll
      for (int n = 0; n < kBv / 8; ++n) {
        Mma3xTf32(acc[n], a, LoadFragB(Ss + 8 * n * kLdQW + kk, 1, kLdQW));
      }
    }
    if (warp >= 4) {  // W rows: U = U~ - W S0^T
      const int j = 16 * (warp - 4) + g;
#pragma unroll
      for (int n = 0; n < kBv / 8; ++n) {
        float* u0 = Us + j * kLdU + 8 * n + 2 * t;
        float* u1 = u0 + 8 * kLdU;
        u0[0] -= acc[n][0], u0[1] -= acc[n][1];
        u1[0] -= acc[n][2], u1[1] -= acc[n][3];
      }
    }
    __syncthreads();  // U complete; [Q; W] free
    {
      float4 k[kRowsPerWarp];
#pragma unroll
      for (int it = 0; it < kRowsPerWarp; ++it) {
        k[it] = Scale4(Bf16x4ToFloat4(kr[it]), rk[it]);
      }
      StoreChunkRows(k, QW, kLdKd, [&](int i) { return ek[i]; });
    }
    __syncthreads();  // the k rows
    if (warp < 4) {
      // ---- O = e^gam Q S0^T + (M .* Q K^T) U, rows 16 w .. 16 w + 15.
#pragma unroll 4
      for (int kk = 0; kk < kPC; kk += 8) {
        const FragA a = LoadFragA(Ps + 16 * warp * kLdP + kk, kLdP, 1);
#pragma unroll
        for (int n = 0; n < kBv / 8; ++n) {
          Mma3xTf32(acc[n], a, LoadFragB(Us + kk * kLdU + 8 * n, kLdU, 1));
        }
      }
      // Rows i and i + 8 of the output, columns 8 n + 2 t (+ 1) of the
      // block; one branch on the output type for all of them.
      const int i = 16 * warp + g;
      const int64_t o0 = (tok0 + i) * p.o_stride + h * kPDim + vb * kBv + 2 * t;
      const int64_t o1 = o0 + 8 * p.o_stride;
      auto store = [&](auto* o) {
#pragma unroll
        for (int n = 0; n < kBv / 8; ++n) {
          if (i < c) {
            Put(o + o0 + 8 * n, acc[n][0]);
            Put(o + o0 + 8 * n + 1, acc[n][1]);
          }
          if (i + 8 < c) {
            Put(o + o1 + 8 * n, acc[n][2]);
            Put(o + o1 + 8 * n + 1, acc[n][3]);
          }
        }
      };
      if (p.o_fp32) {
        store(static_cast<float*>(p.o));
      } else {
        store(static_cast<uint16_t*>(p.o));
      }
    } else {
      // ---- S = e^gam_c S0 + U^T (e^(gam_c - gam) K): warp w takes the
      // columns 32 (w - 4) .. + 31 of every 16-row tile of the block.
      const float* Kd = QW;
      const int nb = 4 * (warp - 4);
      float su[kMt][4][4] = {};
#pragma unroll 4
      for (int kk = 0; kk < kPC; kk += 8) {
        FragA a[kMt];
#pragma unroll
        for (int m = 0; m < kMt; ++m) {
          a[m] = LoadFragA(Us + kk * kLdU + 16 * m, 1, kLdU);
        }
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          const FragB b = LoadFragB(Kd + kk * kLdKd + 8 * (nb + n), kLdKd, 1);
#pragma unroll
          for (int m = 0; m < kMt; ++m) Mma3xTf32(su[m][n], a[m], b);
        }
      }
      const float ec = ek[kPC];
#pragma unroll
      for (int m = 0; m < kMt; ++m) {
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          float* s0 = Ss + (16 * m + g) * kLdQW + 8 * (nb + n) + 2 * t;
          float* s1 = s0 + 8 * kLdQW;
          s0[0] = fmaf(ec, s0[0], su[m][n][0]);
          s0[1] = fmaf(ec, s0[1], su[m][n][1]);
          s1[0] = fmaf(ec, s1[0], su[m][n][2]);
          s1[1] = fmaf(ec, s1[1], su[m][n][3]);
        }
      }
    }
  }
  __syncthreads();
  StoreStateBlock(Ss, kLdQW, kBv, S);
}

// Opt a kernel in to its dynamic shared memory (once per kernel).
template <typename Kernel>
cudaError_t OptIn(Kernel kernel, size_t bytes, std::once_flag* once,
                  cudaError_t* err) {
  std::call_once(*once, [&] {
    *err = cudaFuncSetAttribute(kernel,
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(bytes));
  });
  return *err;
}

template <int kBv>
cudaError_t LaunchStatePass(const PrefillArgs& a, cudaStream_t stream) {
  static std::once_flag once;
  static cudaError_t err = cudaSuccess;
  if (cudaError_t e = OptIn(PrefillStateKernel<kBv>, StateTile<kBv>::kSmemBytes,
                            &once, &err);
      e != cudaSuccess) {
    return e;
  }
  GDN_LAUNCH(PrefillStateKernel<kBv>, dim3(kPDim / kBv, a.HV, a.num_seqs),
             kPThreads, StateTile<kBv>::kSmemBytes, stream, a);
  return cudaSuccess;
}

// The state pass's v-rows per CTA on num_sms SMs: 16-row blocks only where
// even they give at most one CTA per SM; there the state pass (a chain of
// dependent phases per chunk) gains from twice the CTAs. H200, one
// 4096-token sequence: 16/16 heads 655 us (16 rows) vs 835 (32 rows); 16/32
// heads 979 vs 905.
int StateTileRows(int num_seqs, int num_v_heads, int num_sms) {
  const int64_t ctas16 = static_cast<int64_t>(num_seqs) * num_v_heads * 8;
  return ctas16 <= num_sms ? 16 : 32;
}

}  // namespace

cudaError_t LaunchPrefillTwoPass(PrefillArgs a, float* scratch,
                                 cudaStream_t stream) {
  // Scratch layout, by token: W rows, U~ rows, masked Q K^T rows, gam.
  static_assert(
      GdnPrefillParams::kScratchFloatsPerTokenHead == 2 * kPDim + kPC + 1,
      "scratch layout");
  const int64_t rows = a.num_tokens * a.HV;  // (token, value head) pairs
  a.w = scratch;
  a.u = a.w + rows * kPDim;
  a.pm = a.u + rows * kPDim;
  a.gam = a.pm + rows * kPC;
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e =
          cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      e != cudaSuccess) {
    return e;
  }
  static std::once_flag chunk_once;
  static cudaError_t chunk_err = cudaSuccess;
  if (cudaError_t e =
          OptIn(PrefillChunkKernel, kChunkSmemBytes, &chunk_once, &chunk_err);
      e != cudaSuccess) {
    return e;
  }
  const int64_t chunk_ids = ChunkIdCount(a.num_tokens, a.num_seqs, kPC);
  GDN_LAUNCH(PrefillChunkKernel, dim3(static_cast<unsigned>(chunk_ids), a.H),
             kPThreads, kChunkSmemBytes, stream, a);
  return StateTileRows(a.num_seqs, a.HV, sms) == 16
             ? LaunchStatePass<16>(a, stream)
             : LaunchStatePass<32>(a, stream);
}

}  // namespace rollout::gdn::internal
