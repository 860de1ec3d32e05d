// GPU chunked prefill against the CPU token loop (the definition): varlen
// sequences of lengths around the chunk size, fresh and continued states,
// padding sequences, both input and output dtypes, padded row strides.
// Skips without a GPU.
#include "gdn/prefill.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gdn/reference.h"
#include "gdn/test_util.h"
#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using testing::DeviceBuffer;
using testing::kHeadCut;
using testing::RelErr;
using testing::ToBf16;
using testing::ToDevice;

struct PrefillCase {
  int hv = 32;
  std::vector<int> lens;
  std::vector<int8_t> init;  // empty: has_initial_state null (all continue)
  bool pad_last = true;      // the last sequence is a padding one (slot -1)
  int first_token = 0;       // cu_seqlens[0]: rows before it belong to no one
  DType ab_dtype = DType::kFp32;
  DType o_dtype = DType::kFp32;
  // Row strides past the rows' own width (elements): the qkv and a / b
  // padding holds junk the kernels must not read into the math, the o
  // padding must stay untouched.
  int qkv_pad = 0;  // a multiple of 8 (16-byte rows)
  int ab_pad = 0;
  int o_pad = 0;
};

// Whether sequence s starts from its stored state.
bool Continues(const PrefillCase& c, int s) {
  return c.init.empty() || c.init[s] != 0;
}

