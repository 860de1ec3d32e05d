#include "bench/gdn_bench_layer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_kernels.h"
#include "gdn/conv.h"
#include "gdn/decode.h"
#include "gdn/layer_decode.h"

namespace rollout::bench {

using gdn::DType;
using nlohmann::json;

namespace {

// The conv update of B decode rows: x and y dense [B, conv_dim], the conv
// state [num_slots, 3, conv_dim].
gdn::GdnConvParams ConvUpdateParams(int conv_dim, int B, const uint16_t* x,
                                    const uint16_t* w, uint16_t* state,
                                    int64_t num_slots, const int32_t* slots,
                                    uint16_t* y) {
  gdn::GdnConvParams p;
  p.conv_dim = conv_dim;
  p.num_seqs = B;
  p.x = x;
  p.x_row_stride = conv_dim;
  p.weight = w;
  p.conv_state = state;
  p.num_slots = num_slots;
  p.slot_indices = slots;
  p.y = y;
  p.y_row_stride = conv_dim;
  return p;
}

// One GDN layer's decode kernels in model order: the conv update (in_proj
// output x -> the q|k|v rows) and then the packed step or a ReplaySSM step
// reading those rows, µs per layer call (for ReplaySSM the L = 16 cycle
// average). Launched separately with the decode step plainly (kNone), as
// shipped (kAuto) and with kPrologue (whose contract conv -> decode meets),
// and as the pair of gdn/layer_decode.h (its own kAuto rule). Each value is
// the mean of three passes in rotating order (small-batch timings depend on
// what ran just before in the process).
struct LayerTimes {
  double conv = 0;
  double packed[4] = {0, 0, 0, 0};  // kNone, kAuto, kPrologue, the pair
  double replay[4] = {0, 0, 0, 0};
};
constexpr gdn::DecodeOverlap kLayerOverlaps[3] = {
    gdn::DecodeOverlap::kNone, gdn::DecodeOverlap::kAuto,
    gdn::DecodeOverlap::kPrologue};
LayerTimes LayerChain(Runner& r, Setup& st) {
  const int B = st.B, cd = st.conv_dim;
  uint16_t* x = Alloc<uint16_t>(static_cast<size_t>(B) * cd);
  uint16_t* w = Alloc<uint16_t>(static_cast<size_t>(cd) * 4);
  const size_t nstate = static_cast<size_t>(st.num_slots) * 3 * cd;
  uint16_t* cst = Alloc<uint16_t>(nstate);
  BENCH_CUDA(FillUniformBf16(x, static_cast<size_t>(B) * cd, 41, -1, 1, r.s));
  BENCH_CUDA(
      FillUniformBf16(w, static_cast<size_t>(cd) * 4, 42, -0.5, 0.5, r.s));
  BENCH_CUDA(FillUniformBf16(cst, nstate, 43, -1, 1, r.s));
  auto conv_params = [&](const int32_t* slots) {  // y: the decode input
    return ConvUpdateParams(cd, B, x, w, cst, st.num_slots, slots, st.qkv);
  };
  const int calls = Runner::GraphCalls(st.nsets);
  // (separate launches with `overlap`, or the pair) -> µs per layer call.
  auto packed = [&](bool pair, gdn::DecodeOverlap overlap) {
    Variant v;
    v.overlap = overlap;
    return r.UsPerCall(calls, [&](int i) {
      const int32_t* slots = st.SlotSet(false, false, i % st.nsets);
      const gdn::GdnDecodeParams p = StepParams(st, slots, B, v);
      if (pair) {
        BENCH_OK(gdn::LaunchGdnLayerDecode(conv_params(slots), p, r.s));
      } else {
        BENCH_OK(gdn::LaunchGdnCausalConv(conv_params(slots), r.s));
        BENCH_OK(gdn::LaunchGdnPackedDecode(p, r.s));
      }
    });
  };
  auto replay = [&](bool pair, gdn::DecodeOverlap overlap) {
    Variant v;
    v.overlap = overlap;
    return r
        .RingCycle(
            st,
            [&](int set, const int32_t* cursor) {
              const int32_t* slots = st.SlotSet(false, false, set);
              const gdn::GdnReplayParams p =
                  ReplayParams(st, slots, slots, cursor, B, v);
              if (pair) {
                BENCH_OK(gdn::LaunchGdnLayerReplayDecode(conv_params(slots), p,
                                                         r.s));
              } else {
                BENCH_OK(gdn::LaunchGdnCausalConv(conv_params(slots), r.s));
                BENCH_OK(gdn::LaunchGdnReplayDecode(p, r.s));
              }
            })
        .cycle_us;
  };
  LayerTimes t;
  std::vector<std::pair<double*, std::function<double()>>> measure;
  measure.push_back(
      {&t.conv, [&] {
         return r.UsPerCall(calls, [&](int i) {
           BENCH_OK(gdn::LaunchGdnCausalConv(
               conv_params(st.SlotSet(false, false, i % st.nsets)), r.s));
         });
       }});
  for (int k = 0; k < 4; ++k) {
    const bool pair = k == 3;
    const gdn::DecodeOverlap ov =
        pair ? gdn::DecodeOverlap::kAuto : kLayerOverlaps[k];
    measure.push_back(
        {&t.packed[k], [&, pair, ov] { return packed(pair, ov); }});
    measure.push_back(
        {&t.replay[k], [&, pair, ov] { return replay(pair, ov); }});
  }
  constexpr int kPasses = 3;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (size_t k = 0; k < measure.size(); ++k) {
      auto& [dst, fn] = measure[(pass + k) % measure.size()];
      *dst += fn() / kPasses;
    }
  }
  FreeAll(x, w, cst);
  return t;
}

}  // namespace

