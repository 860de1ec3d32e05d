// GPU chunked prefill against the CPU token loop (the definition): varlen
// sequences of lengths around the chunk size, fresh and continued states,
// padding sequences. Skips without a GPU.
#include "gdn/prefill.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
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
  std::vector<int8_t> init;
  bool pad_last = true;  // the last sequence is a padding one (slot -1)
  int first_token = 0;   // cu_seqlens[0]: rows before it belong to no one
};

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
  const size_t sf = d.state_floats();
  std::vector<int32_t> cu(n + 1, c.first_token);
  for (int s = 0; s < n; ++s) cu[s + 1] = cu[s] + c.lens[s];
  const int tokens = cu[n];
  std::vector<float> qkv =
      testing::RandomBf16Exact(rng, static_cast<size_t>(tokens) * cd);
  std::vector<float> a =
      testing::RandomBf16Exact(rng, static_cast<size_t>(tokens) * HV);
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

  DeviceBuffer<uint16_t> dqkv = ToDevice(ToBf16(qkv));
  DeviceBuffer<float> da = ToDevice(a), db = ToDevice(b);
  DeviceBuffer<float> dAlog = ToDevice(A_log), ddt = ToDevice(dt_bias);
  DeviceBuffer<float> dstate = ToDevice(pool);
  DeviceBuffer<int32_t> dcu = ToDevice(cu), dslots = ToDevice(slots);
  DeviceBuffer<int8_t> dinit = ToDevice(c.init);
  DeviceBuffer<float> o(static_cast<size_t>(tokens) * d.value_dim());
  ASSERT_EQ(o.Fill(0xff), cudaSuccess);

  GdnPrefillParams p;
  p.num_k_heads = d.num_k_heads;
  p.num_v_heads = HV;
  p.num_seqs = n;
  p.cu_seqlens = dcu.get();
  p.qkv = dqkv.get();
  p.qkv_row_stride = cd;
  p.a = da.get();
  p.b = db.get();
  p.ab_row_stride = HV;
  p.ab_dtype = DType::kFp32;
  p.A_log = dAlog.get();
  p.dt_bias = ddt.get();
  p.state = dstate.get();
  p.num_slots = num_slots;
  p.slot_indices = dslots.get();
  p.has_initial_state = dinit.get();
  p.o = o.get();
  p.o_row_stride = d.value_dim();
  p.o_dtype = DType::kFp32;
  DeviceBuffer<float> scratch;
  if (two_pass) {
    p.num_tokens = tokens;
    p.scratch_floats = GdnPrefillParams::ScratchFloats(tokens, HV) + 1;
    ASSERT_TRUE(scratch.Resize(static_cast<size_t>(p.scratch_floats)));
    ASSERT_EQ(scratch.Fill(0xff), cudaSuccess);
    p.scratch = scratch.get();
  }
  ASSERT_TRUE(LaunchGdnChunkedPrefill(p, nullptr).ok());
  ASSERT_EQ(testing::CudaLastError(), "");

  const std::vector<float> got_o = o.Download();
  const std::vector<float> got_pool = dstate.Download();
  double max_o = 0.0, max_s = 0.0;
  for (int s = 0; s < n; ++s) {
    const int T = c.lens[s];
    if (slots[s] < 0) {
      // Untouched: still the poison.
      for (size_t i = 0; i < static_cast<size_t>(T) * d.value_dim(); ++i) {
        ASSERT_TRUE(std::isnan(got_o[cu[s] * d.value_dim() + i]));
      }
      continue;
    }
    std::vector<float> q(static_cast<size_t>(T) * d.key_dim()), k(q.size());
    std::vector<float> v(static_cast<size_t>(T) * d.value_dim()), g(T * HV),
        beta(T * HV), want_o(v.size());
    for (int t = 0; t < T; ++t) {
      PrepareQkv(d, &qkv[static_cast<size_t>(cu[s] + t) * cd],
                 &q[static_cast<size_t>(t) * d.key_dim()],
                 &k[static_cast<size_t>(t) * d.key_dim()],
                 &v[static_cast<size_t>(t) * d.value_dim()]);
      Gates(HV, &a[(cu[s] + t) * HV], &b[(cu[s] + t) * HV], A_log.data(),
            dt_bias.data(), &g[t * HV], &beta[t * HV]);
    }
    std::vector<float> st(sf, 0.0f);
    if (c.init[s]) st.assign(&pool[slots[s] * sf], &pool[slots[s] * sf] + sf);
    RecurrentForward(d, T, q.data(), k.data(), v.data(), g.data(), beta.data(),
                     st.data(), want_o.data());
    const float* go = &got_o[static_cast<size_t>(cu[s]) * d.value_dim()];
    ASSERT_TRUE(testing::AllFinite(go, want_o.size())) << "seq " << s;
    const double eo = RelErr(go, want_o.data(), want_o.size());
    const double es = RelErr(&got_pool[slots[s] * sf], st.data(), sf);
    max_o = std::max(max_o, eo);
    max_s = std::max(max_s, es);
    EXPECT_LT(eo, 2e-5) << "seq " << s << " T " << T;
    EXPECT_LT(es, 2e-5) << "seq " << s << " T " << T;
  }
  // Rows before cu_seqlens[0]: untouched.
  for (size_t i = 0; i < static_cast<size_t>(cu[0]) * d.value_dim(); ++i) {
    ASSERT_TRUE(std::isnan(got_o[i])) << "row " << i / d.value_dim();
  }
  std::printf(
      "prefill HV=%d (%s): max out rel err %.3g, max state rel err %.3g\n", HV,
      two_pass ? "two-pass" : "single pass", max_o, max_s);
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
