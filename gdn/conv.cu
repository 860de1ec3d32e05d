// GDN causal conv kernels.
//
// Prefill (CausalConvKernel): a thread owns 8 channels (16-byte vectors) of
// one sequence over a chunk of kChunk tokens, keeping the Kc-1 previous inputs
// in registers; only chunk 0 of a sequence reads the stored conv state and it
// alone writes the new one (after its reads), so chunks never race.
//
// Decode (ConvUpdateKernel, no cu_seqlens): one token per sequence, so a
// thread owns 8 channels of one sequence and keeps its operands as packed
// bf16 until the arithmetic: few registers, full occupancy, every load of a
// CTA in flight at once. The prefill kernel's 107 registers held 4 CTAs of
// 128 threads per SM: 46 % of copy bandwidth at B = 256 against this
// kernel's 81 % (16/32 heads, run 68).
#include <cuda_runtime.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "gdn/conv.h"
#include "gdn/cuda_util.cuh"

namespace rollout::gdn {
namespace {

constexpr int kKc = 4;      // conv kernel
constexpr int kChunk = 16;  // tokens per thread
constexpr int kThreads = 128;

struct Vec8 {
  float v[8];
};

__device__ __forceinline__ Vec8 Load8(const uint16_t* p) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
  Vec8 r;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    r.v[2 * i] = __uint_as_float(w[i] << 16);
    r.v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
  return r;
}

__device__ __forceinline__ void Store8(uint16_t* p, const Vec8& x) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = static_cast<uint32_t>(internal::FloatToBf16(x.v[2 * i])) |
           (static_cast<uint32_t>(internal::FloatToBf16(x.v[2 * i + 1])) << 16);
  }
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ Vec8 Zero8() {
  Vec8 r;
#pragma unroll
  for (int i = 0; i < 8; ++i) r.v[i] = 0.0f;
  return r;
}

// Element e (0-7, a compile-time constant after unrolling) of 8 packed bf16.
__device__ __forceinline__ float Bf16At(const uint4& u, int e) {
  const uint32_t w = e < 2 ? u.x : (e < 4 ? u.y : (e < 6 ? u.z : u.w));
  return __uint_as_float(e % 2 == 0 ? w << 16 : w & 0xffff0000u);
}

struct ConvArgs {
  int conv_dim;
  const int32_t* cu_seqlens;
  const uint16_t* x;
  int64_t x_stride;
  const uint16_t* weight;
  uint16_t* state;
  const int32_t* slots;
  const int8_t* has_init;
  uint16_t* y;
  int64_t y_stride;
};

__global__ void __launch_bounds__(kThreads) CausalConvKernel(const ConvArgs p) {
  // The decode step reads y next. Launched with PDL (DecodeOverlap::kLaunch,
  // the default at small batch), its CTAs may be scheduled once every conv
  // CTA has started, and they wait for this grid's completion before their
  // first access: the launch latency hides behind this kernel (run 67).
  internal::GridLaunchDependents();
  const int c0 = (blockIdx.x * kThreads + threadIdx.x) * 8;
  if (c0 >= p.conv_dim) return;
  const int seq = blockIdx.z;
  const int64_t start = p.cu_seqlens ? p.cu_seqlens[seq] : seq;
  const int len = p.cu_seqlens ? p.cu_seqlens[seq + 1] - start : 1;
  const int t0 = blockIdx.y * kChunk;
  if (t0 >= len && t0 > 0) return;
  const int t1 = min(t0 + kChunk, len);
  const int slot = p.slots[seq];
  if (slot < 0) {
    for (int t = t0; t < t1; ++t) {
      Store8(p.y + (start + t) * p.y_stride + c0, Zero8());
    }
    return;
  }
  // w[c][i] for 8 channels: 64 contiguous bytes.
  float w[8][kKc];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const Vec8 part = Load8(p.weight + static_cast<int64_t>(c0) * kKc + q * 8);
#pragma unroll
    for (int e = 0; e < 8; ++e) w[q * 2 + e / 4][e % 4] = part.v[e];
  }
  uint16_t* st = p.state + static_cast<int64_t>(slot) * (kKc - 1) * p.conv_dim;
  const bool init = p.has_init == nullptr || p.has_init[seq] != 0;
  // hist[m] = input at time t0 - (kKc-1) + m.
  Vec8 hist[kKc - 1];
