// GPU decode kernels against the CPU reference (gdn/reference.h): packed
// decode, ReplaySSM over >= 5 ring cycles, fold, cursor advance. Random
// bf16-exact inputs, odd batches, scattered slots, padding rows, poisoned
// outputs. Skips without a GPU.
#include "gdn/decode.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gdn/reference.h"
#include "gdn/test_util.h"
#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using testing::DeviceBuffer;
using testing::FromBf16;
using testing::kH100Gbps;
using testing::kH200Gbps;
using testing::kHeadCut;
using testing::RelErr;
using testing::ToBf16;
using testing::ToDevice;

constexpr int kD = 128;

GdnDims Dims(int hv) {
  GdnDims d;
  d.num_k_heads = 16 / kHeadCut;
  d.num_v_heads = hv / kHeadCut;
  d.head_k_dim = kD;
  d.head_v_dim = kD;
  return d;
}

// One step's inputs for B rows, bf16-exact, plus per-layer gate parameters.
struct StepInputs {
  std::vector<float> qkv;   // [B, conv_dim]
  std::vector<float> a, b;  // [B, HV]
};

struct Layer {
  GdnDims dims;
  std::vector<float> A_log, dt_bias;  // [HV]
};

Layer MakeLayer(int hv, std::mt19937& rng) {
  Layer l;
  l.dims = Dims(hv);
  std::uniform_real_distribution<float> alog(std::log(0.02f), std::log(4.0f));
  std::uniform_real_distribution<float> dtb(-2.0f, 1.0f);
  for (int h = 0; h < hv; ++h) {
    l.A_log.push_back(alog(rng));
    l.dt_bias.push_back(dtb(rng));
  }
  return l;
}

StepInputs MakeStep(const Layer& l, int B, std::mt19937& rng) {
  StepInputs s;
  s.qkv =
      testing::RandomBf16Exact(rng, static_cast<size_t>(B) * l.dims.conv_dim());
  s.a = testing::RandomBf16Exact(rng,
                                 static_cast<size_t>(B) * l.dims.num_v_heads);
  s.b = testing::RandomBf16Exact(
      rng, static_cast<size_t>(B) * l.dims.num_v_heads, 2.0f);
  return s;
}

// CPU truth of one plain step of row `row` on `state` (one slot).
void ReferenceStep(const Layer& l, const StepInputs& in, int row, float* state,
                   float* o) {
  const GdnDims& d = l.dims;
  std::vector<float> q(d.key_dim()), k(d.key_dim()), v(d.value_dim());
  std::vector<float> g(d.num_v_heads), beta(d.num_v_heads);
  PrepareQkv(d, &in.qkv[static_cast<size_t>(row) * d.conv_dim()], q.data(),
             k.data(), v.data());
  Gates(d.num_v_heads, &in.a[static_cast<size_t>(row) * d.num_v_heads],
        &in.b[static_cast<size_t>(row) * d.num_v_heads], l.A_log.data(),
        l.dt_bias.data(), g.data(), beta.data());
  RecurrentForward(d, 1, q.data(), k.data(), v.data(), g.data(), beta.data(),
                   state, o);
}

// Device copies of a step's inputs in the kernel layout, with padded strides
// (so the tests exercise the stride arguments).
struct DeviceStep {
  int64_t qkv_stride = 0, ab_stride = 0;
  DeviceBuffer<uint16_t> qkv;
  DeviceBuffer<uint16_t> a16, b16;
  DeviceBuffer<float> a32, b32;
};

DeviceStep Upload(const Layer& l, const StepInputs& in, int B) {
  DeviceStep s;
  const int cd = l.dims.conv_dim(), hv = l.dims.num_v_heads;
  s.qkv_stride = cd + 8;
  s.ab_stride = hv + 3;
  std::vector<uint16_t> qkv(static_cast<size_t>(B) * s.qkv_stride, 0x7fc0);
  std::vector<uint16_t> a16(static_cast<size_t>(B) * s.ab_stride, 0x7fc0);
  std::vector<uint16_t> b16(a16.size(), 0x7fc0);
  std::vector<float> a32(a16.size(), NAN), b32(a16.size(), NAN);
  for (int r = 0; r < B; ++r) {
    for (int c = 0; c < cd; ++c) {
      qkv[r * s.qkv_stride + c] =
          ToBf16(in.qkv[static_cast<size_t>(r) * cd + c]);
    }
    for (int h = 0; h < hv; ++h) {
      a16[r * s.ab_stride + h] = ToBf16(in.a[r * hv + h]);
      b16[r * s.ab_stride + h] = ToBf16(in.b[r * hv + h]);
      a32[r * s.ab_stride + h] = in.a[r * hv + h];
      b32[r * s.ab_stride + h] = in.b[r * hv + h];
    }
  }
  s.qkv.Upload(qkv);
  s.a16.Upload(a16);
  s.b16.Upload(b16);
  s.a32.Upload(a32);
  s.b32.Upload(b32);
  return s;
}

// B rows: distinct random slots from a pool of `num_slots`, row `pad_row` (if
// >= 0) a padding row.
std::vector<int32_t> ScatteredSlots(int B, int num_slots, int pad_row,
                                    std::mt19937& rng) {
  std::vector<int32_t> all(num_slots);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<int32_t> slots(all.begin(), all.begin() + B);
  if (pad_row >= 0) slots[pad_row] = -1;
  return slots;
}

struct PackedCase {
  int hv;
  int batch;
  DecodeTile tile;
  DType ab_dtype;
  DType o_dtype;
  bool stream_stores = false;
  DecodeOverlap overlap = DecodeOverlap::kAuto;
  DecodeStatePolicy policy = DecodeStatePolicy::kAuto;
  int steps = 1;  // back-to-back launches with the same inputs
};

