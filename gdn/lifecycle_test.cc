// Sequences' lives through every GDN kernel, driven the way an engine drives
// them, against the CPU reference token loop (gdn/reference.h):
//   - per layer, a varlen prompt prefill: the conv, then the chunked prefill,
//     which writes the exact checkpoint into each sequence's slot;
//   - ReplaySSM decode steps of two layers that share one cursor per row: the
//     layer pair (conv update, then the decode step) per layer, then the
//     cursor advance once per step. One row is OFF (the plain packed step
//     inside the same launches) and one is a padding row;
//   - a forced flush, and flushes at the end of the ring;
//   - a GRPO fork: the parent's ring folded into its slot in every layer, its
//     cursor reset, its state and conv slots copied to the child's, and both
//     rows decoding on;
//   - a second turn (multi-turn RL): a row's ring folded, more prompt tokens
//     prefilled onto its state and conv state (the continuation form), and
//     the row decoding on;
//   - the final fold of every ON row.
// Every output row is checked against the reference, and at the end every
// state and conv state too. The cursors are checked against the protocol
// after every step. The pools start poisoned (NaN), so anything read before
// it is written shows, and the slots no row uses must stay poisoned. The
// recurrence of the reference takes the conv rows the kernels produced (the
// conv output is bf16, and a one-ulp rounding difference would move the
// outputs past the bounds); those rows are checked against the reference
// conv separately. GPU cases skip without a GPU; lifecycle_emu_test runs
// them on the CPU emulation (gdn/emu) with the head counts cut 16x.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gdn/conv.h"
#include "gdn/decode.h"
#include "gdn/layer_decode.h"
#include "gdn/prefill.h"
#include "gdn/reference.h"
#include "gdn/test_util.h"
#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using testing::DeviceBuffer;
using testing::FromBf16;
using testing::kHeadCut;
using testing::RandomBf16Exact;
using testing::ToBf16;
using testing::ToDevice;

constexpr int kH = 16 / kHeadCut, kD = 128, kKc = 4, kRing = 4;
constexpr int kLayers = 2;
// The kernels' bounds against the fp32 recurrence (decode.h, prefill.h):
// with the fp32 ring, and with the bf16 ring (d rounded to bf16).
constexpr double kBound = 2e-5, kBf16RingBound = 2e-2;
constexpr uint32_t kPoison = 0xffffffffu;  // Fill(0xff) of a float

// Prompts of sequences 0-2 (one shorter than the conv window); decode rows
// 0-2 are those sequences, row 3 is padding until the fork makes it the
// child of row 0.
const std::vector<int> kPrompts = {2, 67, 130};
constexpr int kRows = 4, kChild = 3, kParent = 0;
// State slots of rows 0-3 (the child's from the fork on) and ring slots (row
// 1 is OFF). Slots 0, 2 and 4 and ring slot 3 are never used.
const std::vector<int32_t> kSlots = {5, 1, 3, 6};
const std::vector<int32_t> kRings = {2, -1, 0, 1};
constexpr int kNumSlots = 7, kNumRings = 4;
constexpr int kSteps = 11, kForkStep = 5, kForcedStep = 1, kForcedRow = 2;
// A second turn (multi-turn RL: a tool's answer appended to a rollout): at
// step kTurnStep row kTurnRow's ring is folded and kTurnTokens more prompt
// tokens are prefilled onto its state and conv state, then it decodes on.
constexpr int kTurnStep = 8, kTurnRow = 2, kTurnTokens = 9;

struct LifeCase {
  int hv = 32;
  bool two_pass = true;
  ReplayCoefRoute route = ReplayCoefRoute::kFused;
  DType ring = DType::kFp32;  // of the ring's d entries
};

// One layer's weights and pools on the device, and its reference per row.
struct Layer {
  std::vector<float> w, A_log, dt_bias;  // conv [conv_dim, Kc]; [HV]; [HV]
  DeviceBuffer<uint16_t> dw;
  DeviceBuffer<float> dA_log, ddt_bias;
  DeviceBuffer<float> state;          // [slots, HV, V, K]
  DeviceBuffer<uint16_t> conv_state;  // [slots, Kc - 1, conv_dim]
  DeviceBuffer<uint16_t> ring_k;      // [rings, H, L, K]
  DeviceBuffer<float> ring_ks, ring_g;
  DeviceBuffer<float> ring_d;  // fp32 or bf16 entries (LifeCase::ring)
  // Reference per decode row: the recurrent state [HV, V, K] and the conv
  // state [Kc - 1, conv_dim].
  std::vector<std::vector<float>> ref_state, ref_conv;
};