// Runs one route: two_pass with scratch (poisoned first, and one float
// larger than needed), else the single pass.
void RunPrefill(const PrefillCase& c, uint32_t seed, bool two_pass) {
  std::mt19937 rng(seed);
  GdnDims d;
  d.num_k_heads = 16 / kHeadCut;
  d.num_v_heads = c.hv / kHeadCut;
  d.head_k_dim = d.head_v_dim = 128;
  const int n = static_cast<int>(c.lens.size()), HV = d.num_v_heads;
  const int cd = d.conv_dim(), num_slots = n + 2;
  const int qkv_stride = cd + c.qkv_pad, ab_stride = HV + c.ab_pad;
  const int vd = d.value_dim(), o_stride = vd + c.o_pad;
  const size_t sf = d.state_floats();
  std::vector<int32_t> cu(n + 1, c.first_token);
  for (int s = 0; s < n; ++s) cu[s + 1] = cu[s] + c.lens[s];
  const int tokens = cu[n];
  // Row buffers of at least one row (a caller's buffers are never null, also
  // when every sequence is empty); whole rows, padding included (random too:
  // it must not matter).
  const int rows = std::max(tokens, 1);
  std::vector<float> qkv =
      testing::RandomBf16Exact(rng, static_cast<size_t>(rows) * qkv_stride);
  std::vector<float> a =
      testing::RandomBf16Exact(rng, static_cast<size_t>(rows) * ab_stride);
  std::vector<float> b = testing::RandomBf16Exact(rng, a.size(), 2.0f);
  std::vector<float> A_log(HV), dt_bias(HV);
  std::uniform_real_distribution<float> alog(std::log(0.02f), std::log(4.0f));
  std::uniform_real_distribution<float> dtb(-2.0f, 1.0f);
  for (int h = 0; h < HV; ++h) A_log[h] = alog(rng), dt_bias[h] = dtb(rng);
  std::vector<float> pool = testing::RandomNormal(rng, num_slots * sf, 0.3f);
  std::vector<int32_t> slots(n);
  std::iota(slots.begin(), slots.end(), 1);
  std::shuffle(slots.begin(), slots.end(), rng);
  if (c.pad_last) slots[n - 1] = -1;  // padding sequence

  const bool ab_bf16 = c.ab_dtype == DType::kBf16;
  const bool o_bf16 = c.o_dtype == DType::kBf16;
  DeviceBuffer<uint16_t> dqkv = ToDevice(ToBf16(qkv));
  // a, b in their dtype (bf16-exact values: the reference sees the same).
  DeviceBuffer<float> da, db;
  DeviceBuffer<uint16_t> da16, db16;
  if (ab_bf16) {
    da16 = ToDevice(ToBf16(a));
    db16 = ToDevice(ToBf16(b));
  } else {
    da = ToDevice(a);
    db = ToDevice(b);
  }
  DeviceBuffer<float> dAlog = ToDevice(A_log), ddt = ToDevice(dt_bias);
  DeviceBuffer<float> dstate = ToDevice(pool);
  DeviceBuffer<int32_t> dcu = ToDevice(cu), dslots = ToDevice(slots);
  DeviceBuffer<int8_t> dinit;
  if (!c.init.empty()) dinit = ToDevice(c.init);
  // o poisoned (0xff: NaN in either dtype), padding included.
  const size_t o_elems = static_cast<size_t>(rows) * o_stride;
  DeviceBuffer<float> o(o_bf16 ? 0 : o_elems);
  DeviceBuffer<uint16_t> o16(o_bf16 ? o_elems : 0);
  ASSERT_EQ(o_bf16 ? o16.Fill(0xff) : o.Fill(0xff), cudaSuccess);

  GdnPrefillParams p;
  p.num_k_heads = d.num_k_heads;
  p.num_v_heads = HV;
  p.num_seqs = n;
  p.cu_seqlens = dcu.get();
  p.qkv = dqkv.get();
  p.qkv_row_stride = qkv_stride;
  p.a = ab_bf16 ? static_cast<const void*>(da16.get()) : da.get();
  p.b = ab_bf16 ? static_cast<const void*>(db16.get()) : db.get();
  p.ab_row_stride = ab_stride;
  p.ab_dtype = c.ab_dtype;
  p.A_log = dAlog.get();
  p.dt_bias = ddt.get();
  p.state = dstate.get();
  p.num_slots = num_slots;
  p.slot_indices = dslots.get();
  p.has_initial_state = c.init.empty() ? nullptr : dinit.get();
  p.o = o_bf16 ? static_cast<void*>(o16.get()) : o.get();
  p.o_row_stride = o_stride;
  p.o_dtype = c.o_dtype;
  DeviceBuffer<float> scratch;
  if (two_pass) {
    p.num_tokens = tokens;
    p.scratch_floats = GdnPrefillParams::ScratchFloats(tokens, HV) + 1;
    ASSERT_TRUE(scratch.Resize(static_cast<size_t>(p.scratch_floats)));
    ASSERT_EQ(scratch.Fill(0xff), cudaSuccess);
    p.scratch = scratch.get();
  }
  const absl::Status launched = LaunchGdnChunkedPrefill(p, nullptr);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_EQ(testing::CudaLastError(), "");

  // Output rows in fp32 (bf16 widened: exact, NaN stays NaN).
  const std::vector<float> got_o =
      o_bf16 ? testing::FromBf16(o16.Download()) : o.Download();
  const std::vector<float> got_pool = dstate.Download();
  // Row t's [HV, V] part of the output, and its padding.
  auto orow = [&](int t) { return &got_o[static_cast<size_t>(t) * o_stride]; };
  double max_o = 0.0, max_s = 0.0;
  for (int s = 0; s < n; ++s) {
    const int T = c.lens[s];
    if (slots[s] < 0) {
      // Untouched: still the poison.
      for (int t = cu[s]; t < cu[s + 1]; ++t) {
        for (int i = 0; i < o_stride; ++i) ASSERT_TRUE(std::isnan(orow(t)[i]));
      }
      continue;
    }
    std::vector<float> q(static_cast<size_t>(T) * d.key_dim()), k(q.size());
    std::vector<float> v(static_cast<size_t>(T) * d.value_dim()), g(T * HV),
        beta(T * HV), want_o(v.size());
    for (int t = 0; t < T; ++t) {
      PrepareQkv(d, &qkv[static_cast<size_t>(cu[s] + t) * qkv_stride],
                 &q[static_cast<size_t>(t) * d.key_dim()],
                 &k[static_cast<size_t>(t) * d.key_dim()],
                 &v[static_cast<size_t>(t) * vd]);
      Gates(HV, &a[(cu[s] + t) * ab_stride], &b[(cu[s] + t) * ab_stride],
            A_log.data(), dt_bias.data(), &g[t * HV], &beta[t * HV]);
    }
    std::vector<float> st(sf, 0.0f);
    if (Continues(c, s)) {
      st.assign(&pool[slots[s] * sf], &pool[slots[s] * sf] + sf);
    }
    RecurrentForward(d, T, q.data(), k.data(), v.data(), g.data(), beta.data(),
                     st.data(), want_o.data());
    // The sequence's output rows without their padding, which stays poison.
    std::vector<float> go(want_o.size());
    for (int t = 0; t < T; ++t) {
      std::copy(orow(cu[s] + t), orow(cu[s] + t) + vd, &go[t * vd]);
      for (int i = vd; i < o_stride; ++i) {
        ASSERT_TRUE(std::isnan(orow(cu[s] + t)[i])) << "o padding, seq " << s;
      }
    }
    ASSERT_TRUE(testing::AllFinite(go.data(), go.size())) << "seq " << s;
    const double eo = RelErr(go.data(), want_o.data(), want_o.size());
    const double es = RelErr(&got_pool[slots[s] * sf], st.data(), sf);
    max_o = std::max(max_o, eo);
    max_s = std::max(max_s, es);
    // A bf16 output is the fp32 one rounded: within half a bf16 ulp (2^-9
    // relative) of it.
    EXPECT_LT(eo, o_bf16 ? 2.5e-3 : 2e-5) << "seq " << s << " T " << T;
    EXPECT_LT(es, 2e-5) << "seq " << s << " T " << T;
  }
  // Rows before cu_seqlens[0] (and the spare row of an empty call): untouched.
  for (int t = 0; t < cu[0] || (tokens == 0 && t < rows); ++t) {
    for (int i = 0; i < o_stride; ++i) {
      ASSERT_TRUE(std::isnan(orow(t)[i])) << "row " << t;
    }
  }
  std::printf(
      "prefill HV=%d (%s, a/b %s, o %s): max out rel err %.3g, max state rel "
      "err %.3g\n",
      HV, two_pass ? "two-pass" : "single pass", DTypeName(c.ab_dtype),
      DTypeName(c.o_dtype), max_o, max_s);
  // Slot 0 and the last slot are in no sequence: untouched.
  for (int s : {0, num_slots - 1}) {
    EXPECT_EQ(0, std::memcmp(&got_pool[s * sf], &pool[s * sf], sf * 4));
  }
}