#pragma unroll
  for (int m = 0; m < kKc - 1; ++m) {
    const int t = t0 - (kKc - 1) + m;
    if (t >= 0) {
      hist[m] = Load8(p.x + (start + t) * p.x_stride + c0);
    } else {
      // Only chunk 0 gets here (kChunk >= Kc-1): the stored state.
      hist[m] =
          init ? Load8(st + static_cast<int64_t>(kKc - 1 + t) * p.conv_dim + c0)
               : Zero8();
    }
  }
  const Vec8 old_state[kKc - 1] = {hist[0], hist[1], hist[2]};
  for (int t = t0; t < t1; ++t) {
    const Vec8 xt = Load8(p.x + (start + t) * p.x_stride + c0);
    Vec8 out;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      float acc = w[e][0] * hist[0].v[e];
      acc = fmaf(w[e][1], hist[1].v[e], acc);
      acc = fmaf(w[e][2], hist[2].v[e], acc);
      acc = fmaf(w[e][3], xt.v[e], acc);
      out.v[e] = acc / (1.0f + expf(-acc));
    }
    Store8(p.y + (start + t) * p.y_stride + c0, out);
    hist[0] = hist[1];
    hist[1] = hist[2];
    hist[2] = xt;
  }
  if (t0 == 0) {
    // New state: the last Kc-1 inputs of [old state | x].
#pragma unroll
    for (int m = 0; m < kKc - 1; ++m) {
      const int t = len - (kKc - 1) + m;
      Vec8 v;
      if (t >= 0) {
        v = Load8(p.x + (start + t) * p.x_stride + c0);
      } else {
        // Constant register indices only (a run-time index would spill).
        const int idx = kKc - 1 + t;
        v = idx == 0 ? old_state[0] : (idx == 1 ? old_state[1] : old_state[2]);
      }
      Store8(st + static_cast<int64_t>(m) * p.conv_dim + c0, v);
    }
  }
}

constexpr int kUpdateThreads = 256;

// One decode token per sequence: blockIdx.y = sequence (row), 8 channels per
// thread. Shapes as ConvArgs, with x / y rows = sequences.
__global__ void __launch_bounds__(kUpdateThreads)
    ConvUpdateKernel(const ConvArgs p) {
  internal::GridLaunchDependents();  // as CausalConvKernel
  const int c0 = (blockIdx.x * kUpdateThreads + threadIdx.x) * 8;
  if (c0 >= p.conv_dim) return;
  const int seq = blockIdx.y;
  uint16_t* y = p.y + seq * p.y_stride + c0;
  const int slot = p.slots[seq];
  if (slot < 0) {
    *reinterpret_cast<uint4*>(y) = make_uint4(0, 0, 0, 0);
    return;
  }
  const uint4 xt = *reinterpret_cast<const uint4*>(p.x + seq * p.x_stride + c0);
  // w[c][i] for the 8 channels: 64 contiguous bytes, 4 taps per channel.
  uint4 w[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    w[q] = *reinterpret_cast<const uint4*>(
        p.weight + static_cast<int64_t>(c0) * kKc + q * 8);
  }
  uint16_t* st = p.state + static_cast<int64_t>(slot) * (kKc - 1) * p.conv_dim;
  const bool init = p.has_init == nullptr || p.has_init[seq] != 0;
  // hist[m] = the input Kc-1-m tokens before this one (oldest first), zeros
  // for a fresh sequence.
  uint4 hist[kKc - 1];
#pragma unroll
  for (int m = 0; m < kKc - 1; ++m) {
    hist[m] = init ? *reinterpret_cast<const uint4*>(
                         st + static_cast<int64_t>(m) * p.conv_dim + c0)
                   : make_uint4(0, 0, 0, 0);
  }
  Vec8 out;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    // Channel e's taps: bf16 4 * (e % 2) ... + 3 of w[e / 2].
    const uint4& we = w[e / 2];
    const int t0 = 4 * (e % 2);
    float acc = Bf16At(we, t0) * Bf16At(hist[0], e);
    acc = fmaf(Bf16At(we, t0 + 1), Bf16At(hist[1], e), acc);
    acc = fmaf(Bf16At(we, t0 + 2), Bf16At(hist[2], e), acc);
    acc = fmaf(Bf16At(we, t0 + 3), Bf16At(xt, e), acc);
    out.v[e] = acc / (1.0f + expf(-acc));
  }
  Store8(y, out);
  // New state: the last Kc-1 inputs of [old state | x].