// Whether every float of [begin, end) still holds the poison.
bool Poisoned(const std::vector<float>& v, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    if (bits != kPoison) return false;
  }
  return true;
}

class Life {
 public:
  Life(const LifeCase& c, uint32_t seed)
      : c_(c),
        rng_(seed),
        HV_(c.hv / kHeadCut),
        bound_(c.ring == DType::kBf16 ? kBf16RingBound : kBound) {
    dims_.num_k_heads = kH;
    dims_.num_v_heads = HV_;
    dims_.head_k_dim = dims_.head_v_dim = kD;
    dims_.conv_kernel = kKc;
    cd_ = dims_.conv_dim();
    sf_ = dims_.state_floats();
  }

  void Run() {
    ASSERT_NO_FATAL_FAILURE(Setup());
    std::vector<int32_t> slots = kSlots, rings = kRings;
    slots[kChild] = rings[kChild] = -1;  // padding until the fork
    std::vector<int32_t> wp(kRows, 0);   // the protocol's cursors
    ASSERT_NO_FATAL_FAILURE(Prefill({0, 1, 2}, kPrompts, slots, true));
    for (int s = 0; s < kSteps; ++s) {
      if (s == kForkStep) {
        ASSERT_NO_FATAL_FAILURE(Fork(slots, rings, wp));
      }
      if (s == kTurnStep) {
        ASSERT_GT(wp[kTurnRow], 0) << "the turn should fold ring entries";
        ASSERT_NO_FATAL_FAILURE(FoldRows({kTurnRow}, slots, rings, wp));
        ASSERT_NO_FATAL_FAILURE(
            Prefill({kTurnRow}, {kTurnTokens}, slots, false));
      }
      ASSERT_NO_FATAL_FAILURE(DecodeStep(s, slots, rings, wp));
    }
    ASSERT_NO_FATAL_FAILURE(FinalCheck(slots, rings, wp));
    std::printf(
        "lifecycle HV=%d ring=%s route=%s prefill=%s: max decode out rel err "
        "%.3g, max state rel err %.3g (bound %.0e)\n",
        HV_, c_.ring == DType::kBf16 ? "bf16" : "fp32",
        c_.route == ReplayCoefRoute::kAuto    ? "auto"
        : c_.route == ReplayCoefRoute::kFused ? "fused"
                                              : "precomputed",
        c_.two_pass ? "two-pass" : "single", worst_out_, worst_state_, bound_);
  }

 private:
  void Setup() {
    std::uniform_real_distribution<float> alog(std::log(0.02f), std::log(4.0f));
    std::uniform_real_distribution<float> dtb(-2.0f, 1.0f);
    const size_t nk = static_cast<size_t>(kNumRings) * kH * kRing;
    const size_t nd = static_cast<size_t>(kNumRings) * HV_ * kRing;
    for (Layer& l : layers_) {
      l.w = RandomBf16Exact(rng_, static_cast<size_t>(cd_) * kKc, 0.5f);
      l.A_log.resize(HV_);
      l.dt_bias.resize(HV_);
      for (int h = 0; h < HV_; ++h) l.A_log[h] = alog(rng_);
      for (int h = 0; h < HV_; ++h) l.dt_bias[h] = dtb(rng_);
      l.dw = ToDevice(ToBf16(l.w));
      l.dA_log = ToDevice(l.A_log);
      l.ddt_bias = ToDevice(l.dt_bias);
      ASSERT_TRUE(l.state.Resize(kNumSlots * sf_));
      ASSERT_TRUE(l.conv_state.Resize(kNumSlots * (kKc - 1) * cd_));
      ASSERT_TRUE(l.ring_k.Resize(nk * kD));
      ASSERT_TRUE(l.ring_ks.Resize(nk));
      ASSERT_TRUE(l.ring_d.Resize(nd * kD));
      ASSERT_TRUE(l.ring_g.Resize(nd));
      ASSERT_EQ(l.state.Fill(0xff), cudaSuccess);
      ASSERT_EQ(l.conv_state.Fill(0xff), cudaSuccess);
      ASSERT_EQ(l.ring_k.Fill(0xff), cudaSuccess);
      ASSERT_EQ(l.ring_ks.Fill(0xff), cudaSuccess);
      ASSERT_EQ(l.ring_d.Fill(0xff), cudaSuccess);
      ASSERT_EQ(l.ring_g.Fill(0xff), cudaSuccess);
      // A fresh prompt starts from zeros.
      l.ref_state.assign(kRows, std::vector<float>(sf_, 0.0f));
      l.ref_conv.assign(kRows, std::vector<float>((kKc - 1) * cd_, 0.0f));
    }
    ASSERT_EQ(write_pos_.Upload(std::vector<int32_t>(kRows, 0)), cudaSuccess);
    ASSERT_EQ(force_.Upload(std::vector<int8_t>(kRows, 0)), cudaSuccess);
    if (c_.route == ReplayCoefRoute::kPrecomputed) {
      coef_floats_ = GdnReplayParams::CoefScratchFloats(kRows, HV_, kRing);
      ASSERT_TRUE(coef_.Resize(coef_floats_));
      ASSERT_EQ(coef_.Fill(0xff), cudaSuccess);
    }
  }

