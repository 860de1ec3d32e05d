// The GDN layer pair (conv update, then the decode step with the overlap the
// pair's kAuto picks: kPrologue at small batch) against the same two kernels
// launched one after the other without any overlap: bit for bit equal over
// chained steps (the ReplaySSM ones across a flush, with the cursor advance
// between steps as the engine runs it). GPU cases skip without a GPU; the
// validation and rule cases run anywhere.
#include "gdn/layer_decode.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gdn/test_util.h"
#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using testing::DeviceBuffer;
using testing::kH100Gbps;
using testing::kH200Gbps;
using testing::kHeadCut;
using testing::ToBf16;
using testing::ToDevice;

constexpr int kH = 16 / kHeadCut, kD = 128, kRing = 4;

std::vector<uint16_t> RandomBf16(std::mt19937& rng, size_t n, float stddev) {
  return ToBf16(testing::RandomBf16Exact(rng, n, stddev));
}

// Everything one path (the pair, or the plain launches) updates, from the
// same initial contents.
struct Mutable {
  DeviceBuffer<float> state;          // [slots, HV, V, K]
  DeviceBuffer<uint16_t> conv_state;  // [slots, 3, conv_dim]
  DeviceBuffer<uint16_t> qkv;         // [B, conv_dim] (the conv's y)
  DeviceBuffer<uint16_t> o;           // [steps, B, HV * V]
  DeviceBuffer<uint16_t> ring_k;      // [rings, H, L, K]
  DeviceBuffer<float> ring_ks, ring_d, ring_g;
  DeviceBuffer<int32_t> write_pos;  // [B]
};

struct LayerCase {
  int hv = 32;
  int batch = 1;
  bool replay = false;
  int steps = 3;
};