json BenchConvDecode(Runner& r, int HV, int B) {
  const int conv_dim = 2 * kH * kD + HV * kD;
  // Slot sets rotating over >= 256 MiB of conv state, as the decode steps.
  const size_t set_bytes = static_cast<size_t>(B) * 3 * conv_dim * 2;
  const int nsets =
      std::max<int>(8, (kRotateBytes + set_bytes - 1) / set_bytes);
  uint16_t* x = Alloc<uint16_t>(static_cast<size_t>(B) * conv_dim);
  uint16_t* y = Alloc<uint16_t>(static_cast<size_t>(B) * conv_dim);
  uint16_t* w = Alloc<uint16_t>(static_cast<size_t>(conv_dim) * 4);
  uint16_t* st = Alloc<uint16_t>(static_cast<size_t>(nsets) * B * 3 * conv_dim);
  std::vector<int32_t> hs(static_cast<size_t>(nsets) * B);
  std::iota(hs.begin(), hs.end(), 0);
  int32_t* slots = Upload(hs);
  BENCH_CUDA(
      FillUniformBf16(x, static_cast<size_t>(B) * conv_dim, 31, -1, 1, r.s));
  BENCH_CUDA(
      FillUniformBf16(w, static_cast<size_t>(conv_dim) * 4, 32, -1, 1, r.s));
  BENCH_CUDA(FillUniformBf16(st, static_cast<size_t>(nsets) * B * 3 * conv_dim,
                             33, -1, 1, r.s));
  const double us = r.UsPerCall(Runner::GraphCalls(nsets), [&](int i) {
    BENCH_OK(gdn::LaunchGdnCausalConv(
        ConvUpdateParams(conv_dim, B, x, w, st, static_cast<int64_t>(nsets) * B,
                         slots + (i % nsets) * B, y),
        r.s));
  });
  FreeAll(x, y, w, st, slots);
  // x and y rows, the Kc-1 = 3 state rows read and written (bf16).
  const double gbps = static_cast<double>(B) * conv_dim * 2 * 8 / (us * 1e3);
  std::printf("conv decode HV=%d B=%d: %.2f us per call, %.0f GB/s\n", HV, B,
              us, gbps);
  return {{"kind", "conv_decode"},
          {"hv", HV},
          {"batch", B},
          {"us", us},
          {"gbps", gbps}};
}

// One LAYER line (--layer) and its JSON record.
json LayerLine(Runner& r, std::mt19937& rng, int HV, int B) {
  Setup st = MakeSetup(HV, B, r.s, rng);
  st.AllocRing(DType::kFp32, r.s);
  const LayerTimes t = LayerChain(r, st);
  const double peak_gbps = gdn::DevicePeakMemoryGbps();  // the pair's rule
  std::printf(
      "LAYER HV=%d B=%d conv %.2f | conv+packed none %.2f auto(%s) %.2f "
      "prologue %.2f pair(%s) %.2f | conv+replay cycle none %.2f auto(%s) "
      "%.2f prologue %.2f pair(%s) %.2f\n",
      HV, B, t.conv, t.packed[0],
      gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, false, peak_gbps)),
      t.packed[1], t.packed[2],
      gdn::DecodeOverlapName(
          gdn::LayerDecodeOverlapFor(B, HV, false, peak_gbps)),
      t.packed[3], t.replay[0],
      gdn::DecodeOverlapName(gdn::DecodeOverlapFor(B, HV, true, peak_gbps)),
      t.replay[1], t.replay[2],
      gdn::DecodeOverlapName(
          gdn::LayerDecodeOverlapFor(B, HV, true, peak_gbps)),
      t.replay[3]);
  std::fflush(stdout);
  st.Free();
  json j = {{"kind", "conv_then_decode"},
            {"hv", HV},
            {"batch", B},
            {"conv_us", t.conv},
            {"pair_packed_us", t.packed[3]},
            {"pair_replay_cycle_us", t.replay[3]}};
  for (int k = 0; k < 3; ++k) {
    const std::string o = gdn::DecodeOverlapName(kLayerOverlaps[k]);
    j["conv_packed_" + o + "_us"] = t.packed[k];
    j["conv_replay_cycle_" + o + "_us"] = t.replay[k];
  }
  return j;
}

}  // namespace rollout::bench