  // The reference's conv of one token (x: [conv_dim]) for row r of layer l
  // against the kernels' conv row `y` (bf16 values): within a bf16 rounding.
  void CheckConvRow(Layer& l, int r, const float* x, const float* y,
                    const std::string& where) {
    std::vector<float> want(cd_);
    CausalConv(dims_, l.w.data(), x, 1, l.ref_conv[r].data(), want.data());
    double worst = 0.0;
    for (int ch = 0; ch < cd_; ++ch) {
      const double err = std::fabs(static_cast<double>(y[ch]) - want[ch]);
      worst = std::max(worst, err / (std::fabs(want[ch]) + 1e-3));
    }
    EXPECT_LE(worst, 1.0 / 128) << where << ": conv output off";
  }

  // The reference's recurrence of one token on row r of layer l, from the
  // kernels' conv row y and the token's a, b rows; the output into o.
  void RefToken(Layer& l, int r, const float* y, const float* a, const float* b,
                float* o) {
    std::vector<float> q(dims_.key_dim()), k(dims_.key_dim());
    std::vector<float> v(dims_.value_dim()), g(HV_), beta(HV_);
    PrepareQkv(dims_, y, q.data(), k.data(), v.data());
    Gates(HV_, a, b, l.A_log.data(), l.dt_bias.data(), g.data(), beta.data());
    RecurrentForward(dims_, 1, q.data(), k.data(), v.data(), g.data(),
                     beta.data(), l.ref_state[r].data(), o);
  }

  // The conv of layer l over `num_seqs` sequences (decode form: one token
  // each) from x into y.
  GdnConvParams Conv(Layer& l, int num_seqs, const uint16_t* x,
                     const int32_t* slots, uint16_t* y) const {
    GdnConvParams conv;
    conv.conv_dim = cd_;
    conv.num_seqs = num_seqs;
    conv.x = x;
    conv.x_row_stride = cd_;
    conv.weight = l.dw.get();
    conv.conv_state = l.conv_state.get();
    conv.num_slots = kNumSlots;
    conv.slot_indices = slots;
    conv.y = y;
    conv.y_row_stride = cd_;
    return conv;
  }

  // The fields the prefill and the decode step share (GdnPrefillParams,
  // GdnDecodeParams): layer l's heads, gates and pool, the conv's rows as
  // q|k|v, a and b, and fp32 outputs.
  template <class P>
  void FillStep(Layer& l, const uint16_t* qkv, const uint16_t* a,
                const uint16_t* b, const int32_t* slots, float* o, P* p) const {
    p->num_k_heads = kH;
    p->num_v_heads = HV_;
    p->qkv = qkv;
    p->qkv_row_stride = cd_;
    p->a = a;
    p->b = b;
    p->ab_row_stride = HV_;
    p->A_log = l.dA_log.get();
    p->dt_bias = l.ddt_bias.get();
    p->state = l.state.get();
    p->num_slots = kNumSlots;
    p->slot_indices = slots;
    p->o = o;
    p->o_row_stride = dims_.value_dim();
    p->o_dtype = DType::kFp32;
  }

