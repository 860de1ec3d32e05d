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
  float* w;    // [num_tokens, HV, K]  W rows
  float* u;    // [num_tokens, HV, V]  U~ rows
  float* pm;   // [num_tokens, HV, kPC] rows of M .* Q K^T (zero above the
               // diagonal)
  float* gam;  // [num_tokens, HV]     gam (cumulated inside the chunk)
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

// A raw q row of ChunkRowsRaw, L2-normalised and times K^-1/2.
__device__ __forceinline__ float4 NormalizedQ(uint2 raw) {
  const float4 q = Bf16x4ToFloat4(raw);
  return Scale4(q, RowNormScale(q) * kPQScale);
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
    const float4 b = Bf16x4ToFloat4(kr[it]);
    q[it] = NormalizedQ(qr[it]);
    k[it] = Scale4(b, RowNormScale(b));
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

// The two-pass route (prefill_two_pass.cu): lays out its arrays in scratch
// (a.num_tokens tokens), then launches the chunk pass and the state pass.
// Shared memory opt-in happens on first use.
cudaError_t LaunchPrefillTwoPass(PrefillArgs a, float* scratch,
                                 cudaStream_t stream);

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_PREFILL_KERNEL_CUH_