#pragma unroll
  for (int m = 0; m < kKc - 1; ++m) {
    *reinterpret_cast<uint4*>(st + static_cast<int64_t>(m) * p.conv_dim + c0) =
        m + 1 < kKc - 1 ? hist[m + 1] : xt;
  }
}

}  // namespace

absl::Status GdnConvParams::Validate() const {
  auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("GdnConvParams: ", what));
  };
  if (conv_kernel != kKc) return bad("only conv_kernel == 4 is supported");
  if (conv_dim <= 0 || conv_dim % 8 != 0) {
    return bad("conv_dim must be a positive multiple of 8");
  }
  if (num_seqs < 0) return bad("num_seqs < 0");
  if (num_seqs == 0) return absl::OkStatus();
  if (max_seqlen < 1) return bad("max_seqlen < 1");
  if (cu_seqlens == nullptr && max_seqlen != 1) {
    return bad("decode (no cu_seqlens) has max_seqlen 1");
  }
  if (x == nullptr || weight == nullptr || conv_state == nullptr ||
      slot_indices == nullptr || y == nullptr) {
    return bad("a required buffer is null");
  }
  if (x_row_stride < conv_dim || x_row_stride % 8 != 0 ||
      y_row_stride < conv_dim || y_row_stride % 8 != 0) {
    return bad("row strides must be >= conv_dim and multiples of 8");
  }
  for (const void* p :
       {static_cast<const void*>(x), static_cast<const void*>(weight),
        static_cast<const void*>(conv_state), static_cast<const void*>(y)}) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
      return bad("buffers must be 16-byte aligned");
    }
  }
  if (num_slots <= 0) return bad("num_slots <= 0");
  return absl::OkStatus();
}

absl::Status LaunchGdnCausalConv(const GdnConvParams& params,
                                 cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.num_seqs == 0) return absl::OkStatus();
  ConvArgs a{params.conv_dim,
             params.cu_seqlens,
             params.x,
             params.x_row_stride,
             params.weight,
             params.conv_state,
             params.slot_indices,
             params.has_initial_state,
             params.y,
             params.y_row_stride};
  if (params.cu_seqlens == nullptr) {  // decode: one token per sequence
    const dim3 grid((params.conv_dim / 8 + kUpdateThreads - 1) / kUpdateThreads,
                    params.num_seqs);
    if (grid.y > 65535) {
      return absl::InvalidArgumentError(
          "GdnConvParams: num_seqs too large for one launch");
    }
    GDN_LAUNCH(ConvUpdateKernel, grid, kUpdateThreads, 0, stream, a);
    return internal::LaunchStatus("LaunchGdnCausalConv");
  }
  const dim3 grid((params.conv_dim / 8 + kThreads - 1) / kThreads,
                  (params.max_seqlen + kChunk - 1) / kChunk, params.num_seqs);
  if (grid.y > 65535 || grid.z > 65535) {
    return absl::InvalidArgumentError(
        "GdnConvParams: max_seqlen or num_seqs too large for one launch");
  }
  GDN_LAUNCH(CausalConvKernel, grid, kThreads, 0, stream, a);
  return internal::LaunchStatus("LaunchGdnCausalConv");
}

}  // namespace rollout::gdn