TEST(ChunkedPrefillTest, MatchesTokenLoopVarlen) {
  GDN_SKIP_WITHOUT_GPU();
  PrefillCase c;
  c.lens = {1, 63, 64, 65, 200, 7, 9};
  c.init = {0, 1, 0, 1, 0, 1, 1};
  for (bool two_pass : {false, true}) RunPrefill(c, 1, two_pass);
}

TEST(ChunkedPrefillTest, SixteenValueHeads) {
  GDN_SKIP_WITHOUT_GPU();
  PrefillCase c;
  c.hv = 16;
  c.lens = {130, 3, 5};
  c.init = {1, 0, 1};
  for (bool two_pass : {false, true}) RunPrefill(c, 2, two_pass);
}

// cu_seqlens starting past the first chunk: the two-pass chunk ids below the
// first sequence's own none (prefill_two_pass.cu, ChunkSeq). 16/48 heads:
// the chunk pass loops over three value heads per key head.
TEST(ChunkedPrefillTest, SequencesAfterLeadingRows) {
  GDN_SKIP_WITHOUT_GPU();
  PrefillCase c;
  c.hv = 48;
  c.lens = {70, 5, 3};
  c.init = {1, 0, 1};
  c.first_token = 100;
  for (bool two_pass : {false, true}) RunPrefill(c, 5, two_pass);
}

// One sequence of 16 value heads: 16 x 8 CTAs of 16 rows fit the GPU once
// (any GPU of >= 128 SMs, e.g. an H200), so the state pass runs its 16-row
// tile here (StateTileRows) and 32-row tiles in the other cases.
TEST(ChunkedPrefillTest, TwoPassOneSequenceSmallGrid) {
  GDN_SKIP_WITHOUT_GPU();
  PrefillCase c;
  c.hv = 16;
  c.lens = {300};
  c.init = {1};
  c.pad_last = false;
  RunPrefill(c, 4, true);
}

// Four value heads per key head (the chunk pass loops over them), a
// sequence of many chunks, and empty and one-token sequences between others.
TEST(ChunkedPrefillTest, TwoPassSixtyFourValueHeads) {
  GDN_SKIP_WITHOUT_GPU();
  PrefillCase c;
  c.hv = 64;
  c.lens = {0, 517, 1, 64, 33, 0, 2};
  c.init = {1, 1, 0, 1, 0, 0, 1};
  RunPrefill(c, 3, true);
}

