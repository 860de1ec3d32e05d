// GPU causal conv (decode update and varlen prefill) against the CPU
// reference. Skips without a GPU.
#include "gdn/conv.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gdn/reference.h"
#include "gdn/test_util.h"
#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using testing::DeviceBuffer;
using testing::FromBf16;
using testing::RoundBf16;
using testing::ToBf16;
using testing::ToDevice;

GdnDims Dims() {
  GdnDims d;
  d.num_k_heads = 16;
  d.num_v_heads = 32;
  d.head_k_dim = 128;
  d.head_v_dim = 128;
  return d;
}

// Each GPU output is the fp32 result rounded once to bf16; the reference's
// fp32 value rounded the same way may differ by one bf16 ulp where the two
// fp32 results straddle a rounding boundary.
void ExpectBf16Close(const std::vector<float>& got,
                     const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int worse = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << " element " << i;
    const float w = RoundBf16(want[i]);
    const float tol = std::max(std::abs(w) * (1.0f / 128.0f), 1e-30f);
    if (std::abs(got[i] - w) > tol) ++worse;
  }
  EXPECT_EQ(worse, 0) << what;
}

struct ConvCase {
  std::vector<int> lens;     // tokens per sequence
  std::vector<int8_t> init;  // has_initial_state per sequence
  bool decode = false;       // cu_seqlens = null
  GdnDims dims = Dims();
};

void RunConv(const ConvCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const GdnDims& d = c.dims;
  const int C = d.conv_dim(), S = d.conv_kernel - 1;
  const int n = static_cast<int>(c.lens.size());
  const int num_slots = n + 3;
  std::vector<int32_t> cu(n + 1, 0);
  for (int s = 0; s < n; ++s) cu[s + 1] = cu[s] + c.lens[s];
  const int tokens = cu[n];
  const int64_t xs = C + 16, ys = C + 8;  // padded strides
  std::vector<float> x =
      testing::RandomBf16Exact(rng, static_cast<size_t>(tokens) * C);
  std::vector<float> w =
      testing::RandomBf16Exact(rng, static_cast<size_t>(C) * 4, 0.5f);
  std::vector<float> states =
      testing::RandomBf16Exact(rng, static_cast<size_t>(num_slots) * S * C);
  std::vector<int32_t> slots(n);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots[n / 2] = -1;  // padding sequence

  std::vector<uint16_t> xh(static_cast<size_t>(tokens) * xs, 0x7fc0);
  for (int t = 0; t < tokens; ++t) {
    for (int ch = 0; ch < C; ++ch) xh[t * xs + ch] = ToBf16(x[t * C + ch]);
  }
  DeviceBuffer<uint16_t> dx = ToDevice(xh), dw = ToDevice(ToBf16(w));
  DeviceBuffer<uint16_t> dstate = ToDevice(ToBf16(states));
  DeviceBuffer<uint16_t> dy(static_cast<size_t>(tokens) * ys);
  ASSERT_EQ(dy.Fill(0xff), cudaSuccess);
  DeviceBuffer<int32_t> dcu = ToDevice(cu), dslots = ToDevice(slots);
  DeviceBuffer<int8_t> dinit = ToDevice(c.init);

  GdnConvParams p;
  p.conv_dim = C;
  p.num_seqs = n;
  p.max_seqlen = c.decode ? 1 : *std::max_element(c.lens.begin(), c.lens.end());
  p.cu_seqlens = c.decode ? nullptr : dcu.get();
  p.x = dx.get();
  p.x_row_stride = xs;
  p.weight = dw.get();
  p.conv_state = dstate.get();
  p.num_slots = num_slots;
  p.slot_indices = dslots.get();
  p.has_initial_state = c.init.empty() ? nullptr : dinit.get();
  p.y = dy.get();
  p.y_row_stride = ys;
  ASSERT_TRUE(LaunchGdnCausalConv(p, nullptr).ok());
  ASSERT_EQ(testing::CudaLastError(), "");

  std::vector<float> want_y(static_cast<size_t>(tokens) * C, 0.0f);
  std::vector<float> want_states = states;
  for (int s = 0; s < n; ++s) {
    if (slots[s] < 0) continue;
    float* st = &want_states[static_cast<size_t>(slots[s]) * S * C];
    if (!c.init.empty() && c.init[s] == 0) std::fill(st, st + S * C, 0.0f);
    CausalConv(d, w.data(), &x[static_cast<size_t>(cu[s]) * C], c.lens[s], st,
               &want_y[static_cast<size_t>(cu[s]) * C]);
  }
  const std::vector<uint16_t> yh = dy.Download();
  std::vector<float> got_y(static_cast<size_t>(tokens) * C);
  for (int t = 0; t < tokens; ++t) {
    for (int ch = 0; ch < C; ++ch)
      got_y[t * C + ch] = FromBf16(yh[t * ys + ch]);
  }
  ExpectBf16Close(got_y, want_y, "conv output");
  // Each y row's padding: untouched (still the poison).
  for (int t = 0; t < tokens; ++t) {
    for (int64_t ch = C; ch < ys; ++ch) {
      ASSERT_EQ(yh[t * ys + ch], 0xffff) << "y padding, token " << t;
    }
  }
  // The state is a copy of bf16 inputs: exact.
  EXPECT_EQ(FromBf16(dstate.Download()), want_states);
}