// Runs `c.steps` layer steps on both paths and compares every output and
// every updated buffer.
void RunPair(const LayerCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int B = c.batch, HV = c.hv / kHeadCut, conv_dim = (2 * kH + HV) * kD;
  const int num_slots = B + 3, steps = c.steps;
  const size_t sf = static_cast<size_t>(HV) * kD * kD;
  std::vector<int32_t> slots(num_slots);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(B);
  if (B >= 3) slots[1] = -1;  // a padding row
  std::vector<int32_t> rings(B);
  std::iota(rings.begin(), rings.end(), 0);
  if (B >= 3) rings[2] = -1;  // an OFF row (packed path inside the launch)

  const std::vector<float> state0 =
      testing::RandomNormal(rng, static_cast<size_t>(num_slots) * sf, 0.05f);
  const std::vector<uint16_t> conv0 =
      RandomBf16(rng, static_cast<size_t>(num_slots) * 3 * conv_dim, 1.0f);
  DeviceBuffer<uint16_t> x = ToDevice(
      RandomBf16(rng, static_cast<size_t>(steps) * B * conv_dim, 1.0f));
  DeviceBuffer<uint16_t> w =
      ToDevice(RandomBf16(rng, static_cast<size_t>(conv_dim) * 4, 0.5f));
  DeviceBuffer<uint16_t> a = ToDevice(RandomBf16(rng, B * HV, 1.0f));
  DeviceBuffer<uint16_t> b = ToDevice(RandomBf16(rng, B * HV, 1.0f));
  DeviceBuffer<float> A_log = ToDevice(testing::RandomNormal(rng, HV, 0.5f));
  DeviceBuffer<float> dt_bias = ToDevice(testing::RandomNormal(rng, HV, 0.5f));
  DeviceBuffer<int32_t> dslots = ToDevice(slots), drings = ToDevice(rings);

  auto make = [&](Mutable& m) {
    ASSERT_EQ(m.state.Upload(state0), cudaSuccess);
    ASSERT_EQ(m.conv_state.Upload(conv0), cudaSuccess);
    ASSERT_TRUE(m.qkv.Resize(static_cast<size_t>(B) * conv_dim));
    ASSERT_TRUE(m.o.Resize(static_cast<size_t>(steps) * B * HV * kD));
    ASSERT_EQ(m.o.Fill(0xff), cudaSuccess);  // poison: every element written
    const size_t nk = static_cast<size_t>(B) * kH * kRing;
    const size_t nd = static_cast<size_t>(B) * HV * kRing;
    ASSERT_TRUE(m.ring_k.Resize(nk * kD));
    ASSERT_TRUE(m.ring_ks.Resize(nk));
    ASSERT_TRUE(m.ring_d.Resize(nd * kD));
    ASSERT_TRUE(m.ring_g.Resize(nd));
    for (auto* buf : {&m.ring_ks, &m.ring_d, &m.ring_g}) {
      ASSERT_EQ(buf->Fill(0), cudaSuccess);
    }
    ASSERT_EQ(m.ring_k.Fill(0), cudaSuccess);
    ASSERT_EQ(m.write_pos.Upload(std::vector<int32_t>(B, 0)), cudaSuccess);
  };
  Mutable pair, plain;
  make(pair);
  make(plain);

  auto conv_params = [&](Mutable& m, int step) {
    GdnConvParams p;
    p.conv_dim = conv_dim;
    p.num_seqs = B;
    p.x = x.get() + static_cast<size_t>(step) * B * conv_dim;
    p.x_row_stride = conv_dim;
    p.weight = w.get();
    p.conv_state = m.conv_state.get();
    p.num_slots = num_slots;
    p.slot_indices = dslots.get();
    p.y = m.qkv.get();
    p.y_row_stride = conv_dim;
    return p;
  };
  auto replay_params = [&](Mutable& m, int step, DecodeOverlap overlap) {
    GdnReplayParams r;
    GdnDecodeParams& p = r.step;
    p.num_k_heads = kH;
    p.num_v_heads = HV;
    p.batch = B;
    p.qkv = m.qkv.get();
    p.qkv_row_stride = conv_dim;
    p.a = a.get();
    p.b = b.get();
    p.ab_row_stride = HV;
    p.A_log = A_log.get();
    p.dt_bias = dt_bias.get();
    p.state = m.state.get();
    p.num_slots = num_slots;
    p.slot_indices = dslots.get();
    p.o = m.o.get() + static_cast<size_t>(step) * B * HV * kD;
    p.o_row_stride = static_cast<int64_t>(HV) * kD;
    p.overlap = overlap;
    r.ring.length = kRing;
    r.ring.k = m.ring_k.get();
    r.ring.k_scale = m.ring_ks.get();
    r.ring.d = m.ring_d.get();
    r.ring.g = m.ring_g.get();
    r.ring.num_ring_slots = B;
    r.ring_indices = drings.get();
    r.write_pos = m.write_pos.get();
    return r;
  };
  auto advance = [&](Mutable& m) {
    GdnReplayAdvanceParams p;
    p.batch = B;
    p.ring_length = kRing;
    p.ring_indices = drings.get();
    p.write_pos = m.write_pos.get();
    return LaunchGdnReplayAdvance(p, nullptr);
  };

  // Every step back to back on one stream: the pair's decode kernels overlap
  // their conv kernels, and each step follows the previous one at once.
  for (int s = 0; s < steps; ++s) {
    const GdnReplayParams r = replay_params(pair, s, DecodeOverlap::kAuto);
    if (c.replay) {
      ASSERT_TRUE(
          LaunchGdnLayerReplayDecode(conv_params(pair, s), r, nullptr).ok());
      ASSERT_TRUE(advance(pair).ok());
    } else {
      ASSERT_TRUE(
          LaunchGdnLayerDecode(conv_params(pair, s), r.step, nullptr).ok());
    }
  }
  for (int s = 0; s < steps; ++s) {
    const GdnReplayParams r = replay_params(plain, s, DecodeOverlap::kNone);
    ASSERT_TRUE(LaunchGdnCausalConv(conv_params(plain, s), nullptr).ok());
    if (c.replay) {
      ASSERT_TRUE(LaunchGdnReplayDecode(r, nullptr).ok());
      ASSERT_TRUE(advance(plain).ok());
    } else {
      ASSERT_TRUE(LaunchGdnPackedDecode(r.step, nullptr).ok());
    }
  }
  ASSERT_EQ(testing::CudaLastError(), "");

  const std::vector<uint16_t> o = pair.o.Download();
  for (size_t i = 0; i < o.size(); ++i) {
    ASSERT_NE(o[i], 0xffff) << "output element " << i << " not written";
  }
  EXPECT_TRUE(o == plain.o.Download()) << "outputs";
  EXPECT_TRUE(pair.state.Download() == plain.state.Download()) << "state";
  EXPECT_TRUE(pair.conv_state.Download() == plain.conv_state.Download())
      << "conv state";
  EXPECT_TRUE(pair.ring_k.Download() == plain.ring_k.Download()) << "ring k";
  EXPECT_TRUE(pair.ring_d.Download() == plain.ring_d.Download()) << "ring d";
  EXPECT_TRUE(pair.ring_g.Download() == plain.ring_g.Download()) << "ring g";
  EXPECT_TRUE(pair.write_pos.Download() == plain.write_pos.Download())
      << "cursors";
  // The state moved (a test of nothing would pass the comparisons too).
  EXPECT_FALSE(pair.state.Download() == state0) << "state never updated";
}