void RunPacked(const PackedCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const Layer l = MakeLayer(c.hv, rng);
  const GdnDims& d = l.dims;
  const int B = c.batch, num_slots = 2 * B + 3;
  const size_t sf = d.state_floats();
  const StepInputs in = MakeStep(l, B, rng);
  std::vector<float> pool = testing::RandomNormal(rng, num_slots * sf, 0.3f);
  const std::vector<int32_t> slots =
      ScatteredSlots(B, num_slots, B > 2 ? B / 2 : -1, rng);
  DeviceStep ds = Upload(l, in, B);
  DeviceBuffer<float> state = ToDevice(pool);
  DeviceBuffer<int32_t> dslots = ToDevice(slots);
  const int64_t o_stride = d.value_dim() + 8;
  const bool o32 = c.o_dtype == DType::kFp32;
  DeviceBuffer<float> o32buf(o32 ? B * o_stride : 0);
  DeviceBuffer<uint16_t> o16buf(o32 ? 0 : B * o_stride);
  // Poison (NaN in both dtypes): every element must be written.
  ASSERT_EQ(o32 ? o32buf.Fill(0xff) : o16buf.Fill(0xff), cudaSuccess);

  GdnDecodeParams p;
  p.num_k_heads = d.num_k_heads;
  p.num_v_heads = d.num_v_heads;
  p.batch = B;
  p.qkv = ds.qkv.get();
  p.qkv_row_stride = ds.qkv_stride;
  const bool ab32 = c.ab_dtype == DType::kFp32;
  p.a = ab32 ? static_cast<const void*>(ds.a32.get()) : ds.a16.get();
  p.b = ab32 ? static_cast<const void*>(ds.b32.get()) : ds.b16.get();
  p.ab_row_stride = ds.ab_stride;
  p.ab_dtype = c.ab_dtype;
  DeviceBuffer<float> A_log = ToDevice(l.A_log), dt_bias = ToDevice(l.dt_bias);
  p.A_log = A_log.get();
  p.dt_bias = dt_bias.get();
  p.state = state.get();
  p.num_slots = num_slots;
  p.slot_indices = dslots.get();
  p.o = o32 ? static_cast<void*>(o32buf.get()) : o16buf.get();
  p.o_row_stride = o_stride;
  p.o_dtype = c.o_dtype;
  p.tile = c.tile;
  p.stream_stores = c.stream_stores;
  p.overlap = c.overlap;
  p.state_policy = c.policy;
  cudaStream_t stream;
  // A blocking stream: ordered after the memsets/copies on the legacy stream.
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (int step = 0; step < c.steps; ++step) {
    ASSERT_TRUE(LaunchGdnPackedDecode(p, stream).ok());
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  ASSERT_EQ(testing::CudaLastError(), "");

  // CPU truth on a copy of the pool.
  std::vector<float> want_pool = pool;
  std::vector<float> want_o(static_cast<size_t>(B) * d.value_dim(), 0.0f);
  for (int r = 0; r < B; ++r) {
    if (slots[r] < 0) continue;
    for (int step = 0; step < c.steps; ++step) {
      ReferenceStep(l, in, r, &want_pool[slots[r] * sf],
                    &want_o[static_cast<size_t>(r) * d.value_dim()]);
    }
  }
  const std::vector<float> got_pool = state.Download();
  std::vector<float> got_o(static_cast<size_t>(B) * o_stride);
  if (o32) {
    got_o = o32buf.Download();
  } else {
    got_o = FromBf16(o16buf.Download());
  }
  std::vector<bool> used(num_slots, false);
  const std::string what = std::string("tile ") + DecodeTileName(c.tile) +
                           " HV " + std::to_string(c.hv) + " B " +
                           std::to_string(B);
  for (int r = 0; r < B; ++r) {
    const float* go = &got_o[r * o_stride];
    const float* wo = &want_o[static_cast<size_t>(r) * d.value_dim()];
    ASSERT_TRUE(testing::AllFinite(go, d.value_dim()))
        << what << ": output row " << r << " not fully written";
    if (slots[r] < 0) {
      for (int i = 0; i < d.value_dim(); ++i) ASSERT_EQ(go[i], 0.0f) << what;
      continue;
    }
    used[slots[r]] = true;
    // fp32 out: the kernel's fp32 result; bf16 out: one rounding on top.
    EXPECT_LT(RelErr(go, wo, d.value_dim()), o32 ? 1e-5 : 4e-3)
        << what << " row " << r;
    EXPECT_LT(RelErr(&got_pool[slots[r] * sf], &want_pool[slots[r] * sf], sf),
              1e-5)
        << what << " row " << r;
  }
  for (int s = 0; s < num_slots; ++s) {
    if (used[s]) continue;
    ASSERT_EQ(0, std::memcmp(&got_pool[s * sf], &pool[s * sf], sf * 4))
        << what << ": untouched slot " << s << " changed";
  }
}

// Steps chained on the same slots, each launched during the one before
// (DecodeOverlap::kLaunch: a step waits for the previous one before its first
// memory access, so it reads the state that step wrote): the steps equal as
// many reference steps. kAuto is kLaunch at these sizes (DecodeOverlapFor).
// With the wait after the state loads (kPrologue's order) a step would read
// the state before the previous step had written it.
TEST(PackedDecodeTest, ChainedStepsWithLaunchOverlap) {
  GDN_SKIP_WITHOUT_GPU();
  ASSERT_EQ(DecodeOverlapFor(1, 32, false, kH200Gbps), DecodeOverlap::kLaunch);
  uint32_t seed = 170;
  for (DecodeOverlap o : {DecodeOverlap::kLaunch, DecodeOverlap::kAuto}) {
    PackedCase c{32, 1, DecodeTile::kAuto, DType::kBf16, DType::kFp32};
    c.overlap = o;
    c.steps = 3;
    RunPacked(c, seed++);
  }
  PackedCase c{16, 9, DecodeTile::kBv8, DType::kBf16, DType::kBf16};
  c.overlap = DecodeOverlap::kLaunch;
  c.steps = 4;
  RunPacked(c, seed++);
}

TEST(PackedDecodeTest, MatchesReferenceEveryTileAndHeadCount) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (int hv : {16, 32, 48, 64}) {
    for (int t = 0; t < kNumDecodeTiles; ++t) {
      RunPacked({hv, 5, static_cast<DecodeTile>(t), DType::kBf16, DType::kFp32},
                seed++);
    }
  }
}

TEST(PackedDecodeTest, DtypesAndLargerOddBatch) {
  GDN_SKIP_WITHOUT_GPU();
  RunPacked({32, 37, DecodeTile::kAuto, DType::kFp32, DType::kFp32}, 100);
  RunPacked({32, 37, DecodeTile::kBv8, DType::kBf16, DType::kFp32, true}, 104);
  RunPacked({16, 9, DecodeTile::kBv128, DType::kBf16, DType::kFp32, true,
             DecodeOverlap::kPrologue},
            105);
  RunPacked({32, 5, DecodeTile::kBv4, DType::kBf16, DType::kFp32, false,
             DecodeOverlap::kLaunch},
            106);
  RunPacked({32, 37, DecodeTile::kAuto, DType::kBf16, DType::kBf16}, 101);
  RunPacked({16, 1, DecodeTile::kAuto, DType::kBf16, DType::kBf16}, 102);
  RunPacked({64, 3, DecodeTile::kBv64, DType::kFp32, DType::kBf16}, 103);
}

// The L2 evict-last policy on the state traffic, forced (kAuto picks it only
// from 512 (row, head) pairs), and the plain policy forced where kAuto would
// pick evict-last.
TEST(PackedDecodeTest, StatePolicies) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 150;
  for (DecodeTile tile :
       {DecodeTile::kBv8, DecodeTile::kBv16, DecodeTile::kBv64}) {
    PackedCase c{32, 9, tile, DType::kBf16, DType::kBf16};
    c.policy = DecodeStatePolicy::kEvictLast;
    c.overlap = tile == DecodeTile::kBv16 ? DecodeOverlap::kPrologue
                                          : DecodeOverlap::kLaunch;
    RunPacked(c, seed++);
  }
  PackedCase c{16, 33, DecodeTile::kAuto, DType::kBf16, DType::kFp32};
  c.policy = DecodeStatePolicy::kDefault;
  c.stream_stores = true;
  RunPacked(c, seed++);
}

// ---------------------------------------------------------------- ReplaySSM

