#include "bench/gdn_bench_prefill.h"

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "bench/bench_kernels.h"
#include "bench/prefill_work.h"
#include "gdn/prefill.h"

namespace rollout::bench {

using nlohmann::json;

namespace {

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
  BENCH_CUDA(FillUniformBf16(qkv, static_cast<size_t>(tokens) * conv_dim, 21,
                             -1, 1, r.s));
  BENCH_CUDA(FillUniformBf16(ab, static_cast<size_t>(tokens) * HV * 2, 22, -2,
                             2, r.s));
  BENCH_CUDA(FillUniform(par, 2 * HV, 23, -1, 0.5f, r.s));
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
  BENCH_CUDA(cudaMemsetAsync(
      state, 0, static_cast<size_t>(seqs) * HV * kD * kD * 4, r.s));
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    t.push_back(r.ev.Time(
        r.s, [&] { BENCH_OK(gdn::LaunchGdnChunkedPrefill(p, r.s)); }));
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

}  // namespace

// The prefill lines of a full run: one sequence of 4096 tokens and 64 of
// 256, by each route.
void PrefillLines(Runner& r, const Ceilings& ceil, int HV, json* recs) {
  for (bool two_pass : {true, false}) {
    recs->push_back(BenchPrefill(r, ceil, HV, 1, 4096, two_pass));
    recs->push_back(BenchPrefill(r, ceil, HV, 64, 256, two_pass));
  }
}

}  // namespace rollout::bench
