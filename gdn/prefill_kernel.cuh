// Pieces shared by the GDN chunked-prefill kernels (private to
// gdn/prefill*.cu): the chunk size, the device view of the launcher params,
// the q / k row loaders and the state block's shared-memory copy.
//
// Chunk algebra (gdn/prefill.h, gdn/reference.h ChunkedForward): per chunk
// of c <= kC tokens of one value head, with gam = cumsum(g) inside the chunk,
//   A_ij = beta_i e^(gam_i - gam_j) (k_i.k_j), j < i
//   W = (I+A)^-1 (beta e^gam k),  U~ = (I+A)^-1 (beta v)   forward substitution
//   U = U~ - W S0^T                                          [c, V]
//   O = e^gam (Q S0^T) + (M .* Q K^T) U,  M_ij = e^(gam_i - gam_j), j <= i
//   S = e^gam_c S0 + (e^(gam_c - gam) .* U)^T K
// Only the last three lines depend on the state S0 entering the chunk.
#ifndef ROLLOUT_GDN_PREFILL_KERNEL_CUH_
#define ROLLOUT_GDN_PREFILL_KERNEL_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "gdn/cuda_util.cuh"

namespace rollout::gdn::internal {

constexpr int kPDim = 128;  // K = V
constexpr int kPC = 64;     // chunk length
constexpr int kPThreads = 256;
constexpr float kPQScale = 0.08838834764831845f;  // 128^-1/2

// Device view of GdnPrefillParams (flat, by value). The scratch arrays are
// those of the two-pass route (prefill_two_pass.cu), indexed by token.
struct PrefillArgs {
  int H, HV, r;
  int num_seqs;
  const int32_t* cu;
  const uint16_t* qkv;
  int64_t qkv_stride;
  const void* a;
  const void* b;
  int64_t ab_stride;
  bool ab_fp32;
  const float* A_log;
  const float* dt_bias;
  float* state;
  const int32_t* slots;
  const int8_t* has_init;
  void* o;
  int64_t o_stride;
  bool o_fp32;
  // Two-pass route: tokens covered by the scratch, and its arrays.
  int64_t num_tokens;
  float* w;        // [num_tokens, HV, K]  W rows
  float* u;        // [num_tokens, HV, V]  U~ rows
  float* pm;       // [num_tokens, HV, kPC] rows of M .* Q K^T (zero above the
                   // diagonal)
  float* gam;      // [num_tokens, HV]     gam (cumulated inside the chunk)
  int state_rows;  // v-rows per state-pass CTA (StateTileRows)
};

// Rows per warp of the chunk loaders (rows warp + kWarpsP * it).
constexpr int kWarpsP = kPThreads / 32;
constexpr int kRowsPerWarp = kPC / kWarpsP;

// Rows warp + kWarpsP * it (it < kRowsPerWarp) of a chunk starting at token
// tok0: the raw bf16 q and k of key head kh in lane layout (columns 4 lane ..
// 4 lane + 3, as 8 bytes); rows past c are zero. Every load is issued before
// any use (one memory latency per chunk, not one per row).
__device__ __forceinline__ void ChunkRowsRaw(const PrefillArgs& p, int64_t tok0,
                                             int c, int kh,
                                             uint2 (&q)[kRowsPerWarp],
                                             uint2 (&k)[kRowsPerWarp]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int it = 0; it < kRowsPerWarp; ++it) {
    const int i = warp + it * kWarpsP;
    q[it] = k[it] = make_uint2(0u, 0u);
    if (i < c) {
      const uint16_t* x = p.qkv + (tok0 + i) * p.qkv_stride + lane * 4;
      q[it] = *reinterpret_cast<const uint2*>(x + kh * kPDim);
      k[it] = *reinterpret_cast<const uint2*>(x + (p.H + kh) * kPDim);
    }
  }
}

// The L2-norm scale 1 / |x| of a row held by the warp (a zero row: finite).
__device__ __forceinline__ float RowNormScale(float4 x) {
  return rsqrtf(GroupSum<32>(x.x * x.x + x.y * x.y + x.z * x.z + x.w * x.w) +
                kL2Eps);
}

__device__ __forceinline__ float4 Scale4P(float4 x, float s) {
  return make_float4(x.x * s, x.y * s, x.z * s, x.w * s);
}

// The same rows as fp32: q (times K^-1/2) and k, L2-normalised.
__device__ __forceinline__ void ChunkQKRows(const PrefillArgs& p, int64_t tok0,
                                            int c, int kh,
                                            float4 (&q)[kRowsPerWarp],
                                            float4 (&k)[kRowsPerWarp]) {
  uint2 qr[kRowsPerWarp], kr[kRowsPerWarp];
  ChunkRowsRaw(p, tok0, c, kh, qr, kr);
#pragma unroll
  for (int it = 0; it < kRowsPerWarp; ++it) {
    const float4 a = Bf16x4ToFloat4(qr[it]), b = Bf16x4ToFloat4(kr[it]);
    q[it] = Scale4P(a, RowNormScale(a) * kPQScale);
    k[it] = Scale4P(b, RowNormScale(b));
  }
}

// Stores rows of ChunkQKRows' layout into a [kPC][ld] tile, row i scaled
// by scale(i).
template <typename Scale>
__device__ __forceinline__ void StoreChunkRows(const float4 (&x)[kRowsPerWarp],
                                               float* tile, int ld,
                                               Scale scale) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int it = 0; it < kRowsPerWarp; ++it) {
    const int i = warp + it * kWarpsP;
    const float f = scale(i);
    float* d = tile + i * ld + lane * 4;
    d[0] = x[it].x * f, d[1] = x[it].y * f, d[2] = x[it].z * f,
    d[3] = x[it].w * f;
  }
}

// Both, unscaled: the normalised q and k rows into Qs and Ks (row stride ld).
__device__ __forceinline__ void LoadChunkQK(const PrefillArgs& p, int64_t tok0,
                                            int c, int kh, float* Qs, float* Ks,
                                            int ld) {
  float4 q[kRowsPerWarp], k[kRowsPerWarp];
  ChunkQKRows(p, tok0, c, kh, q, k);
  auto one = [](int) { return 1.0f; };
  StoreChunkRows(q, Qs, ld, one);
  StoreChunkRows(k, Ks, ld, one);
}

// The state block [rows, K] of a CTA into shared memory (row stride ld), or
// zeros for a fresh sequence; and back.
__device__ __forceinline__ void LoadStateBlock(const float* S, int rows,
                                               bool init, float* Ss, int ld) {
  for (int e = threadIdx.x; e < rows * kPDim; e += kPThreads) {
    Ss[(e / kPDim) * ld + e % kPDim] = init ? S[e] : 0.0f;
  }
}
__device__ __forceinline__ void StoreStateBlock(const float* Ss, int ld,
                                                int rows, float* S) {
  for (int e = threadIdx.x; e < rows * kPDim; e += kPThreads) {
    S[e] = Ss[(e / kPDim) * ld + e % kPDim];
  }
}

// The two-pass route (prefill_two_pass.cu): the chunk pass, then the state
// pass with a.state_rows v-rows per CTA. Shared memory opt-in happens on
// first use.
cudaError_t LaunchPrefillTwoPass(const PrefillArgs& a, cudaStream_t stream);
// The state pass's v-rows per CTA (16 or 32) for a launch on num_sms SMs:
// 16 where num_seqs * HV * 8 <= num_sms.
int StateTileRows(int num_seqs, int num_v_heads, int num_sms);

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_PREFILL_KERNEL_CUH_