// The ring's k format (decode.h), after the first step of RunReplay (every
// cursor at 0, no flush): entry 0 of each appending row's ring holds the raw
// bf16 key of its q|k|v row bit for bit and 1/|k| as the scale; the ring
// slots of OFF and padding rows and the unused ones stay poisoned (0xff).
void ExpectFirstKEntries(const GdnDims& d, const StepInputs& in,
                         const std::vector<int32_t>& slots,
                         const std::vector<int32_t>& rings, int num_rings,
                         int L, const std::vector<uint16_t>& got_k,
                         const std::vector<float>& got_scale) {
  const int H = d.num_k_heads, cd = d.conv_dim();
  std::vector<bool> written(num_rings, false);
  for (int r = 0; r < static_cast<int>(slots.size()); ++r) {
    if (slots[r] < 0 || rings[r] < 0) continue;
    written[rings[r]] = true;
    for (int kh = 0; kh < H; ++kh) {
      const float* k = &in.qkv[static_cast<size_t>(r) * cd + (H + kh) * kD];
      const size_t e = (static_cast<size_t>(rings[r]) * H + kh) * L;  // j = 0
      double nk = 0.0;
      for (int c = 0; c < kD; ++c) {
        ASSERT_EQ(got_k[e * kD + c], ToBf16(k[c]))
            << "row " << r << " key head " << kh << " column " << c;
        nk += static_cast<double>(k[c]) * k[c];
      }
      const double want = 1.0 / std::sqrt(nk + 1e-6);
      EXPECT_NEAR(got_scale[e], want, 1e-6 * want)
          << "row " << r << " key head " << kh;
    }
  }
  constexpr uint32_t kPoison = 0xffffffffu;  // Fill(0xff) of a float
  for (int s = 0; s < num_rings; ++s) {
    if (written[s]) continue;
    for (size_t i = 0; i < static_cast<size_t>(H) * L; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &got_scale[static_cast<size_t>(s) * H * L + i], 4);
      ASSERT_EQ(bits, kPoison) << "unused ring slot " << s << " scale " << i;
    }
    for (size_t i = 0; i < static_cast<size_t>(H) * L * kD; ++i) {
      ASSERT_EQ(got_k[static_cast<size_t>(s) * H * L * kD + i], 0xffff)
          << "unused ring slot " << s << " k element " << i;
    }
  }
}

struct ReplayCase {
  int hv = 32;
  int L = 16;
  int batch = 7;
  int cycles = 5;
  DecodeTile tile = DecodeTile::kAuto;
  DType ring_dtype = DType::kFp32;
  double tol_out = 1e-5;
  double tol_state = 1e-5;
  bool fold_midway = false;
  bool stage_ring = true;
  ReplayCopyOrder copy_order = ReplayCopyOrder::kAuto;
  DecodeOverlap overlap = DecodeOverlap::kAuto;
  DecodeStatePolicy policy = DecodeStatePolicy::kAuto;
  // kPrecomputed or kAuto get a coefficient scratch (NaN-poisoned: only the
  // records of non-flush ON rows may be read, and those the pre-kernel
  // writes first).
  ReplayCoefRoute route = ReplayCoefRoute::kFused;
};