TEST(LayerDecodeTest, PackedPairEqualsPlainLaunches) {
  GDN_SKIP_WITHOUT_GPU();
  // kPrologue (16/32 B = 1, 16/16 B = 8), then kLaunch (16/16 B = 37).
  RunPair({32, 1, false, 3}, 1);
  RunPair({16, 8, false, 3}, 2);
  RunPair({16, 37, false, 3}, 3);
}

TEST(LayerDecodeTest, ReplayPairEqualsPlainLaunchesAcrossAFlush) {
  GDN_SKIP_WITHOUT_GPU();
  // L = 4, six steps: non-flush steps, a flush, non-flush steps again.
  RunPair({32, 1, true, 6}, 4);
  RunPair({32, 5, true, 6}, 5);
  RunPair({16, 37, true, 6}, 6);
}

TEST(LayerDecodeTest, OverlapRule) {
  for (double gbps : {0.0, kH200Gbps, kH100Gbps}) {
    EXPECT_EQ(LayerDecodeOverlapFor(1, 32, false, gbps),
              DecodeOverlap::kPrologue);
    EXPECT_EQ(LayerDecodeOverlapFor(9, 32, false, gbps),
              DecodeOverlapFor(9, 32, false, gbps));
    EXPECT_EQ(LayerDecodeOverlapFor(128, 32, true, gbps),
              DecodeOverlap::kPrologue);
    EXPECT_EQ(LayerDecodeOverlapFor(8, 32, true, gbps),
              DecodeOverlap::kPrologue);
    for (int rows : {1, 8, 64, 1024}) {
      for (bool replay : {false, true}) {
        EXPECT_NE(LayerDecodeOverlapFor(rows, 16, replay, gbps),
                  DecodeOverlap::kAuto);
      }
    }
  }
  // 256 packed pairs: kPrologue with 64-row tiles (the H200's table), the
  // step's plain launch with whole heads (a narrow-memory card's).
  EXPECT_EQ(LayerDecodeOverlapFor(8, 32, false, kH200Gbps),
            DecodeOverlap::kPrologue);
  EXPECT_EQ(LayerDecodeOverlapFor(8, 32, false, kH100Gbps),
            DecodeOverlapFor(8, 32, false, kH100Gbps));
  EXPECT_EQ(LayerDecodeOverlapFor(5, 32, false, kH100Gbps),
            DecodeOverlap::kPrologue);
  // Past 4096 ReplaySSM pairs: the step's own launch on the H200 (and a card
  // that reports no bandwidth), kPrologue on a narrow-memory card.
  for (double gbps : {0.0, kH200Gbps}) {
    EXPECT_EQ(LayerDecodeOverlapFor(129, 32, true, gbps),
              DecodeOverlapFor(129, 32, true, gbps));
    EXPECT_EQ(LayerDecodeOverlapFor(512, 32, true, gbps),
              DecodeOverlapFor(512, 32, true, gbps));
  }
  EXPECT_EQ(LayerDecodeOverlapFor(129, 32, true, kH100Gbps),
            DecodeOverlap::kPrologue);
  EXPECT_EQ(LayerDecodeOverlapFor(512, 32, true, kH100Gbps),
            DecodeOverlap::kPrologue);
}