  GdnReplayRing Ring(Layer& l) const {
    GdnReplayRing ring;
    ring.length = kRing;
    ring.dtype = c_.ring;
    ring.k = l.ring_k.get();
    ring.k_scale = l.ring_ks.get();
    ring.d = l.ring_d.get();
    ring.g = l.ring_g.get();
    ring.num_ring_slots = kNumRings;
    return ring;
  }

  // The cursor advance over every row, ring slots `rings` (< 0: untouched).
  void Advance(const int32_t* rings) {
    GdnReplayAdvanceParams adv;
    adv.batch = kRows;
    adv.ring_length = kRing;
    adv.ring_indices = rings;
    adv.write_pos = write_pos_.get();
    adv.force_flush = force_.get();
    ASSERT_TRUE(LaunchGdnReplayAdvance(adv, nullptr).ok());
    ASSERT_EQ(testing::CudaLastError(), "");
  }

  // Prefills lens[i] tokens of decode row rows[i] (slot slots[rows[i]]), in
  // one varlen launch per layer: a fresh prompt (from zeros), or a
  // continuation of the row's stored state and conv state (its ring folded
  // before).
  void Prefill(const std::vector<int>& rows, const std::vector<int>& lens,
               const std::vector<int32_t>& slots, bool fresh) {
    const int n = static_cast<int>(rows.size());
    std::vector<int32_t> cu(n + 1, 0), seq_slots(n);
    for (int s = 0; s < n; ++s) cu[s + 1] = cu[s] + lens[s];
    for (int s = 0; s < n; ++s) seq_slots[s] = slots[rows[s]];
    const int tokens = cu[n];
    DeviceBuffer<int32_t> dcu = ToDevice(cu), dslots = ToDevice(seq_slots);
    // Fresh: has_initial_state all 0. A continuation passes none (null:
    // every sequence continues from its slot).
    DeviceBuffer<int8_t> init = ToDevice(std::vector<int8_t>(n, 0));
    const int8_t* has_initial_state = fresh ? init.get() : nullptr;
    DeviceBuffer<uint16_t> dy(static_cast<size_t>(tokens) * cd_);
    DeviceBuffer<float> dout(static_cast<size_t>(tokens) * dims_.value_dim());
    DeviceBuffer<float> scratch;
    if (c_.two_pass) {
      ASSERT_TRUE(scratch.Resize(GdnPrefillParams::ScratchFloats(tokens, HV_)));
      ASSERT_EQ(scratch.Fill(0xff), cudaSuccess);
    }
    for (int li = 0; li < kLayers; ++li) {
      Layer& l = layers_[li];
      const std::vector<float> x =
          RandomBf16Exact(rng_, static_cast<size_t>(tokens) * cd_);
      const std::vector<float> a =
          RandomBf16Exact(rng_, static_cast<size_t>(tokens) * HV_);
      const std::vector<float> b = RandomBf16Exact(rng_, a.size(), 2.0f);
      DeviceBuffer<uint16_t> dx = ToDevice(ToBf16(x));
      DeviceBuffer<uint16_t> da = ToDevice(ToBf16(a)), db = ToDevice(ToBf16(b));
      ASSERT_EQ(dy.Fill(0xff), cudaSuccess);
      ASSERT_EQ(dout.Fill(0xff), cudaSuccess);

      GdnConvParams conv = Conv(l, n, dx.get(), dslots.get(), dy.get());
      conv.max_seqlen = *std::max_element(lens.begin(), lens.end());
      conv.cu_seqlens = dcu.get();
      conv.has_initial_state = has_initial_state;
      ASSERT_TRUE(LaunchGdnCausalConv(conv, nullptr).ok());

      GdnPrefillParams p;
      FillStep(l, dy.get(), da.get(), db.get(), dslots.get(), dout.get(), &p);
      p.num_seqs = n;
      p.cu_seqlens = dcu.get();
      p.has_initial_state = has_initial_state;
      if (c_.two_pass) {
        p.scratch = scratch.get();
        p.scratch_floats = static_cast<int64_t>(scratch.size());
        p.num_tokens = tokens;
      }
      ASSERT_TRUE(LaunchGdnChunkedPrefill(p, nullptr).ok());
      ASSERT_EQ(testing::CudaLastError(), "");

      const std::vector<float> y = FromBf16(dy.Download());
      const std::vector<float> got = dout.Download();
      const int vd = dims_.value_dim();
      for (int s = 0; s < n; ++s) {
        const int row = rows[s];
        const std::string what = std::string(fresh ? "prompt" : "turn") +
                                 " of row " + std::to_string(row);
        std::vector<float> want(static_cast<size_t>(lens[s]) * vd);
        for (int t = cu[s]; t < cu[s + 1]; ++t) {
          const size_t ty = static_cast<size_t>(t) * cd_;
          const std::string where = "layer " + std::to_string(li) + " " + what +
                                    " token " + std::to_string(t - cu[s]);
          CheckConvRow(l, row, &x[ty], &y[ty], where);
          RefToken(l, row, &y[ty], &a[t * HV_], &b[t * HV_],
                   &want[static_cast<size_t>(t - cu[s]) * vd]);
        }
        // A fresh prompt is exact; a turn continues from a state that
        // carries the ring's error (the bf16 ring's bound).
        EXPECT_LE(testing::RelErr(&got[static_cast<size_t>(cu[s]) * vd],
                                  want.data(), want.size()),
                  fresh ? kBound : bound_)
            << "layer " << li << " " << what << ": prefill outputs";
      }
    }
  }