// Drives B rows through cycles * L + 3 steps on the GPU (ReplaySSM kernel +
// cursor advance kernel) and on the CPU (plain recurrent steps, the truth).
// Row roles: row 0 is OFF (packed path in the same launch), row 1 a padding
// row, the others ON with phases staggered by forced flushes at different
// steps. Checks every output, the checkpoint of every row after each of its
// flushes, the unchanged checkpoint between flushes, and the device cursors.
void RunReplay(const ReplayCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const Layer l = MakeLayer(c.hv, rng);
  const GdnDims& d = l.dims;
  const int B = c.batch, L = c.L, num_slots = B + 4, num_rings = B + 2;
  const size_t sf = d.state_floats();
  std::vector<float> pool = testing::RandomNormal(rng, num_slots * sf, 0.3f);
  std::vector<int32_t> slots = ScatteredSlots(B, num_slots, 1, rng);
  std::vector<int32_t> rings = ScatteredSlots(B, num_rings, -1, rng);
  rings[0] = -1;                    // OFF row
  std::vector<float> truth = pool;  // CPU states, by slot
  DeviceBuffer<float> state = ToDevice(pool);
  DeviceBuffer<int32_t> dslots = ToDevice(slots), drings = ToDevice(rings);
  std::vector<int32_t> wp(B, 0);
  DeviceBuffer<int32_t> dwp = ToDevice(wp);
  DeviceBuffer<int8_t> dforce(B);
  const int64_t ring_bytes = GdnReplayRing::SlotBytes(
      d.num_k_heads, d.num_v_heads, kD, L, c.ring_dtype);
  const int e = DTypeBytes(c.ring_dtype);
  // k: raw bf16 rows and their fp32 norm scales, whatever the ring dtype.
  DeviceBuffer<uint16_t> rk(static_cast<size_t>(num_rings) * d.num_k_heads * L *
                            kD);
  DeviceBuffer<float> rks(static_cast<size_t>(num_rings) * d.num_k_heads * L);
  DeviceBuffer<uint8_t> rd(static_cast<size_t>(num_rings) * d.num_v_heads * L *
                           kD * e);
  DeviceBuffer<float> rg(static_cast<size_t>(num_rings) * d.num_v_heads * L);
  ASSERT_EQ(rk.bytes() + rks.bytes() + rd.bytes() + rg.bytes(),
            static_cast<size_t>(num_rings * ring_bytes));
  // Garbage in the rings (NaN scales and weights): entries past the cursor
  // must never be read.
  ASSERT_EQ(rk.Fill(0xff), cudaSuccess);
  ASSERT_EQ(rks.Fill(0xff), cudaSuccess);
  ASSERT_EQ(rd.Fill(0xff), cudaSuccess);
  ASSERT_EQ(rg.Fill(0xff), cudaSuccess);
  DeviceBuffer<float> A_log = ToDevice(l.A_log), dt_bias = ToDevice(l.dt_bias);
  const int64_t o_stride = d.value_dim();
  DeviceBuffer<float> o(static_cast<size_t>(B) * o_stride);

  GdnReplayParams p;
  p.step.num_k_heads = d.num_k_heads;
  p.step.num_v_heads = d.num_v_heads;
  p.step.batch = B;
  p.step.ab_dtype = DType::kBf16;
  p.step.A_log = A_log.get();
  p.step.dt_bias = dt_bias.get();
  p.step.state = state.get();
  p.step.num_slots = num_slots;
  p.step.slot_indices = dslots.get();
  p.step.o = o.get();
  p.step.o_row_stride = o_stride;
  p.step.o_dtype = DType::kFp32;
  p.step.tile = c.tile;
  p.ring.length = L;
  p.ring.dtype = c.ring_dtype;
  p.ring.k = rk.get();
  p.ring.k_scale = rks.get();
  p.ring.d = rd.get();
  p.ring.g = rg.get();
  p.ring.num_ring_slots = num_rings;
  p.ring_indices = drings.get();
  p.write_pos = dwp.get();
  p.force_flush = dforce.get();
  p.stage_ring = c.stage_ring;
  p.copy_order = c.copy_order;
  p.step.overlap = c.overlap;
  // Exercise both store policies.
  p.step.stream_stores = c.overlap == DecodeOverlap::kPrologue;
  p.step.state_policy = c.policy;
  p.coef_route = c.route;
  DeviceBuffer<float> coef(
      c.route == ReplayCoefRoute::kFused
          ? 0
          : GdnReplayParams::CoefScratchFloats(B, d.num_v_heads, L));
  if (c.route != ReplayCoefRoute::kFused) {
    ASSERT_EQ(coef.Fill(0xff), cudaSuccess);
    p.coef_scratch = coef.get();
    p.coef_scratch_floats = static_cast<int64_t>(coef.bytes() / 4);
  }
  GdnReplayAdvanceParams adv;
  adv.batch = B;
  adv.ring_length = L;
  adv.ring_indices = drings.get();
  adv.write_pos = dwp.get();
  adv.force_flush = dforce.get();

  cudaStream_t stream;
  // A blocking stream: ordered after the memsets/copies on the legacy stream.
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  double max_out = 0.0, max_state = 0.0;
  int flush_checks = 0;
  const int steps = c.cycles * L + 3;
  std::vector<float> want_o(d.value_dim());
  std::vector<float> last_ckpt = pool;  // device checkpoint at last flush
  for (int step = 0; step < steps; ++step) {
    // Forced flushes stagger the rows' phases (row r forced at step r + 1).
    std::vector<int8_t> force(B, 0);
    for (int r = 2; r < B; ++r) force[r] = (step == r + 1 && L > 1) ? 1 : 0;
    ASSERT_EQ(dforce.Upload(force), cudaSuccess);
    if (c.fold_midway && step == steps / 2) {
      GdnReplayFoldParams fp;
      fp.num_k_heads = d.num_k_heads;
      fp.num_v_heads = d.num_v_heads;
      fp.batch = B;
      fp.state = state.get();
      fp.num_slots = num_slots;
      fp.slot_indices = dslots.get();
      fp.ring = p.ring;
      fp.ring_indices = drings.get();
      fp.write_pos = dwp.get();
      ASSERT_TRUE(LaunchGdnReplayFold(fp, nullptr).ok());
      std::vector<int32_t> zero(B, 0);
      ASSERT_EQ(dwp.Upload(zero), cudaSuccess);
      wp = zero;
      const std::vector<float> got = state.Download();
      for (int r = 0; r < B; ++r) {
        if (slots[r] < 0) continue;
        const double err =
            RelErr(&got[slots[r] * sf], &truth[slots[r] * sf], sf);
        max_state = std::max(max_state, err);
        EXPECT_LT(err, c.tol_state) << "fold, row " << r;
      }
      last_ckpt = got;
    }
    const StepInputs in = MakeStep(l, B, rng);
    DeviceStep ds = Upload(l, in, B);
    p.step.qkv = ds.qkv.get();
    p.step.qkv_row_stride = ds.qkv_stride;
    p.step.a = ds.a16.get();
    p.step.b = ds.b16.get();
    p.step.ab_row_stride = ds.ab_stride;
    ASSERT_EQ(o.Fill(0xff), cudaSuccess);
    ASSERT_TRUE(LaunchGdnReplayDecode(p, stream).ok());
    ASSERT_TRUE(LaunchGdnReplayAdvance(adv, stream).ok());
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(testing::CudaLastError(), "");
    const std::vector<float> got_o = o.Download();
    const std::vector<float> got_state = state.Download();
    if (step == 0 && L > 1) {
      ExpectFirstKEntries(d, in, slots, rings, num_rings, L, rk.Download(),
                          rks.Download());
    }
    for (int r = 0; r < B; ++r) {
      const float* go = &got_o[r * o_stride];
      ASSERT_TRUE(testing::AllFinite(go, d.value_dim())) << "row " << r;
      if (slots[r] < 0) {
        for (int i = 0; i < d.value_dim(); ++i) ASSERT_EQ(go[i], 0.0f);
        continue;
      }
      float* ts = &truth[slots[r] * sf];
      ReferenceStep(l, in, r, ts, want_o.data());
      const double eo = RelErr(go, want_o.data(), d.value_dim());
      max_out = std::max(max_out, eo);
      ASSERT_LT(eo, c.tol_out) << "step " << step << " row " << r;
      const bool on = rings[r] >= 0;
      const bool flushed = !on || wp[r] == L - 1 || force[r] != 0;
      const float* gs = &got_state[slots[r] * sf];
      if (flushed) {
        const double es = RelErr(gs, ts, sf);
        max_state = std::max(max_state, es);
        ++flush_checks;
        ASSERT_LT(es, c.tol_state) << "step " << step << " row " << r;
        std::memcpy(&last_ckpt[slots[r] * sf], gs, sf * 4);
        wp[r] = 0;
      } else {
        ASSERT_EQ(0, std::memcmp(gs, &last_ckpt[slots[r] * sf], sf * 4))
            << "non-flush step wrote the checkpoint, step " << step;
        ++wp[r];
      }
    }
    std::vector<int32_t> got_wp = dwp.Download();
    for (int r = 0; r < B; ++r) {
      if (rings[r] >= 0 && slots[r] >= 0) {
        ASSERT_EQ(got_wp[r], wp[r]) << "cursor of row " << r;
      }
    }
  }
  cudaStreamDestroy(stream);
  std::printf(
      "replay HV=%d L=%d tile=%s ring=%s stage=%d order=%s overlap=%s coef=%d: "
      "max out rel err %.3g, max state rel err %.3g (%d flush checks)\n",
      c.hv, L, DecodeTileName(c.tile), DTypeName(c.ring_dtype),
      c.stage_ring ? 1 : 0, ReplayCopyOrderName(c.copy_order),
      DecodeOverlapName(c.overlap), static_cast<int>(c.route), max_out,
      max_state, flush_checks);
  EXPECT_GE(flush_checks, c.cycles * (B - 2));
}

TEST(ReplayDecodeTest, Fp32RingEqualsRecurrentOverFiveCycles) {
  GDN_SKIP_WITHOUT_GPU();
  for (int L : {1, 8, 16}) {
    ReplayCase c;
    c.L = L;
    RunReplay(c, 200 + L);
  }
}

// kAuto past 3072 (row, value head) pairs: on a narrow-memory card (H100) the
// fused route's staged fp32 64-row tile, capped at four CTAs per SM
// (ReplayCtasPerSmFor); on the H200 the same tile uncapped. Exact either way.
TEST(ReplayDecodeTest, Fp32RingEqualsRecurrentAtTheCappedTile) {
  GDN_SKIP_WITHOUT_GPU();
  ReplayCase c;
  c.hv = 16;
  c.batch = 197;  // 3152 pairs: DecodeTileFor's 64-row tile on both cards
  c.L = 4;
  c.cycles = 2;
  ASSERT_EQ(DecodeTileFor(c.batch, c.hv, true, DevicePeakMemoryGbps()),
            DecodeTile::kBv64);
  RunReplay(c, 911);
}

