#include "bench/gdn_bench_setup.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "bench/bench_kernels.h"
#include "bench/decode_bytes.h"

namespace rollout::bench {

using gdn::DType;

int RotatingSets(int HV, int B, RingRotation rings) {
  return RotatingSlotSets({kH, HV}, B, kL, rings == RingRotation::kRotate,
                          static_cast<double>(kRotateBytes));
}

Setup MakeSetup(int HV, int B, cudaStream_t s, std::mt19937& rng, int min_sets,
                RingRotation rings) {
  Setup st;
  st.HV = HV;
  st.B = B;
  st.conv_dim = 2 * kH * kD + HV * kD;
  st.nsets = std::max(min_sets, RotatingSets(HV, B, rings));
  st.num_slots = st.nsets * B;
  const size_t sf = static_cast<size_t>(HV) * kD * kD;
  st.state = Alloc<float>(st.num_slots * sf);
  BENCH_CUDA(FillUniform(st.state, st.num_slots * sf, 7, -0.05f, 0.05f, s));
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
  st.zero_flags = Upload(std::vector<int8_t>(B, 0));
  st.qkv = Alloc<uint16_t>(static_cast<size_t>(B) * st.conv_dim);
  BENCH_CUDA(FillUniformBf16(st.qkv, static_cast<size_t>(B) * st.conv_dim, 11,
                             -1.f, 1.f, s));
  st.a = Alloc<uint16_t>(static_cast<size_t>(B) * HV);
  st.b = Alloc<uint16_t>(static_cast<size_t>(B) * HV);
  BENCH_CUDA(
      FillUniformBf16(st.a, static_cast<size_t>(B) * HV, 12, -2.f, 2.f, s));
  BENCH_CUDA(
      FillUniformBf16(st.b, static_cast<size_t>(B) * HV, 13, -3.f, 3.f, s));
  st.A_log = Alloc<float>(HV);
  st.dt_bias = Alloc<float>(HV);
  BENCH_CUDA(FillUniform(st.A_log, HV, 14, -3.f, 1.f, s));
  BENCH_CUDA(FillUniform(st.dt_bias, HV, 15, -1.f, 1.f, s));
  st.o = Alloc<uint16_t>(static_cast<size_t>(B) * HV * kD);
  st.coef_floats = gdn::GdnReplayParams::CoefScratchFloats(B, HV, kL);
  st.coef = Alloc<float>(st.coef_floats);
  BENCH_CUDA(cudaStreamSynchronize(s));
  return st;
}

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
  p.copy_order = var.order;
  p.ring.length = kL;
  p.ring.dtype = st.ring_dtype;
  p.ring.k = st.ring_k;
  p.ring.k_scale = st.ring_ks;
  p.ring.d = st.ring_d;
  p.ring.g = st.ring_g;
  p.ring.num_ring_slots = st.num_slots;
  p.ring_indices = rings;
  p.write_pos = cursor;
  p.force_flush = var.flags ? st.zero_flags : nullptr;
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

}  // namespace rollout::bench