  // One model step: every layer's pair, then the cursor advance.
  void DecodeStep(int step, const std::vector<int32_t>& slots,
                  const std::vector<int32_t>& rings, std::vector<int32_t>& wp) {
    std::vector<int8_t> force(kRows, 0);
    if (step == kForcedStep) force[kForcedRow] = 1;
    ASSERT_EQ(force_.Upload(force), cudaSuccess);
    DeviceBuffer<int32_t> dslots = ToDevice(slots), drings = ToDevice(rings);
    DeviceBuffer<uint16_t> dy(static_cast<size_t>(kRows) * cd_);
    DeviceBuffer<float> dout(static_cast<size_t>(kRows) * dims_.value_dim());
    for (int li = 0; li < kLayers; ++li) {
      Layer& l = layers_[li];
      const std::vector<float> x =
          RandomBf16Exact(rng_, static_cast<size_t>(kRows) * cd_);
      const std::vector<float> a = RandomBf16Exact(rng_, kRows * HV_);
      const std::vector<float> b = RandomBf16Exact(rng_, a.size(), 2.0f);
      DeviceBuffer<uint16_t> dx = ToDevice(ToBf16(x));
      DeviceBuffer<uint16_t> da = ToDevice(ToBf16(a)), db = ToDevice(ToBf16(b));
      ASSERT_EQ(dy.Fill(0xff), cudaSuccess);
      ASSERT_EQ(dout.Fill(0xff), cudaSuccess);

      const GdnConvParams conv =
          Conv(l, kRows, dx.get(), dslots.get(), dy.get());
      GdnReplayParams r;
      FillStep(l, dy.get(), da.get(), db.get(), dslots.get(), dout.get(),
               &r.step);
      r.step.batch = kRows;
      r.ring = Ring(l);
      r.ring_indices = drings.get();
      r.write_pos = write_pos_.get();
      r.force_flush = force_.get();
      r.coef_route = c_.route;
      r.coef_scratch = coef_.get();
      r.coef_scratch_floats = coef_floats_;
      ASSERT_TRUE(LaunchGdnLayerReplayDecode(conv, r, nullptr).ok());
      ASSERT_EQ(testing::CudaLastError(), "");

      const std::vector<float> y = FromBf16(dy.Download());
      const std::vector<float> got = dout.Download();
      const int vd = dims_.value_dim();
      for (int row = 0; row < kRows; ++row) {
        const std::string where = "layer " + std::to_string(li) + " step " +
                                  std::to_string(step) + " row " +
                                  std::to_string(row);
        const float* yr = &y[static_cast<size_t>(row) * cd_];
        const float* orow = &got[static_cast<size_t>(row) * vd];
        if (slots[row] < 0) {  // padding: zero rows out, nothing else
          EXPECT_TRUE(std::all_of(yr, yr + cd_, [](float f) { return f == 0; }))
              << where << ": padding conv row";
          EXPECT_TRUE(
              std::all_of(orow, orow + vd, [](float f) { return f == 0; }))
              << where << ": padding output";
          continue;
        }
        CheckConvRow(l, row, &x[static_cast<size_t>(row) * cd_], yr, where);
        std::vector<float> want(vd);
        RefToken(l, row, yr, &a[row * HV_], &b[row * HV_], want.data());
        const double err = testing::RelErr(orow, want.data(), vd);
        worst_out_ = std::max(worst_out_, err);
        EXPECT_LE(err, bound_)
            << where << ": output (cursor " << wp[row] << ")";
      }
    }
    // After the last layer: the cursors move, the flags clear.
    ASSERT_NO_FATAL_FAILURE(Advance(drings.get()));
    for (int row = 0; row < kRows; ++row) {
      if (rings[row] < 0) continue;
      wp[row] = (wp[row] == kRing - 1 || force[row] != 0) ? 0 : wp[row] + 1;
    }
    const std::vector<int32_t> got_wp = write_pos_.Download();
    for (int row = 0; row < kRows; ++row) {
      if (rings[row] >= 0) {
        EXPECT_EQ(got_wp[row], wp[row]) << "step " << step << " row " << row;
      }
    }
    EXPECT_EQ(force_.Download(), std::vector<int8_t>(kRows, 0))
        << "step " << step << ": flags not cleared";
  }