// The precomputed coefficient route (pre-kernel + decode): the same exactness
// over >= 5 ring cycles for L = 1, 8, 16 (OFF, padding and force-flushed rows
// in the launch) ...
TEST(ReplayDecodeTest, PrecomputedCoefficientsEqualRecurrent) {
  GDN_SKIP_WITHOUT_GPU();
  for (int L : {1, 8, 16}) {
    ReplayCase c;
    c.L = L;
    c.route = ReplayCoefRoute::kPrecomputed;
    RunReplay(c, 700 + L);
  }
}

// ... every tile staged and unstaged, every head count, the second pass past
// 16 entries (L = 64), PDL, and kAuto choosing the route.
TEST(ReplayDecodeTest, PrecomputedCoefficientsEveryTileAndHeadCount) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 720;
  for (int t = 1; t < kNumDecodeTiles; ++t) {
    for (bool stage : {true, false}) {
      ReplayCase c;
      c.hv = 16;
      c.batch = 5;
      c.tile = static_cast<DecodeTile>(t);
      c.stage_ring = stage;
      c.overlap = stage ? DecodeOverlap::kLaunch : DecodeOverlap::kPrologue;
      c.route = ReplayCoefRoute::kPrecomputed;
      RunReplay(c, seed++);
    }
  }
  for (int hv : {48, 64}) {
    ReplayCase c;
    c.hv = hv;
    c.L = 8;
    c.batch = 4;
    c.route = ReplayCoefRoute::kPrecomputed;
    RunReplay(c, seed++);
  }
  // Long rings, two cycles each.
  auto long_ring = [&](int hv, int L, int batch, DecodeTile tile, bool stage) {
    ReplayCase c;
    c.hv = hv;
    c.L = L;
    c.batch = batch;
    c.cycles = 2;
    c.tile = tile;
    c.stage_ring = stage;
    c.route = ReplayCoefRoute::kPrecomputed;
    RunReplay(c, seed++);
  };
  for (bool stage : {true, false})
    long_ring(16, 64, 4, DecodeTile::kBv32, stage);
  // The staged flush scales the staged entries in place: at L = 17 every
  // committed entry (16) is staged; from L = 18 the launcher does not stage.
  for (int L : {17, 18}) long_ring(32, L, 3, DecodeTile::kBv64, true);
  // kAuto with a scratch: 512 rows x 32 heads >= the precomputed threshold
  // of the bf16 ring (the fp32 ring's is 1024 rows: too long on the CPU).
  ASSERT_TRUE(ReplayCoefRouteFor(512, 16, 32, DType::kBf16));
  ReplayCase c;
  c.batch = 512;
  c.L = 4;
  c.cycles = 1;  // a big batch: one short cycle (+ 3 steps) keeps the CPU
                 // side short
  c.ring_dtype = DType::kBf16;
  c.tol_out = 2e-2;  // as Bf16RingPrecomputedStaysClose
  c.tol_state = 2e-2;
  c.route = ReplayCoefRoute::kAuto;
  RunReplay(c, seed++);
}

TEST(ReplayDecodeTest, EveryTileAndHeadCount) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 300;
  for (int t = 1; t < kNumDecodeTiles; ++t) {
    for (bool stage : {true, false}) {
      ReplayCase c;
      c.hv = 16;
      c.L = 16;
      c.batch = 5;
      c.tile = static_cast<DecodeTile>(t);
      c.stage_ring = stage;
      c.overlap = stage ? DecodeOverlap::kPrologue : DecodeOverlap::kLaunch;
      RunReplay(c, seed++);
    }
  }
  for (int hv : {48, 64}) {
    ReplayCase c;
    c.hv = hv;
    c.L = 8;
    c.batch = 4;
    RunReplay(c, seed++);
  }
}

// The staged fused kernels with the state tile's copies first
// (ReplayCopyOrder::kTileFirst, kAuto's choice at batch 1; at the batches
// here kAuto copies the ring first, which the tests above cover): every staged
// tile, both ring dtypes, a ring longer than the staged entries (the
// coefficient dots and the flush fold read entries 16.. from global memory
// after waiting for both groups), and the PDL prologue overlap.
TEST(ReplayDecodeTest, TileFirstCopyOrder) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 370;
  auto run = [&](DecodeTile tile, DType ring, int L, DecodeOverlap overlap) {
    ReplayCase c;
    c.hv = 16;
    c.L = L;
    c.batch = 5;
    c.cycles = L > 16 ? 2 : 5;
    c.tile = tile;
    c.ring_dtype = ring;
    c.copy_order = ReplayCopyOrder::kTileFirst;
    c.overlap = overlap;
    if (ring == DType::kBf16) {
      c.tol_out = 2e-2;  // as Bf16RingStaysClose
      c.tol_state = 2e-2;
    }
    RunReplay(c, seed++);
  };
  for (int t = static_cast<int>(DecodeTile::kBv8); t < kNumDecodeTiles; ++t) {
    run(static_cast<DecodeTile>(t), DType::kFp32, 16, DecodeOverlap::kLaunch);
  }
  run(DecodeTile::kBv8, DType::kBf16, 16, DecodeOverlap::kLaunch);
  run(DecodeTile::kBv32, DType::kBf16, 9, DecodeOverlap::kPrologue);
  run(DecodeTile::kBv8, DType::kFp32, 33, DecodeOverlap::kPrologue);
  run(DecodeTile::kBv32, DType::kFp32, 33, DecodeOverlap::kLaunch);
}

// Forced evict-last policy (flush and OFF-row stores, state loads).
TEST(ReplayDecodeTest, EvictLastPolicy) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 350;
  for (DecodeTile tile : {DecodeTile::kBv32, DecodeTile::kBv64}) {
    ReplayCase c;
    c.hv = 32;
    c.batch = 6;
    c.tile = tile;
    c.policy = DecodeStatePolicy::kEvictLast;
    RunReplay(c, seed++);
  }
}

TEST(ReplayDecodeTest, LongRingUsesTheSecondPass) {
  // L = 64: more entries than the kernel stages or keeps in registers and
  // more than a warp's lanes. bv64 staged and unstaged, and the fused
  // route's staged two-warp tiles (the small-batch kernels), whose
  // coefficient dots and flush fold read the entries past the kStageJ staged
  // ones from global memory.
  GDN_SKIP_WITHOUT_GPU();
  const std::pair<DecodeTile, bool> kTiles[] = {{DecodeTile::kBv64, true},
                                                {DecodeTile::kBv64, false},
                                                {DecodeTile::kBv8, true},
                                                {DecodeTile::kBv16, true}};
  for (const auto& [tile, stage] : kTiles) {
    ReplayCase c;
    c.hv = 16;
    c.L = 64;
    c.batch = 4;
    c.cycles = 2;
    c.tile = tile;
    c.stage_ring = stage;
    RunReplay(c, 400);
  }
}

