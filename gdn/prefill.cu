// GDN chunked prefill (WY / UT form), fp32 on CUDA cores: the launcher, its
// params check and the single-pass kernel (the route without scratch; the
// two-pass route is prefill_two_pass.cu). The chunk algebra is in
// prefill_kernel.cuh.
//
// Single pass: a CTA owns (sequence, value head h, block of kBv = 32 v-rows)
// and walks the sequence's chunks. Every product of the chunk algebra is
// row-separable in v except those built from k, beta and g alone (A, W),
// which each CTA recomputes for its block (4 CTAs per head). S lives in
// shared memory across chunks; every small product is a register-tiled dot
// over shared-memory rows padded to an odd stride (no bank conflicts). Rows
// past c are zero, so the tiles never branch on c.
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "gdn/prefill.h"
#include "gdn/prefill_kernel.cuh"

namespace rollout::gdn {
namespace {

using internal::Bf16ToFloat;
using internal::LoadAny;
using internal::PrefillArgs;
using internal::StoreAny;

constexpr int kDim = internal::kPDim;  // K = V
constexpr int kC = internal::kPC;      // chunk
constexpr int kBv = 32;                // v-rows per CTA
constexpr int kThreads = internal::kPThreads;
constexpr int kLdK = kDim + 1;  // padded row stride of [*, 128] tiles
constexpr int kLdA = kC + 1;    // [64, 64] tiles
constexpr int kLdU = kBv + 1;   // [64, 32] tiles

// acc[ii][jj] = sum_x A[(ti + ii*MT)*lda + x*sa] * B[(tj + jj*NT)*ldb + x*sb]
// with (ti, tj) = (tid / NT, tid % NT): rows of a thread are MT apart and its
// columns NT apart, so a warp's B reads hit consecutive rows (odd strides:
// distinct banks) and its A reads are broadcasts.
template <int MT, int NT, int TM, int TN>
__device__ __forceinline__ void TileDot(const float* A, int lda, int sa,
                                        const float* B, int ldb, int sb, int kd,
                                        float (&acc)[TM][TN]) {
  static_assert(MT * NT == kThreads, "tile covers the CTA");
  const int ti = threadIdx.x / NT, tj = threadIdx.x % NT;
#pragma unroll
  for (int ii = 0; ii < TM; ++ii) {
#pragma unroll
    for (int jj = 0; jj < TN; ++jj) acc[ii][jj] = 0.0f;
  }
#pragma unroll 4
  for (int x = 0; x < kd; ++x) {
    float a[TM], b[TN];
#pragma unroll
    for (int ii = 0; ii < TM; ++ii) a[ii] = A[(ti + ii * MT) * lda + x * sa];
#pragma unroll
    for (int jj = 0; jj < TN; ++jj) b[jj] = B[(tj + jj * NT) * ldb + x * sb];
#pragma unroll
    for (int ii = 0; ii < TM; ++ii) {
#pragma unroll
      for (int jj = 0; jj < TN; ++jj)
        acc[ii][jj] = fmaf(a[ii], b[jj], acc[ii][jj]);
    }
  }
}

// Shared-memory layout (floats).
constexpr int kOffK = 0;                   // Ks [kC][kLdK]
constexpr int kOffQ = kOffK + kC * kLdK;   // Qs [kC][kLdK]
constexpr int kOffW = kOffQ + kC * kLdK;   // Ws [kC][kLdK]
constexpr int kOffS = kOffW + kC * kLdK;   // Ss [kBv][kLdK]
constexpr int kOffA = kOffS + kBv * kLdK;  // As [kC][kLdA]
constexpr int kOffU = kOffA + kC * kLdA;   // Us [kC][kLdU]
constexpr int kOffUd = kOffU + kC * kLdU;  // Ud [kC][kLdU]
constexpr int kOffG = kOffUd + kC * kLdU;  // gam [kC]
constexpr int kOffB = kOffG + kC;          // beta [kC]
constexpr int kSmemFloats = kOffB + kC;
constexpr size_t kSmemBytes = kSmemFloats * sizeof(float);

__global__ void __launch_bounds__(kThreads)
    ChunkedPrefillKernel(const PrefillArgs p) {
  GDN_DYNAMIC_SHARED(float, sm);
  float* Ks = sm + kOffK;
  float* Qs = sm + kOffQ;
  float* Ws = sm + kOffW;
  float* Ss = sm + kOffS;
  float* As = sm + kOffA;
  float* Us = sm + kOffU;
  float* Ud = sm + kOffUd;
  float* gam = sm + kOffG;
  float* bet = sm + kOffB;

  const int vb = blockIdx.x, h = blockIdx.y, seq = blockIdx.z;
  const int kh = h / p.r;
  const int tid = threadIdx.x;
  const int slot = p.slots[seq];
  if (slot < 0) return;
  const int64_t start = p.cu[seq];
  const int T = p.cu[seq + 1] - start;
  float* S = p.state + (static_cast<int64_t>(slot) * p.HV + h) * kDim * kDim +
             static_cast<int64_t>(vb) * kBv * kDim;  // [kBv, K] block
  const bool init = p.has_init == nullptr || p.has_init[seq] != 0;
  internal::LoadStateBlock(S, kBv, init, Ss, kLdK);
  const float A_log = p.A_log[h], dt_bias = p.dt_bias[h];

  for (int t0 = 0; t0 < T; t0 += kC) {
    const int c = min(kC, T - t0);
    const int64_t tok0 = start + t0;
    // ---- Load: normalised q, k rows; raw v block; gates.
    internal::LoadChunkQK(p, tok0, c, kh, Qs, Ks, kLdK);
    for (int e = tid; e < kC * kBv; e += kThreads) {
      const int i = e / kBv, v = e % kBv;
      Us[i * kLdU + v] =
          i < c ? Bf16ToFloat(p.qkv[(tok0 + i) * p.qkv_stride +
                                    (2 * p.H + h) * kDim + vb * kBv + v])
                : 0.0f;
    }
    if (tid < kC) {
      float g = 0.0f, beta = 0.0f;
      if (tid < c) {
        const int64_t ab = (tok0 + tid) * p.ab_stride + h;
        internal::GateMath(LoadAny(p.a, ab, p.ab_fp32),
                           LoadAny(p.b, ab, p.ab_fp32), A_log, dt_bias, &g,
                           &beta);
      }
      gam[tid] = g;  // cumulated below
      bet[tid] = beta;
    }
    __syncthreads();
    if (tid == 0) {
      float run = 0.0f;
      for (int i = 0; i < kC; ++i) {  // rows >= c carry g = 0: gam stays
        run += gam[i];
        gam[i] = run;
      }
    }
    __syncthreads();

    // ---- A = strictly lower beta_i e^(gam_i-gam_j) (k_i.k_j).
    {
      float acc[4][4];
      TileDot<16, 16, 4, 4>(Ks, kLdK, 1, Ks, kLdK, 1, kDim, acc);
      const int ti = tid / 16, tj = tid % 16;
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int i = ti + ii * 16, j = tj + jj * 16;
          As[i * kLdA + j] = (j < i && i < c)
                                 ? bet[i] * expf(gam[i] - gam[j]) * acc[ii][jj]
                                 : 0.0f;
        }
      }
    }
    __syncthreads();