  // Folds the rings of the rows `which` (ON rows only) into their slots in
  // every layer and resets their cursors (the advance with their flags set).
  void FoldRows(const std::vector<int>& which,
                const std::vector<int32_t>& slots,
                const std::vector<int32_t>& rings, std::vector<int32_t>& wp) {
    std::vector<int32_t> fold_rings(kRows, -1);
    std::vector<int8_t> flags(kRows, 0);
    for (int row : which) fold_rings[row] = rings[row], flags[row] = 1;
    DeviceBuffer<int32_t> dslots = ToDevice(slots);
    DeviceBuffer<int32_t> drings = ToDevice(fold_rings);
    for (Layer& l : layers_) {
      GdnReplayFoldParams f;
      f.num_k_heads = kH;
      f.num_v_heads = HV_;
      f.batch = kRows;
      f.state = l.state.get();
      f.num_slots = kNumSlots;
      f.slot_indices = dslots.get();
      f.ring = Ring(l);
      f.ring_indices = drings.get();
      f.write_pos = write_pos_.get();
      ASSERT_TRUE(LaunchGdnReplayFold(f, nullptr).ok());
    }
    ASSERT_EQ(force_.Upload(flags), cudaSuccess);
    ASSERT_NO_FATAL_FAILURE(Advance(drings.get()));
    for (int row : which) wp[row] = 0;
    const std::vector<int32_t> got_wp = write_pos_.Download();
    for (int row : which) EXPECT_EQ(got_wp[row], 0) << "folded row " << row;
  }

  // The slots of `rows` (slots[row]) in every layer against their
  // references: the state within the bound, the conv state exactly (a copy of
  // bf16 inputs). With `unused_poisoned`, also that the slots no row uses
  // were never touched. Each layer's pools are downloaded once.
  void CheckSlots(const std::vector<int>& rows,
                  const std::vector<int32_t>& slots, bool unused_poisoned,
                  const std::string& where) {
    const size_t cs = static_cast<size_t>(kKc - 1) * cd_;
    for (int li = 0; li < kLayers; ++li) {
      Layer& l = layers_[li];
      const std::vector<float> st = l.state.Download();
      const std::vector<float> conv = FromBf16(l.conv_state.Download());
      for (int row : rows) {
        const size_t slot = static_cast<size_t>(slots[row]);
        const double err =
            testing::RelErr(&st[slot * sf_], l.ref_state[row].data(), sf_);
        worst_state_ = std::max(worst_state_, err);
        EXPECT_LE(err, bound_)
            << where << ": layer " << li << " row " << row << " state";
        EXPECT_TRUE(std::equal(l.ref_conv[row].begin(), l.ref_conv[row].end(),
                               conv.begin() + slot * cs))
            << where << ": layer " << li << " row " << row << " conv state";
      }
      for (int slot = 0; unused_poisoned && slot < kNumSlots; ++slot) {
        if (std::find(slots.begin(), slots.end(), slot) != slots.end()) {
          continue;
        }
        EXPECT_TRUE(Poisoned(st, slot * sf_, (slot + 1) * sf_))
            << "unused slot " << slot << " written";
      }
    }
  }