// Configurations drawn at random (fixed seed) from the whole space: ring
// lengths around the staging and lane boundaries, every tile staged or not,
// both coefficient routes and ring dtypes, every head count, odd batches.
// 40 on the emulation (~50 s), the first 8 on a GPU (whose run is dominated
// by the CPU reference at full head counts).
TEST(ReplayDecodeTest, RandomConfigurations) {
  GDN_SKIP_WITHOUT_GPU();
  constexpr int kConfigs = testing::RandomConfigCount(40);
  std::mt19937 pick(2026);
  const int kLs[] = {2, 3, 5, 9, 15, 17, 18, 31, 32, 33, 63};
  const int kHvs[] = {16, 32, 48, 64};
  for (int i = 0; i < kConfigs; ++i) {
    ReplayCase c;
    c.L = kLs[pick() % 11];
    c.hv = kHvs[pick() % 4];
    c.batch = 3 + static_cast<int>(pick() % 9);
    c.cycles = c.L > 16 ? 2 : 5;
    c.tile = static_cast<DecodeTile>(pick() % kNumDecodeTiles);
    c.stage_ring = pick() % 2 == 0;
    c.route = pick() % 2 == 0 ? ReplayCoefRoute::kFused
                              : ReplayCoefRoute::kPrecomputed;
    if (pick() % 3 == 0) {
      c.ring_dtype = DType::kBf16;
      c.tol_out = 2e-2;
      c.tol_state = 2e-2;
    }
    SCOPED_TRACE(::testing::Message()
                 << "L " << c.L << " hv " << c.hv << " B " << c.batch
                 << " tile " << DecodeTileName(c.tile) << " stage "
                 << c.stage_ring << " route " << static_cast<int>(c.route)
                 << " ring " << DTypeName(c.ring_dtype));
    RunReplay(c, 900 + i);
  }
}

TEST(ReplayDecodeTest, FoldGivesExactState) {
  GDN_SKIP_WITHOUT_GPU();
  ReplayCase c;
  c.L = 16;
  c.batch = 6;
  c.fold_midway = true;
  RunReplay(c, 500);
}

TEST(ReplayDecodeTest, Bf16RingStaysClose) {
  // bf16 k and d: the replayed updates are rounded and folded into the state
  // at each flush; the drift is bounded, not exact.
  GDN_SKIP_WITHOUT_GPU();
  for (DecodeTile tile :
       {DecodeTile::kAuto, DecodeTile::kBv8, DecodeTile::kBv128}) {
    ReplayCase c;
    c.ring_dtype = DType::kBf16;
    c.tile = tile;
    c.tol_out = 2e-2;
    c.tol_state = 2e-2;
    RunReplay(c, 600);
  }
}

// The precomputed route with a bf16 ring (its flush folds through shared
// coefficients, not in place): the same bound as the fused route, for the
// kAuto tile (bv64), the smallest staged and the largest tiles, staged and
// not, and a ring longer than the staged entries.
TEST(ReplayDecodeTest, Bf16RingPrecomputedStaysClose) {
  GDN_SKIP_WITHOUT_GPU();
  uint32_t seed = 610;
  for (DecodeTile tile :
       {DecodeTile::kAuto, DecodeTile::kBv8, DecodeTile::kBv128}) {
    for (bool stage : {true, false}) {
      ReplayCase c;
      c.ring_dtype = DType::kBf16;
      c.route = ReplayCoefRoute::kPrecomputed;
      c.tile = tile;
      c.stage_ring = stage;
      c.overlap = stage ? DecodeOverlap::kLaunch : DecodeOverlap::kPrologue;
      c.tol_out = 2e-2;
      c.tol_state = 2e-2;
      RunReplay(c, seed++);
    }
  }
  ReplayCase c;
  c.ring_dtype = DType::kBf16;
  c.route = ReplayCoefRoute::kPrecomputed;
  c.hv = 16;
  c.L = 20;
  c.batch = 4;
  c.cycles = 2;
  c.tol_out = 2e-2;
  c.tol_state = 2e-2;
  RunReplay(c, seed++);
}