TEST(CausalConvTest, DecodeUpdate) {
  GDN_SKIP_WITHOUT_GPU();
  ConvCase c;
  c.decode = true;
  c.lens.assign(9, 1);
  RunConv(c, 1);
}

// 16/16 heads; then conv_dim = 2 * 3 * 40 + 6 * 40 = 480 channels, not a
// multiple of a decode CTA's 2048 (part of the CTA idle), over 37 rows with a
// fresh sequence among them.
TEST(CausalConvTest, DecodeUpdateOtherShapes) {
  GDN_SKIP_WITHOUT_GPU();
  ConvCase c;
  c.decode = true;
  c.lens.assign(5, 1);
  c.dims.num_v_heads = 16;
  RunConv(c, 3);
  ConvCase odd;
  odd.decode = true;
  odd.lens.assign(37, 1);
  odd.init.assign(37, 1);
  odd.init[4] = 0;
  odd.dims.num_k_heads = 3;
  odd.dims.num_v_heads = 6;
  odd.dims.head_k_dim = 40;
  odd.dims.head_v_dim = 40;
  ASSERT_EQ(odd.dims.conv_dim(), 480);
  RunConv(odd, 4);
}

TEST(CausalConvTest, VarlenPrefillFreshAndContinued) {
  GDN_SKIP_WITHOUT_GPU();
  ConvCase c;
  c.lens = {1, 2, 3, 5, 16, 17, 40, 100, 33};
  c.init = {0, 1, 0, 1, 0, 1, 0, 1, 1};
  RunConv(c, 2);
}

// Configurations drawn with a fixed seed: head counts and sizes giving other
// channel counts (multiples of 8), decode (one token per row, no
// cu_seqlens) or varlen sequences of 0-70 tokens, fresh, continued and null
// has_initial_state (RunConv makes sequence n / 2 a padding one).
TEST(CausalConvTest, RandomConfigurations) {
  GDN_SKIP_WITHOUT_GPU();
  std::mt19937 pick(2028);
  for (int i = 0; i < 24; ++i) {
    ConvCase c;
    do {
      c.dims.num_k_heads = 1 + static_cast<int>(pick() % 4);
      c.dims.num_v_heads =
          c.dims.num_k_heads * (1 + static_cast<int>(pick() % 4));
      c.dims.head_k_dim = 4 * (1 + static_cast<int>(pick() % 32));
      c.dims.head_v_dim = 4 * (1 + static_cast<int>(pick() % 32));
    } while (c.dims.conv_dim() % 8 != 0);
    c.decode = pick() % 2 == 0;
    const int n = 1 + static_cast<int>(pick() % 12);
    for (int s = 0; s < n; ++s) {
      c.lens.push_back(c.decode ? 1 : static_cast<int>(pick() % 71));
    }
    if (pick() % 3 != 0) {
      for (int s = 0; s < n; ++s) c.init.push_back(pick() % 2);
    }
    SCOPED_TRACE(::testing::Message()
                 << "config " << i << ": H " << c.dims.num_k_heads << " HV "
                 << c.dims.num_v_heads << " K " << c.dims.head_k_dim << " V "
                 << c.dims.head_v_dim << (c.decode ? " decode" : " varlen")
                 << " n " << n << (c.init.empty() ? " (all continue)" : ""));
    RunConv(c, 300 + i);
  }
}

TEST(CausalConvTest, ParamsValidate) {
  GdnConvParams p;
  p.conv_dim = 12;
  p.num_seqs = 1;
  EXPECT_FALSE(p.Validate().ok());  // not a multiple of 8
  p.conv_dim = 16;
  p.conv_kernel = 3;
  EXPECT_FALSE(p.Validate().ok());
}

}  // namespace
}  // namespace rollout::gdn