// Configurations drawn from the whole space, with a fixed seed: every head
// count, one to five sequences of lengths at and around the chunk size (empty
// and one-token ones too) or random, fresh and continued states and the null
// flags (every sequence continues), leading rows before cu_seqlens[0], both
// routes, a / b and o in either dtype, padded row strides. The emulation runs
// 24 of them, a GPU the first 8.
TEST(ChunkedPrefillTest, RandomConfigurations) {
  GDN_SKIP_WITHOUT_GPU();
  constexpr int kConfigs = testing::RandomConfigCount(24);
  std::mt19937 pick(2027);
  const int kHvs[] = {16, 32, 48, 64};
  const int kLens[] = {0, 1, 2, 31, 63, 64, 65, 127, 128, 129};
  auto dtype = [&] { return pick() % 2 == 0 ? DType::kBf16 : DType::kFp32; };
  for (int i = 0; i < kConfigs; ++i) {
    PrefillCase c;
    c.hv = kHvs[pick() % 4];
    const int n = 1 + static_cast<int>(pick() % 5);
    for (int s = 0; s < n; ++s) {
      c.lens.push_back(pick() % 4 == 0 ? 1 + static_cast<int>(pick() % 200)
                                       : kLens[pick() % 10]);
    }
    if (pick() % 4 != 0) {
      for (int s = 0; s < n; ++s) c.init.push_back(pick() % 2);
    }
    c.pad_last = n > 1 && pick() % 2 == 0;
    c.first_token = pick() % 3 == 0 ? 1 + static_cast<int>(pick() % 80) : 0;
    c.ab_dtype = dtype();
    c.o_dtype = dtype();
    c.qkv_pad = 8 * static_cast<int>(pick() % 3);
    c.ab_pad = static_cast<int>(pick() % 3);
    c.o_pad = pick() % 2 == 0 ? 0 : 1 + static_cast<int>(pick() % 9);
    // The two-pass route needs tokens (num_tokens > 0, ScratchValidate).
    const bool two_pass =
        pick() % 2 == 0 && std::accumulate(c.lens.begin(), c.lens.end(), 0) > 0;
    std::string lens;
    for (int len : c.lens) lens += " " + std::to_string(len);
    SCOPED_TRACE(::testing::Message()
                 << "config " << i << ": hv " << c.hv << " lens" << lens
                 << (c.init.empty() ? " (all continue)" : "") << " pad_last "
                 << c.pad_last << " first_token " << c.first_token << " a/b "
                 << DTypeName(c.ab_dtype) << " o " << DTypeName(c.o_dtype)
                 << " pads " << c.qkv_pad << "/" << c.ab_pad << "/" << c.o_pad
                 << (two_pass ? " two-pass" : " single pass"));
    RunPrefill(c, 700 + i, two_pass);
  }
}

TEST(ChunkedPrefillTest, ParamsValidate) {
  GdnPrefillParams p;
  p.num_seqs = 1;
  EXPECT_FALSE(p.Validate().ok());
  p.head_dim = 64;
  EXPECT_FALSE(p.Validate().ok());
}

TEST(ChunkedPrefillTest, ScratchValidate) {
  GdnPrefillParams p;
  // Non-null stand-ins: Validate reads no buffer.
  static float buf[4] __attribute__((aligned(16)));
  p.num_seqs = 1;
  p.cu_seqlens = reinterpret_cast<const int32_t*>(buf);
  p.qkv = reinterpret_cast<const uint16_t*>(buf);
  p.qkv_row_stride = 2 * 16 * 128 + 32 * 128;
  p.a = p.b = buf;
  p.ab_row_stride = 32;
  p.A_log = p.dt_bias = buf;
  p.state = buf;
  p.num_slots = 1;
  p.slot_indices = reinterpret_cast<const int32_t*>(buf);
  p.o = buf;
  p.o_row_stride = 32 * 128;
  ASSERT_TRUE(p.Validate().ok());  // single pass
  p.scratch = buf;
  p.scratch_floats = GdnPrefillParams::ScratchFloats(10, 32);
  EXPECT_FALSE(p.Validate().ok());  // num_tokens missing
  p.num_tokens = 10;
  EXPECT_TRUE(p.Validate().ok());
  p.num_tokens = 11;  // more tokens than the scratch covers
  EXPECT_FALSE(p.Validate().ok());
  p.num_tokens = 10;
  p.scratch = buf + 1;  // misaligned
  EXPECT_FALSE(p.Validate().ok());
}

}  // namespace
}  // namespace rollout::gdn