    // ---- Forward substitution: rows of W (K columns) and U~ (kBv columns).
    for (int i = 0; i < c; ++i) {
      if (tid < kDim + kBv) {
        const float* ai = As + i * kLdA;
        float acc0 = 0.0f, acc1 = 0.0f;
        if (tid < kDim) {
          int j = 0;
          for (; j + 1 < i; j += 2) {
            acc0 = fmaf(ai[j], Ws[j * kLdK + tid], acc0);
            acc1 = fmaf(ai[j + 1], Ws[(j + 1) * kLdK + tid], acc1);
          }
          if (j < i) acc0 = fmaf(ai[j], Ws[j * kLdK + tid], acc0);
          Ws[i * kLdK + tid] =
              bet[i] * expf(gam[i]) * Ks[i * kLdK + tid] - (acc0 + acc1);
        } else {
          const int v = tid - kDim;
          int j = 0;
          for (; j + 1 < i; j += 2) {
            acc0 = fmaf(ai[j], Us[j * kLdU + v], acc0);
            acc1 = fmaf(ai[j + 1], Us[(j + 1) * kLdU + v], acc1);
          }
          if (j < i) acc0 = fmaf(ai[j], Us[j * kLdU + v], acc0);
          Us[i * kLdU + v] = bet[i] * Us[i * kLdU + v] - (acc0 + acc1);
        }
      }
      __syncthreads();
    }
    for (int e = c * kDim + tid; e < kC * kDim; e += kThreads) {
      Ws[(e / kDim) * kLdK + e % kDim] = 0.0f;  // rows >= c
    }
    __syncthreads();