TEST(DecodeParamsTest, ValidateRejectsBadShapes) {
  GdnDecodeParams p;
  p.batch = 0;
  EXPECT_TRUE(p.Validate().ok());  // nothing to do
  p.batch = 1;
  EXPECT_FALSE(p.Validate().ok());  // null buffers
  p.head_dim = 64;
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);
  p.head_dim = 128;
  p.num_v_heads = 24;
  p.num_k_heads = 16;
  EXPECT_FALSE(p.Validate().ok());
  // PDL with the wait first up to 2048 (row, value head) pairs for the
  // packed step, except for its 64-row tile (runs 58-62), and up to 512 for
  // ReplaySSM (run 114; 128 on a narrow-memory card, runs 66-67).
  for (bool replay : {false, true}) {
    EXPECT_EQ(DecodeOverlapFor(1, 32, replay, kH200Gbps),
              DecodeOverlap::kLaunch);
    EXPECT_EQ(DecodeOverlapFor(8, 16, replay, kH200Gbps),
              DecodeOverlap::kLaunch);
    EXPECT_EQ(DecodeOverlapFor(128, 32, replay, kH200Gbps),
              DecodeOverlap::kNone);
  }
  EXPECT_EQ(DecodeOverlapFor(64, 32, false, kH200Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(64, 32, true, kH200Gbps), DecodeOverlap::kNone);
  EXPECT_EQ(DecodeTileFor(8, 32, false, kH200Gbps), DecodeTile::kBv64);
  EXPECT_EQ(DecodeTileFor(1, 16, true, kH200Gbps), DecodeTile::kBv8);
  EXPECT_EQ(DecodeTileFor(1, 32, true, kH200Gbps), DecodeTile::kBv32);
  // The state tile's copies first up to 32 pairs (run 103).
  EXPECT_EQ(ReplayCopyOrderFor(1, 16), ReplayCopyOrder::kTileFirst);
  EXPECT_EQ(ReplayCopyOrderFor(1, 32), ReplayCopyOrder::kTileFirst);
  EXPECT_EQ(ReplayCopyOrderFor(2, 16), ReplayCopyOrder::kTileFirst);
  EXPECT_EQ(ReplayCopyOrderFor(1, 48), ReplayCopyOrder::kRingFirst);
  EXPECT_EQ(ReplayCopyOrderFor(8, 16), ReplayCopyOrder::kRingFirst);
  EXPECT_EQ(DecodeOverlapFor(8, 32, false, kH200Gbps), DecodeOverlap::kNone);
  EXPECT_EQ(DecodeOverlapFor(8, 32, true, kH200Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(32, 16, true, kH200Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(33, 16, true, kH200Gbps), DecodeOverlap::kNone);
  // A narrow-memory card's ReplaySSM step: kLaunch up to 2048 pairs.
  EXPECT_EQ(DecodeOverlapFor(8, 32, true, kH100Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(64, 32, true, kH100Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(65, 32, true, kH100Gbps), DecodeOverlap::kNone);
  EXPECT_EQ(DecodeOverlapFor(128, 16, true, kH100Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeOverlapFor(129, 16, true, kH100Gbps), DecodeOverlap::kNone);
  GdnReplayAdvanceParams a;
  a.batch = 3;
  a.ring_length = 65;
  EXPECT_FALSE(a.Validate().ok());
  EXPECT_EQ(DecodeTileRows(DecodeTile::kBv32), 32);
  EXPECT_NE(DecodeTileFor(1, 32, false, 0.0), DecodeTile::kAuto);
  EXPECT_NE(DecodeTileFor(4096, 64, true, 0.0), DecodeTile::kAuto);
  for (int rows : {1, 2, 8, 9, 64, 256, 1024}) {
    for (int hv : {16, 32, 48, 64}) {
      for (double gbps : {0.0, kH100Gbps, kH200Gbps}) {
        EXPECT_NE(DecodeTileFor(rows, hv, false, gbps), DecodeTile::kAuto);
        EXPECT_NE(DecodeTileFor(rows, hv, true, gbps), DecodeTile::kAuto);
        EXPECT_NE(DecodeOverlapFor(rows, hv, false, gbps),
                  DecodeOverlap::kAuto);
        EXPECT_NE(DecodeOverlapFor(rows, hv, true, gbps), DecodeOverlap::kAuto);
      }
      EXPECT_NE(DecodeStatePolicyFor(rows, hv, false),
                DecodeStatePolicy::kAuto);
    }
  }

  // k rows bf16 + one fp32 scale each, d in the ring dtype, g fp32.
  EXPECT_EQ(GdnReplayRing::SlotBytes(16, 32, 128, 16, DType::kFp32),
            16LL * (16 * 128 * 2 + 16 * 4 + 32 * 128 * 4 + 32 * 4));
  EXPECT_EQ(GdnReplayRing::SlotBytes(16, 16, 128, 8, DType::kBf16),
            8LL * (16 * 128 * 2 + 16 * 4 + 16 * 128 * 2 + 16 * 4));
}

// Valid ReplaySSM params over fake non-null device pointers (16/32 heads,
// batch 3, fused route): Validate only checks them, nothing is launched.
GdnReplayParams FakeReplayParams() {
  auto fake = [](uintptr_t v) { return reinterpret_cast<void*>(v); };
  GdnReplayParams p;
  p.step.num_k_heads = 16;
  p.step.num_v_heads = 32;
  p.step.batch = 3;
  p.step.qkv = static_cast<const uint16_t*>(fake(0x1000));
  p.step.qkv_row_stride = 2 * 16 * 128 + 32 * 128;
  p.step.a = fake(0x2000);
  p.step.b = fake(0x3000);
  p.step.ab_row_stride = 32;
  p.step.A_log = static_cast<const float*>(fake(0x4000));
  p.step.dt_bias = static_cast<const float*>(fake(0x5000));
  p.step.state = static_cast<float*>(fake(0x6000));
  p.step.num_slots = 8;
  p.step.slot_indices = static_cast<const int32_t*>(fake(0x7000));
  p.step.o = fake(0x8000);
  p.step.o_row_stride = 32 * 128;
  p.ring.k = static_cast<uint16_t*>(fake(0x9000));
  p.ring.k_scale = static_cast<float*>(fake(0x9800));
  p.ring.d = fake(0xa000);
  p.ring.g = static_cast<float*>(fake(0xb000));
  p.ring.num_ring_slots = 8;
  p.ring_indices = static_cast<const int32_t*>(fake(0xc000));
  p.write_pos = static_cast<const int32_t*>(fake(0xd000));
  return p;
}

// kAuto's L2 state policy (host only: runs without a GPU): the packed step
// evict-last from 512 (row, value head) pairs, the ReplaySSM step from 2048.
TEST(DecodeParamsTest, StatePolicyRule) {
  EXPECT_EQ(DecodeStatePolicyFor(33, 16, false), DecodeStatePolicy::kEvictLast);
  EXPECT_EQ(DecodeStatePolicyFor(32, 16, false), DecodeStatePolicy::kEvictLast);
  EXPECT_EQ(DecodeStatePolicyFor(31, 16, false), DecodeStatePolicy::kDefault);
  EXPECT_EQ(DecodeStatePolicyFor(8, 16, false), DecodeStatePolicy::kDefault);
  EXPECT_EQ(DecodeStatePolicyFor(1024, 32, true),
            DecodeStatePolicy::kEvictLast);
  EXPECT_EQ(DecodeStatePolicyFor(128, 16, true), DecodeStatePolicy::kEvictLast);
  EXPECT_EQ(DecodeStatePolicyFor(64, 32, true), DecodeStatePolicy::kEvictLast);
  EXPECT_EQ(DecodeStatePolicyFor(127, 16, true), DecodeStatePolicy::kDefault);
  EXPECT_EQ(DecodeStatePolicyFor(64, 16, true), DecodeStatePolicy::kDefault);
  EXPECT_EQ(DecodeStatePolicyFor(32, 16, true), DecodeStatePolicy::kDefault);
}

// kAuto's cap on CTAs per SM (host only): four for the fused route's staged
// fp32-ring 64-row tile on a narrow-memory card; no cap on the H200 (or a
// card that reports no bandwidth), for any other tile, route or ring dtype.
TEST(DecodeParamsTest, CtasPerSmCapRule) {
  EXPECT_EQ(ReplayCtasPerSmFor(DecodeTile::kBv64, false, true, DType::kFp32,
                               kH100Gbps),
            4);
  for (double gbps : {0.0, kH200Gbps}) {
    EXPECT_EQ(
        ReplayCtasPerSmFor(DecodeTile::kBv64, false, true, DType::kFp32, gbps),
        0);
  }
  EXPECT_EQ(ReplayCtasPerSmFor(DecodeTile::kBv64, true, true, DType::kFp32,
                               kH100Gbps),
            0);
  EXPECT_EQ(ReplayCtasPerSmFor(DecodeTile::kBv64, false, false, DType::kFp32,
                               kH100Gbps),
            0);
  EXPECT_EQ(ReplayCtasPerSmFor(DecodeTile::kBv64, false, true, DType::kBf16,
                               kH100Gbps),
            0);
  for (DecodeTile t : {DecodeTile::kBv8, DecodeTile::kBv16, DecodeTile::kBv32,
                       DecodeTile::kBv128}) {
    EXPECT_EQ(ReplayCtasPerSmFor(t, false, true, DType::kFp32, kH100Gbps), 0);
  }
}

// The tile tables by card: a narrow-memory card (H100) keeps the ReplaySSM
// 32-row tile up to 3072 (row, value head) pairs, where the H200 (and a card
// that reports no bandwidth) takes 64 rows from 513 on, and takes whole heads
// for the packed step at 192-256 pairs; every other range is the same on both.
TEST(DecodeParamsTest, TileTablesFollowTheCardsMemory) {
  for (double gbps : {0.0, kH200Gbps}) {
    EXPECT_EQ(DecodeTileFor(32, 16, true, gbps), DecodeTile::kBv32);
    EXPECT_EQ(DecodeTileFor(64, 16, true, gbps), DecodeTile::kBv64);
    EXPECT_EQ(DecodeTileFor(128, 16, true, gbps), DecodeTile::kBv64);
    EXPECT_EQ(DecodeTileFor(32, 32, true, gbps), DecodeTile::kBv64);
  }
  EXPECT_EQ(DecodeTileFor(64, 16, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(128, 16, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(32, 32, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(64, 32, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(192, 16, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(96, 32, true, kH100Gbps), DecodeTile::kBv32);
  EXPECT_EQ(DecodeTileFor(193, 16, true, kH100Gbps), DecodeTile::kBv64);
  EXPECT_EQ(DecodeTileFor(128, 32, true, kH100Gbps), DecodeTile::kBv64);
  // The packed step's plain-launch range (129-256 pairs): 64 rows, and on a
  // narrow-memory card 192-256 pairs only, with whole heads.
  for (double gbps : {0.0, kH200Gbps}) {
    EXPECT_EQ(DecodeTileFor(8, 32, false, gbps), DecodeTile::kBv64);
    EXPECT_EQ(DecodeTileFor(4, 48, false, gbps), DecodeTile::kBv64);
  }
  // Below 192 pairs a narrow-memory card keeps 8-row tiles with kLaunch.
  EXPECT_EQ(DecodeTileFor(5, 32, false, kH200Gbps), DecodeTile::kBv64);
  EXPECT_EQ(DecodeOverlapFor(5, 32, false, kH200Gbps), DecodeOverlap::kNone);
  EXPECT_EQ(DecodeTileFor(5, 32, false, kH100Gbps), DecodeTile::kBv8);
  EXPECT_EQ(DecodeOverlapFor(5, 32, false, kH100Gbps), DecodeOverlap::kLaunch);
  EXPECT_EQ(DecodeTileFor(9, 16, false, kH100Gbps), DecodeTile::kBv8);
  EXPECT_EQ(DecodeTileFor(12, 16, false, kH100Gbps), DecodeTile::kBv128);
  EXPECT_EQ(DecodeOverlapFor(12, 16, false, kH100Gbps), DecodeOverlap::kNone);
  EXPECT_EQ(DecodeTileFor(8, 32, false, kH100Gbps), DecodeTile::kBv128);
  EXPECT_EQ(DecodeTileFor(17, 16, false, kH100Gbps), DecodeTile::kBv8);
  for (int rows : {1, 2, 8, 9, 33, 64, 128, 256, 1024, 4096}) {
    for (int hv : {16, 32, 48, 64}) {
      if (rows * hv <= 128 || rows * hv >= 512) {  // past the 129-256 range
        EXPECT_EQ(DecodeTileFor(rows, hv, false, kH100Gbps),
                  DecodeTileFor(rows, hv, false, kH200Gbps));
      }
      if (rows * hv <= 512 || rows * hv > 3072) {
        EXPECT_EQ(DecodeTileFor(rows, hv, true, kH100Gbps),
                  DecodeTileFor(rows, hv, true, kH200Gbps));
      }
    }
  }
  // The current device's figure: the emulation reports an H200's; a GPU's
  // driver reports its memory clock and bus width.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    const double gbps = DevicePeakMemoryGbps();
    EXPECT_GT(gbps, 500.0);
    EXPECT_LT(gbps, 20000.0);
    EXPECT_EQ(DevicePeakMemoryGbps(), gbps);  // cached
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

// The ring's k rows come with their norm scales (decode.h): k_scale must be
// set and 4-byte aligned. Host-side checks (no GPU needed).
TEST(DecodeParamsTest, ValidateChecksRingKScale) {
  GdnReplayParams p = FakeReplayParams();
  ASSERT_TRUE(p.Validate().ok());
  p.ring.k_scale = nullptr;
  const absl::Status s = p.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("k_scale"), std::string::npos) << s;
  p.ring.k_scale = reinterpret_cast<float*>(uintptr_t{0x9802});
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);
}

// Every launch overlap and copy order is accepted, an unknown one rejected
// (no GPU needed).
TEST(DecodeParamsTest, ValidateChecksOverlapAndCopyOrder) {
  GdnReplayParams p = FakeReplayParams();
  for (DecodeOverlap o : {DecodeOverlap::kAuto, DecodeOverlap::kNone,
                          DecodeOverlap::kLaunch, DecodeOverlap::kPrologue}) {
    p.step.overlap = o;
    EXPECT_TRUE(p.Validate().ok()) << DecodeOverlapName(o);
  }
  p.step.overlap = static_cast<DecodeOverlap>(4);
  const absl::Status s = p.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("overlap"), std::string::npos) << s;
  p.step.overlap = DecodeOverlap::kAuto;
  for (ReplayCopyOrder o : {ReplayCopyOrder::kAuto, ReplayCopyOrder::kRingFirst,
                            ReplayCopyOrder::kTileFirst}) {
    p.copy_order = o;
    EXPECT_TRUE(p.Validate().ok()) << ReplayCopyOrderName(o);
  }
  p.copy_order = static_cast<ReplayCopyOrder>(3);
  EXPECT_NE(p.Validate().message().find("copy_order"), std::string::npos);
}

// The coefficient scratch of the precomputed route: required by
// kPrecomputed, sized batch * HV * (2 L + 4) floats, 16-byte aligned, either
// ring dtype. Host-side checks (no GPU needed: nothing is launched).
TEST(DecodeParamsTest, ValidateChecksCoefScratch) {
  alignas(16) static float buf[64];
  GdnReplayParams p = FakeReplayParams();
  ASSERT_TRUE(p.Validate().ok());  // fused route, no scratch
  EXPECT_EQ(GdnReplayParams::CoefStride(16), 36);
  const int64_t need = GdnReplayParams::CoefScratchFloats(3, 32, 16);
  EXPECT_EQ(need, 3 * 32 * 36);

  p.coef_route = ReplayCoefRoute::kPrecomputed;
  absl::Status s = p.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("coef_scratch"), std::string::npos) << s;

  p.coef_scratch = reinterpret_cast<float*>(uintptr_t{0x10000});
  p.coef_scratch_floats = need - 1;  // one float short
  s = p.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("coef_scratch_floats"), std::string::npos) << s;
  p.coef_route = ReplayCoefRoute::kAuto;  // a given scratch is checked too
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);

  p.coef_scratch_floats = need;
  EXPECT_TRUE(p.Validate().ok());
  p.coef_scratch = buf + 1;  // 4-byte aligned only
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);
  p.coef_scratch = buf;
  p.coef_route = ReplayCoefRoute::kPrecomputed;
  EXPECT_TRUE(p.Validate().ok());
  p.ring.dtype = DType::kBf16;  // either ring dtype
  EXPECT_TRUE(p.Validate().ok());
  p.ring.dtype = DType::kFp32;
  p.coef_route = static_cast<ReplayCoefRoute>(7);
  EXPECT_EQ(p.Validate().code(), absl::StatusCode::kInvalidArgument);

  for (DType ring : {DType::kFp32, DType::kBf16}) {
    EXPECT_FALSE(ReplayCoefRouteFor(1, 16, 32, ring));
    EXPECT_FALSE(ReplayCoefRouteFor(128, 16, 32, ring));
    EXPECT_FALSE(ReplayCoefRouteFor(511, 16, 32, ring));
    EXPECT_TRUE(ReplayCoefRouteFor(1024, 16, 32, ring));
    EXPECT_TRUE(ReplayCoefRouteFor(512, 16, 64, ring));
    EXPECT_FALSE(ReplayCoefRouteFor(1024, 16, 16, ring));  // r = 1: fused
    EXPECT_FALSE(ReplayCoefRouteFor(4096, 16, 16, ring));
  }
  EXPECT_FALSE(ReplayCoefRouteFor(512, 16, 32, DType::kFp32));
  EXPECT_TRUE(ReplayCoefRouteFor(512, 16, 32, DType::kBf16));
}

}  // namespace
}  // namespace rollout::gdn
