// The ReplaySSM coefficient pre-kernel of the precomputed route (both ring
// dtypes: the ring's k rows are bf16 either way).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {
namespace {

// ReplaySSM coefficient pre-kernel (DecodeMode::kReplayCoef): one warp per
// (decode row, key head) of a non-flush ON row. It computes the dots
// k_j . q and k_j . k of the row's n ring entries once (instead of once per
// CTA of every value head and v-block of the key group), then for each of
// the r value heads of the group the weights w_j and A from that head's g
// entries, and writes the record c^q_j = w_j (k_j . q), c^k_j = w_j (k_j . k),
// A (DecodeArgs::coef). Reads the ring, q|k|v and the cursors; writes only
// the records. It lets a dependent (PDL) decode launch start streaming its
// state at once.
constexpr int kCoefWarps = 4;
constexpr int kCoefChunk = 16;  // entries per reduction pass

// Butterfly reduce-scatter over a warp: afterwards lane l holds the sum over
// all lanes of v[l] (31 shuffles for 32 sums instead of 5 each). Step kO
// halves the live values: lanes with bit kO keep the upper half.
template <int kO>
__device__ __forceinline__ void ReduceScatterStep(float (&v)[32], int lane) {
  const bool upper = (lane & kO) != 0;
#pragma unroll
  for (int i = 0; i < kO; ++i) {
    const float send = upper ? v[i] : v[i + kO];
    const float keep = upper ? v[i + kO] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, kO);
  }
}
__device__ __forceinline__ float ReduceScatter32(float (&v)[32], int lane) {
  ReduceScatterStep<16>(v, lane);
  ReduceScatterStep<8>(v, lane);
  ReduceScatterStep<4>(v, lane);
  ReduceScatterStep<2>(v, lane);
  ReduceScatterStep<1>(v, lane);
  return v[0];
}

__global__ void __launch_bounds__(32 * kCoefWarps)
    ReplayCoefKernel(const DecodeArgs p) {
  GridLaunchDependents();
  const int lane = threadIdx.x & 31;
  const int pair = blockIdx.x * kCoefWarps + (threadIdx.x >> 5);
  if (pair >= p.batch * p.H) return;
  const int row = pair / p.H, kh = pair % p.H;
  const int slot = p.slots[row], rslot = p.ring_idx[row];
  const int wp = p.write_pos[row];
  const bool forced = p.force != nullptr && p.force[row] != 0;
  if (slot < 0 || rslot < 0) return;  // padding or OFF row
  const int n = min(max(wp, 0), p.L - 1);
  if (n == p.L - 1 || forced) return;  // flush row: folds, no coefficients
  const int64_t kr = static_cast<int64_t>(rslot) * p.H + kh;
  const uint16_t* ring_k = p.ring_k + kr * p.L * kDim;  // [L, K] raw bf16
  // The k rows' norm scales (RingWeights), lane l: s_l and s_{l+32}.
  const float* ring_ks = p.ring_ks + kr * p.L;
  const float s0 = lane < n ? ring_ks[lane] : 0.f;
  const float s1 = lane + 32 < n ? ring_ks[lane + 32] : 0.f;
  const uint16_t* x = p.qkv + static_cast<int64_t>(row) * p.qkv_stride;
  float4 q = LoadBf16x4(x + kh * kDim + lane * 4);
  float4 k = LoadBf16x4(x + (p.H + kh) * kDim + lane * 4);
  q = Scale4(q, RowNormScale(q) * kQScale);
  k = Scale4(k, RowNormScale(k));
  // Dots of chunk c: lane l < 16 holds k_j . q, lane 16 + l holds k_j . k,
  // j = 16 c + l.
  constexpr int kChunks = (kMaxRing + kCoefChunk - 1) / kCoefChunk;
  const uint64_t keep = EvictLastPolicy();
  float dots[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    dots[c] = 0.f;
    if (c * kCoefChunk >= n) continue;
    float v[32];
#pragma unroll
    for (int jj = 0; jj < kCoefChunk; ++jj) {
      const int j = c * kCoefChunk + jj;
      const float4 kv =
          j < n ? LoadKRow4Keep(ring_k + j * kDim + lane * 4, keep) : Zero4();
      v[jj] = Dot4(kv, q);
      v[kCoefChunk + jj] = Dot4(kv, k);
    }
    dots[c] = ReduceScatter32(v, lane);
  }
  const int jl = lane & (kCoefChunk - 1);
  const int half = lane < kCoefChunk ? 0 : p.L;  // c^q or c^k
  for (int i = 0; i < p.r; ++i) {
    const int h = kh * p.r + i;
    const float* gh = p.ring_g + (static_cast<int64_t>(rslot) * p.HV + h) * p.L;
    const float g0 = lane < n ? gh[lane] : 0.f;
    const float g1 = lane + 32 < n ? gh[lane + 32] : 0.f;
    float w_lo, w_hi, A;
    RingWeights(g0, g1, s0, s1, lane, &w_lo, &w_hi, &A);
    float* rec =
        p.coef + (static_cast<int64_t>(row) * p.HV + h) * p.coef_stride;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j = c * kCoefChunk + jl;
      const float w = __shfl_sync(0xffffffffu, c < 2 ? w_lo : w_hi, j & 31);
      if (j < n) rec[half + j] = w * dots[c];
    }
    if (lane == 0) rec[2 * p.L] = A;
  }
}

}  // namespace

cudaError_t LaunchReplayCoef(const DecodeArgs& a, cudaStream_t stream) {
  const int64_t blocks =
      (static_cast<int64_t>(a.batch) * a.H + kCoefWarps - 1) / kCoefWarps;
  GDN_LAUNCH(ReplayCoefKernel, static_cast<unsigned>(blocks), 32 * kCoefWarps,
             0, stream, a);
  return cudaSuccess;
}

}  // namespace rollout::gdn::internal