    // ---- U = U~ - W S0^T.
    {
      float acc[4][2];
      TileDot<16, 16, 4, 2>(Ws, kLdK, 1, Ss, kLdK, 1, kDim, acc);
      const int ti = tid / 16, tj = tid % 16;
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
          Us[(ti + ii * 16) * kLdU + tj + jj * 16] -= acc[ii][jj];
        }
      }
    }
    // ---- P = M .* Q K^T (into As; A is no longer needed).
    {
      float acc[4][4];
      TileDot<16, 16, 4, 4>(Qs, kLdK, 1, Ks, kLdK, 1, kDim, acc);
      __syncthreads();  // every thread done reading As (substitution) / Us
      const int ti = tid / 16, tj = tid % 16;
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int i = ti + ii * 16, j = tj + jj * 16;
          As[i * kLdA + j] =
              (j <= i && i < c) ? expf(gam[i] - gam[j]) * acc[ii][jj] : 0.0f;
        }
      }
    }
    __syncthreads();

    // ---- O = e^gam (Q S0^T) + P U; and Ud = e^(gam_c - gam) U.
    {
      float acc1[4][2], acc2[4][2];
      TileDot<16, 16, 4, 2>(Qs, kLdK, 1, Ss, kLdK, 1, kDim, acc1);
      TileDot<16, 16, 4, 2>(As, kLdA, 1, Us, 1, kLdU, kC, acc2);
      const int ti = tid / 16, tj = tid % 16;
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
        const int i = ti + ii * 16;
        if (i >= c) continue;
        const float ei = expf(gam[i]);
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
          const int v = tj + jj * 16;
          StoreAny(p.o, (tok0 + i) * p.o_stride + h * kDim + vb * kBv + v,
                   fmaf(ei, acc1[ii][jj], acc2[ii][jj]), p.o_fp32);
        }
      }
      const float gc = gam[c - 1];
      for (int e = tid; e < kC * kBv; e += kThreads) {
        const int j = e / kBv, v = e % kBv;
        Ud[j * kLdU + v] = j < c ? expf(gc - gam[j]) * Us[j * kLdU + v] : 0.0f;
      }
    }
    __syncthreads();

    // ---- S = e^gam_c S0 + Ud^T K.
    {
      float acc[4][4];
      TileDot<8, 32, 4, 4>(Ud, 1, kLdU, Ks, 1, kLdK, kC, acc);
      const float ec = expf(gam[c - 1]);
      const int ti = tid / 32, tj = tid % 32;
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          float* s = Ss + (ti + ii * 8) * kLdK + tj + jj * 32;
          *s = fmaf(ec, *s, acc[ii][jj]);
        }
      }
    }
    __syncthreads();
  }
  internal::StoreStateBlock(Ss, kLdK, kBv, S);
}

// The device view of the params (the two-pass scratch fields left unset).
PrefillArgs ArgsOf(const GdnPrefillParams& params) {
  PrefillArgs a{};
  a.H = params.num_k_heads;
  a.HV = params.num_v_heads;
  a.r = params.num_v_heads / params.num_k_heads;
  a.num_seqs = params.num_seqs;
  a.cu = params.cu_seqlens;
  a.qkv = params.qkv;
  a.qkv_stride = params.qkv_row_stride;
  a.a = params.a;
  a.b = params.b;
  a.ab_stride = params.ab_row_stride;
  a.ab_fp32 = params.ab_dtype == DType::kFp32;
  a.A_log = params.A_log;
  a.dt_bias = params.dt_bias;
  a.state = params.state;
  a.slots = params.slot_indices;
  a.has_init = params.has_initial_state;
  a.o = params.o;
  a.o_stride = params.o_row_stride;
  a.o_fp32 = params.o_dtype == DType::kFp32;
  return a;
}

}  // namespace