// A consistent pair of parameter sets over fake (never dereferenced) aligned
// device addresses.
struct FakePair {
  GdnConvParams conv;
  GdnDecodeParams step;
  FakePair() {
    auto addr = [](uintptr_t a) { return reinterpret_cast<void*>(a << 12); };
    // The params' default heads (16 / 32), whatever kH the tests run with.
    const int conv_dim = (2 * 16 + 32) * kD;
    step.batch = 4;
    step.qkv = static_cast<const uint16_t*>(addr(1));
    step.qkv_row_stride = conv_dim;
    step.a = addr(2);
    step.b = addr(3);
    step.ab_row_stride = 32;
    step.A_log = static_cast<const float*>(addr(4));
    step.dt_bias = static_cast<const float*>(addr(5));
    step.state = static_cast<float*>(addr(6));
    step.num_slots = 8;
    step.slot_indices = static_cast<const int32_t*>(addr(7));
    step.o = addr(8);
    step.o_row_stride = 32 * kD;
    conv.conv_dim = conv_dim;
    conv.num_seqs = 4;
    conv.x = static_cast<const uint16_t*>(addr(9));
    conv.x_row_stride = conv_dim;
    conv.weight = static_cast<const uint16_t*>(addr(10));
    conv.conv_state = static_cast<uint16_t*>(addr(11));
    conv.num_slots = 8;
    conv.slot_indices = static_cast<const int32_t*>(addr(7));
    conv.y = const_cast<uint16_t*>(step.qkv);
    conv.y_row_stride = conv_dim;
  }
};

TEST(LayerDecodeTest, ValidateChecksThePair) {
  EXPECT_TRUE(ValidateLayerDecode(FakePair().conv, FakePair().step).ok());
  auto code = [](const FakePair& f) {
    return ValidateLayerDecode(f.conv, f.step).code();
  };
  constexpr auto kBad = absl::StatusCode::kInvalidArgument;
  FakePair f;
  f.conv.y += 8;  // not the decode step's input
  EXPECT_EQ(code(f), kBad);
  f = FakePair();
  f.conv.y_row_stride += 8;
  EXPECT_EQ(code(f), kBad);
  f = FakePair();
  f.conv.num_seqs = 3;
  EXPECT_EQ(code(f), kBad);
  f = FakePair();
  f.conv.cu_seqlens = static_cast<const int32_t*>(f.conv.slot_indices);
  f.conv.max_seqlen = 2;  // prefill form
  EXPECT_EQ(code(f), kBad);
  f = FakePair();
  f.step.num_v_heads = 16;  // conv_dim is that of 32 value heads
  f.step.ab_row_stride = 16;
  EXPECT_EQ(code(f), kBad);
  f = FakePair();
  f.step.overlap = static_cast<DecodeOverlap>(9);  // a half is invalid
  EXPECT_EQ(code(f), kBad);
  // Nothing is launched for an invalid pair (no GPU needed to see it fail).
  f.conv.y += 8;
  EXPECT_EQ(LaunchGdnLayerDecode(f.conv, f.step, nullptr).code(), kBad);
}

}  // namespace
}  // namespace rollout::gdn