  // The GRPO fork: the parent's ring folded first (a slot copy reads the
  // state), then its slots copied to the child's; both decode on.
  void Fork(std::vector<int32_t>& slots, std::vector<int32_t>& rings,
            std::vector<int32_t>& wp) {
    ASSERT_GT(wp[kParent], 0) << "the fork should fold ring entries";
    ASSERT_NO_FATAL_FAILURE(FoldRows({kParent}, slots, rings, wp));
    ASSERT_NO_FATAL_FAILURE(CheckSlots({kParent}, slots, false, "fold"));
    const size_t cs = static_cast<size_t>(kKc - 1) * cd_;
    for (Layer& l : layers_) {
      ASSERT_EQ(cudaMemcpy(l.state.get() + kSlots[kChild] * sf_,
                           l.state.get() + slots[kParent] * sf_,
                           sf_ * sizeof(float), cudaMemcpyDeviceToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaMemcpy(l.conv_state.get() + kSlots[kChild] * cs,
                           l.conv_state.get() + slots[kParent] * cs,
                           cs * sizeof(uint16_t), cudaMemcpyDeviceToDevice),
                cudaSuccess);
      l.ref_state[kChild] = l.ref_state[kParent];
      l.ref_conv[kChild] = l.ref_conv[kParent];
    }
    slots[kChild] = kSlots[kChild];
    rings[kChild] = kRings[kChild];
    wp[kChild] = 0;
    ASSERT_EQ(cudaMemcpy(write_pos_.get() + kChild, &wp[kChild],
                         sizeof(int32_t), cudaMemcpyHostToDevice),
              cudaSuccess);
  }

  void FinalCheck(const std::vector<int32_t>& slots,
                  const std::vector<int32_t>& rings, std::vector<int32_t>& wp) {
    std::vector<int> on;
    for (int row = 0; row < kRows; ++row) {
      if (rings[row] >= 0) on.push_back(row);
    }
    ASSERT_NO_FATAL_FAILURE(FoldRows(on, slots, rings, wp));
    std::vector<int> all(kRows);
    std::iota(all.begin(), all.end(), 0);
    CheckSlots(all, slots, true, "end");
  }

  LifeCase c_;
  std::mt19937 rng_;
  int HV_;
  double bound_;  // outputs and states against the recurrence
  double worst_out_ = 0, worst_state_ = 0;
  GdnDims dims_;
  int cd_ = 0;
  size_t sf_ = 0;
  Layer layers_[kLayers];
  DeviceBuffer<int32_t> write_pos_;
  DeviceBuffer<int8_t> force_;
  DeviceBuffer<float> coef_;
  int64_t coef_floats_ = 0;
};

TEST(GdnLifecycleTest, PrefillReplayDecodeForkAndFoldMatchTheTokenLoop) {
  GDN_SKIP_WITHOUT_GPU();
  // 32 value heads: the two-pass prefill and the fused coefficient route.
  LifeCase c;
  Life(c, 11).Run();
}

TEST(GdnLifecycleTest, SixteenValueHeadsSinglePassPrecomputedRoute) {
  GDN_SKIP_WITHOUT_GPU();
  // 16 value heads: the single-pass prefill and the precomputed route.
  LifeCase c;
  c.hv = 16;
  c.two_pass = false;
  c.route = ReplayCoefRoute::kPrecomputed;
  Life(c, 12).Run();
}

TEST(GdnLifecycleTest, Bf16RingStaysClose) {
  GDN_SKIP_WITHOUT_GPU();
  // The bf16 ring (d rounded): outputs and states within its bound; kAuto
  // picks the coefficient route.
  LifeCase c;
  c.route = ReplayCoefRoute::kAuto;
  c.ring = DType::kBf16;
  Life(c, 13).Run();
}

}  // namespace
}  // namespace rollout::gdn