absl::Status GdnPrefillParams::Validate() const {
  auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("GdnPrefillParams: ", what));
  };
  if (head_dim != kDim) return bad("head_dim must be 128");
  if (num_k_heads <= 0 || num_v_heads <= 0 || num_v_heads % num_k_heads != 0) {
    return bad("need H > 0 and HV % H == 0");
  }
  if (num_seqs < 0) return bad("num_seqs < 0");
  if (num_seqs == 0) return absl::OkStatus();
  if (num_seqs > 65535) return bad("num_seqs > 65535");
  if (cu_seqlens == nullptr || qkv == nullptr || a == nullptr || b == nullptr ||
      A_log == nullptr || dt_bias == nullptr || state == nullptr ||
      slot_indices == nullptr || o == nullptr) {
    return bad("a required buffer is null");
  }
  const int64_t conv_dim =
      2LL * num_k_heads * kDim + static_cast<int64_t>(num_v_heads) * kDim;
  if (qkv_row_stride < conv_dim || qkv_row_stride % 8 != 0) {
    return bad("qkv_row_stride must be >= conv_dim and a multiple of 8");
  }
  if (ab_row_stride < num_v_heads) return bad("ab_row_stride < HV");
  if (o_row_stride < static_cast<int64_t>(num_v_heads) * kDim) {
    return bad("o_row_stride < HV * V");
  }
  if (reinterpret_cast<uintptr_t>(qkv) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(state) % 16 != 0) {
    return bad("qkv and state must be 16-byte aligned");
  }
  if (num_slots <= 0) return bad("num_slots <= 0");
  if (scratch != nullptr) {
    if (num_tokens <= 0) return bad("num_tokens must be > 0 with scratch");
    if (num_tokens > INT32_MAX) return bad("num_tokens > INT32_MAX");
    if (reinterpret_cast<uintptr_t>(scratch) % 16 != 0) {
      return bad("scratch must be 16-byte aligned");
    }
    const int64_t need = ScratchFloats(num_tokens, num_v_heads);
    if (scratch_floats < need) {
      return bad(absl::StrCat("scratch holds ", scratch_floats,
                              " floats, the two-pass route needs ", need));
    }
  }
  return absl::OkStatus();
}

absl::Status LaunchGdnChunkedPrefill(const GdnPrefillParams& params,
                                     cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.num_seqs == 0) return absl::OkStatus();
  PrefillArgs a = ArgsOf(params);
  if (params.scratch != nullptr) {
    a.num_tokens = params.num_tokens;
    if (const cudaError_t e =
            internal::LaunchPrefillTwoPass(a, params.scratch, stream);
        e != cudaSuccess) {
      return absl::InternalError(
          absl::StrCat("LaunchGdnChunkedPrefill: two-pass setup failed: ",
                       cudaGetErrorString(e)));
    }
    return internal::LaunchStatus("LaunchGdnChunkedPrefill");
  }
  static std::once_flag once;
  static cudaError_t attr_err = cudaSuccess;
  std::call_once(once, [] {
    attr_err = cudaFuncSetAttribute(ChunkedPrefillKernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kSmemBytes));
  });
  if (attr_err != cudaSuccess) {
    return absl::InternalError(
        absl::StrCat("LaunchGdnChunkedPrefill: shared memory limit: ",
                     cudaGetErrorString(attr_err)));
  }
  const dim3 grid(kDim / kBv, params.num_v_heads, params.num_seqs);
  GDN_LAUNCH(ChunkedPrefillKernel, grid, kThreads, kSmemBytes, stream, a);
  return internal::LaunchStatus("LaunchGdnChunkedPrefill");
}

}  // namespace rollout::gdn
