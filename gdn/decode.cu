// Launchers of the GDN decode kernels: parameter checks, tile choice,
// dispatch to the instantiation files, and the cursor-advance kernel.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "gdn/cuda_util.cuh"
#include "gdn/decode.h"
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn {
namespace {

using internal::DecodeArgs;
using internal::kDim;
using internal::kMaxRing;

bool Aligned(const void* p, int bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

absl::Status Invalid(const char* who, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(who, ": ", what));
}

absl::Status CheckHeads(const char* who, int H, int HV, int head_dim) {
  if (head_dim != kDim) {
    return Invalid(who, absl::StrCat("head_dim must be 128, got ", head_dim));
  }
  if (H <= 0 || HV <= 0 || HV % H != 0) {
    return Invalid(who, absl::StrCat("need H > 0 and HV % H == 0 (H=", H,
                                     ", HV=", HV, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckRing(const char* who, const GdnReplayRing& ring) {
  if (ring.length < 1 || ring.length > kMaxRing) {
    return Invalid(who, absl::StrCat("ring length must be in [1, ", kMaxRing,
                                     "], got ", ring.length));
  }
  if (ring.k == nullptr || ring.k_scale == nullptr || ring.d == nullptr ||
      ring.g == nullptr) {
    return Invalid(who, "ring k, k_scale, d and g must be set");
  }
  if (!Aligned(ring.k, 16) || !Aligned(ring.d, 16)) {
    return Invalid(who, "ring k and d must be 16-byte aligned");
  }
  if (!Aligned(ring.k_scale, 4) || !Aligned(ring.g, 4)) {
    return Invalid(who, "ring k_scale and g must be 4-byte aligned");
  }
  if (ring.num_ring_slots <= 0) return Invalid(who, "num_ring_slots <= 0");
  return absl::OkStatus();
}

// The (row, value head) pairs at which the packed step keeps its 64-row tile
// (a narrow-memory card: whole heads from 192 pairs, DecodeTileFor) and a
// plain launch: there 8-row tiles with PDL measured 4 % faster in runs 59-60
// and 3 % slower in run 62's A/B (H200); everywhere else 8-row tiles with the
// overlap of DecodeOverlapFor were as fast or faster.
// A narrow-memory card (run 110, H100, --tile-table) keeps the 8-row tiles
// with kLaunch up to 191 pairs (5-7 % faster than 64 rows at 144-160; as
// kAuto in run 111, -4.6 to -7.7 %) and takes whole heads, launched plainly,
// at 192-256 (DecodeTileFor).
bool PackedWideTileRange(int64_t units, double peak_gbps) {
  return units > (NarrowMemory(peak_gbps) ? 191 : 128) && units <= 256;
}

// The card's peak DRAM bandwidth for a step's kAuto rules, asked once per
// launch and only when the tile or the overlap is kAuto (0 otherwise: unused).
double PeakGbpsFor(const GdnDecodeParams& p) {
  return p.overlap == DecodeOverlap::kAuto || p.tile == DecodeTile::kAuto
             ? DevicePeakMemoryGbps()
             : 0.0;
}

// The launch overlap of a step (never kAuto) on a card of `peak_gbps`.
DecodeOverlap OverlapOf(const GdnDecodeParams& p, bool replay,
                        double peak_gbps) {
  return p.overlap == DecodeOverlap::kAuto
             ? DecodeOverlapFor(p.batch, p.num_v_heads, replay, peak_gbps)
             : p.overlap;
}

// The kernel arguments of a step launched with `overlap` (resolved).
DecodeArgs BaseArgs(const GdnDecodeParams& p, DecodeOverlap overlap) {
  DecodeArgs a;
  a.batch = p.batch;
  a.H = p.num_k_heads;
  a.HV = p.num_v_heads;
  a.r = p.num_v_heads / p.num_k_heads;
  a.qkv = p.qkv;
  a.qkv_stride = p.qkv_row_stride;
  a.a = p.a;
  a.b = p.b;
  a.ab_stride = p.ab_row_stride;
  a.ab_fp32 = p.ab_dtype == DType::kFp32;
  a.A_log = p.A_log;
  a.dt_bias = p.dt_bias;
  a.state = p.state;
  a.slots = p.slot_indices;
  a.o = p.o;
  a.o_stride = p.o_row_stride;
  a.o_fp32 = p.o_dtype == DType::kFp32;
  a.wait_first = overlap == DecodeOverlap::kLaunch;
  return a;
}

// The ring and cursor fields of a ReplaySSM launch's DecodeArgs.
void SetRing(const GdnReplayRing& ring, const int32_t* ring_indices,
             const int32_t* write_pos, DecodeArgs* a) {
  a->ring_k = ring.k;
  a->ring_ks = ring.k_scale;
  a->ring_d = ring.d;
  a->ring_g = ring.g;
  a->L = ring.length;
  a->ring_idx = ring_indices;
  a->write_pos = write_pos;
}

// DecodeArgs::cache of a launch.
int CacheOf(const GdnDecodeParams& p, bool replay) {
  DecodeStatePolicy pol = p.state_policy;
  if (pol == DecodeStatePolicy::kAuto) {
    pol = DecodeStatePolicyFor(p.batch, p.num_v_heads, replay);
  }
  if (pol == DecodeStatePolicy::kEvictLast) return internal::kCacheEvictLast;
  return p.stream_stores ? internal::kCacheStreamStores : internal::kCachePlain;
}

DecodeTile Resolve(DecodeTile tile, int rows, int hv, bool replay,
                   double peak_gbps) {
  return tile == DecodeTile::kAuto ? DecodeTileFor(rows, hv, replay, peak_gbps)
                                   : tile;
}

absl::Status Launched(cudaError_t pre, const char* what) {
  if (pre != cudaSuccess) {
    return absl::InternalError(
        absl::StrCat(what, ": kernel setup failed: ", cudaGetErrorString(pre)));
  }
  return internal::LaunchStatus(what);
}

__global__ void AdvanceKernel(int batch, int L, const int32_t* ring_idx,
                              int32_t* write_pos, int8_t* force) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const bool forced = force != nullptr && force[b] != 0;
  if (ring_idx[b] >= 0) {
    const int wp = write_pos[b];
    write_pos[b] = (wp >= L - 1 || forced) ? 0 : wp + 1;
  }
  if (force != nullptr) force[b] = 0;
}

}  // namespace

const char* DecodeTileName(DecodeTile tile) {
  switch (tile) {
    case DecodeTile::kAuto:
      return "auto";
    case DecodeTile::kBv4:
      return "bv4";
    case DecodeTile::kBv8:
      return "bv8";
    case DecodeTile::kBv16:
      return "bv16";
    case DecodeTile::kBv32:
      return "bv32";
    case DecodeTile::kBv64:
      return "bv64";
    case DecodeTile::kBv128:
      return "bv128";
  }
  return "?";
}

int DecodeTileRows(DecodeTile tile) {
  switch (tile) {
    case DecodeTile::kAuto:
      return 0;
    case DecodeTile::kBv4:
      return 4;
    case DecodeTile::kBv8:
      return 8;
    case DecodeTile::kBv16:
      return 16;
    case DecodeTile::kBv32:
      return 32;
    case DecodeTile::kBv64:
      return 64;
    case DecodeTile::kBv128:
      return 128;
  }
  return 0;
}

namespace {

// The driver's figures for `dev`: twice the memory clock times the bus width
// (0 when it reports neither).
double QueryPeakMemoryGbps(int dev) {
  int khz = 0, bits = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) !=
          cudaSuccess) {
    cudaGetLastError();  // a failed query is not the caller's launch error
    return 0.0;
  }
  return khz > 0 && bits > 0 ? 2.0 * khz * 1e3 * (bits / 8) * 1e-9 : 0.0;
}

}  // namespace

double DevicePeakMemoryGbps() {
  // Asked on every kAuto launch, so cached per device: 0 until first asked,
  // -1 when the driver reported nothing (two threads asking at once both
  // query it: no lock on the launch path).
  constexpr int kMaxDevices = 64;
  static std::atomic<double> cached[kMaxDevices];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();  // not this launch's error
    return 0.0;
  }
  if (dev < 0 || dev >= kMaxDevices) return QueryPeakMemoryGbps(dev);
  double gbps = cached[dev].load(std::memory_order_relaxed);
  if (gbps == 0.0) {
    gbps = QueryPeakMemoryGbps(dev);
    if (gbps == 0.0) gbps = -1.0;
    cached[dev].store(gbps, std::memory_order_relaxed);
  }
  return gbps > 0.0 ? gbps : 0.0;
}

DecodeTile DecodeTileFor(int rows, int num_v_heads, bool replay,
                         double peak_gbps) {
  // (row, head) pairs. From the H200 sweeps (docs/benchmarks/gdn_history.md):
  // the packed kernel is best with small 8-row CTAs (4 KB, many resident CTAs),
  // except in PackedWideTileRange. The ReplaySSM kernel amortises its per-CTA
  // ring coefficients over larger tiles; below 4096 pairs, where kAuto launches
  // with DecodeOverlap::kLaunch, run 60 measured 8 rows best up to 32 pairs, 16
  // rows at 65-128 and 32 rows at 33-64 and 129-512 (the 512-CTA grids of 32
  // rows at 128 pairs and 64 rows at 256 pairs lose 4-6 % under PDL); whole
  // heads only at the largest grids. Runs 69, 73, 74, 76 and 79 measured 32
  // rows faster at 32 pairs too (16/32 B = 1: cycle 3.03-3.11 against 3.16-3.19
  // us: its 16 row groups dot the ring's k rows in one pass, the 8-row tile's
  // in two), 8 rows still best at 16 (16/16 B = 1).
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  if (!replay) {
    if (!PackedWideTileRange(units, peak_gbps)) return DecodeTile::kBv8;
    // In that range (plain launches) a narrow-memory card takes whole heads
    // from 192 pairs on. Run 110 (H100, --tile-table): 128 rows against 64
    // -0.8 to -3.7 % at 192 pairs, -5 to -6 % at 240-256, +1 to +3 % at
    // 144-160; the sweeps' 16/32 B = 8 (256 pairs) -5.9 to -6.3 % in runs 100,
    // 106, 109 and 110. (The H200: -0.8 / -1.5 % there in runs 85 and 104,
    // unchanged.)
    return NarrowMemory(peak_gbps) ? DecodeTile::kBv128 : DecodeTile::kBv64;
  }
  if (units <= 16) return DecodeTile::kBv8;
  if (units <= 64) return DecodeTile::kBv32;
  if (units <= 128) return DecodeTile::kBv16;
  if (units <= 512) return DecodeTile::kBv32;
  // On a narrow-memory card the 32-row tile stays best up to 3072 pairs. Runs
  // 100, 106 and 109 (H100, 3.35 TB/s; every tile timed in the sweep): 32
  // rows against 64 at 1024 pairs -2.3 to -3.6 %, at 2048 -0.5 to -1.6 %, at
  // 4096 -0.3 to +0.0 % (left at 64); runs 110 and 111 (--tile-table, five
  // passes) at 2560 pairs -0.2 to -0.8 %, at 3072 -0.25 to -0.7 %, at 6144
  // +0.1 to +0.3 %. The H200 (runs 85, 104) is 2.2-3.0 % slower with 32 rows
  // at 1024 pairs and 7-9 % at 2048: it needs the larger tiles' bytes in
  // flight.
  if (NarrowMemory(peak_gbps) && units <= 3072) return DecodeTile::kBv32;
  if (units < 32768) return DecodeTile::kBv64;
  return DecodeTile::kBv128;
}

int ReplayCtasPerSmFor(DecodeTile tile, bool precomputed, bool stage,
                       DType ring_dtype, double peak_gbps) {
  return tile == DecodeTile::kBv64 && !precomputed && stage &&
                 ring_dtype == DType::kFp32 && NarrowMemory(peak_gbps)
             ? 4
             : 0;
}

const char* DecodeOverlapName(DecodeOverlap overlap) {
  switch (overlap) {
    case DecodeOverlap::kAuto:
      return "auto";
    case DecodeOverlap::kNone:
      return "none";
    case DecodeOverlap::kLaunch:
      return "launch";
    case DecodeOverlap::kPrologue:
      return "prologue";
  }
  return "?";
}

DecodeOverlap DecodeOverlapFor(int rows, int num_v_heads, bool replay,
                               double peak_gbps) {
  // Runs 58-62 (H200, graphs of back-to-back packed steps): PDL with the wait
  // first takes the batch-1 packed step from 3.2 to 2.7 us (32 value heads);
  // up to 2048 (row, value head) pairs it is 0.5-15 % faster with the tiles
  // DecodeTileFor picks, except for the packed step's 64-row tile
  // (PackedWideTileRange: 4 warps in one partial wave, 20-25 % slower under
  // PDL). From 4096 pairs on it is level or slower (16/32 B = 512: +2.5-4.5
  // %). The ReplaySSM step gains up to 128 pairs (batch 1: -0.35 to -0.5 us)
  // and lost 0.1-0.4 us at 256-2048, both after a decode step (run 66) and
  // after the conv update, as in a layer (run 67). On 5574a0b's kernels (run
  // 114, H200, gdn_bench --overlap, two passes) it gains at 256 pairs too
  // (-2.4 to -3.0 %) and at 512 (-1.1 to -1.5 %), is level at 1024-2048
  // (-0.2 to +0.4 %) and loses from 4096 (+0.3 to +1.4 %). A narrow-memory
  // card gains further: run 115 (H100, the same sweep, two passes) measured
  // kLaunch -1.4 to -2.9 % at 256 pairs, -1.1 to -1.8 % at 512, -0.9 to -1.1
  // % at 1024 and -0.3 to -0.6 % at 2048, then -0.1 to -0.2 % at 4096-8192
  // (left plain, as on the H200).
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  if (replay) {
    return units <= (NarrowMemory(peak_gbps) ? 2048 : 512)
               ? DecodeOverlap::kLaunch
               : DecodeOverlap::kNone;
  }
  if (PackedWideTileRange(units, peak_gbps)) return DecodeOverlap::kNone;
  return units <= 2048 ? DecodeOverlap::kLaunch : DecodeOverlap::kNone;
}

DecodeStatePolicy DecodeStatePolicyFor(int rows, int num_v_heads, bool replay) {
  // Evict-last helps the packed step from 32 rows of 16 heads on (+3-5 % at
  // batch >= 128) and costs up to 9 % at 8 rows; the ReplaySSM cycle showed
  // no gain, its flush alone was not timed then. The same on the H100 (run
  // 110's --tile-table: 2.1-2.2 % at 1024-2048 pairs, 1.8-2.3 % from 2560 on).
  // The ReplaySSM step's flush gains from 2048 pairs on, its non-flush steps
  // stay level (gdn_bench --flush-policy, two repeats, B = 128-1024 of both
  // shapes): run 117 (H100) flush -0.4 to -1.0 %, cycle -0.0 to -0.3 %; run
  // 118 (H200) flush -0.5 to -1.9 %, cycle -0.1 to -0.4 % where the card held
  // its clocks (B = 128, 256 and 1024).
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  return units >= (replay ? 2048 : 512) ? DecodeStatePolicy::kEvictLast
                                        : DecodeStatePolicy::kDefault;
}

const char* ReplayCopyOrderName(ReplayCopyOrder order) {
  switch (order) {
    case ReplayCopyOrder::kAuto:
      return "auto";
    case ReplayCopyOrder::kRingFirst:
      return "ringfirst";
    case ReplayCopyOrder::kTileFirst:
      return "tilefirst";
  }
  return "?";
}

ReplayCopyOrder ReplayCopyOrderFor(int rows, int num_v_heads) {
  // Run 103 (H100, three A/B passes, fp32 ring): tile first, 16/32 and 16/16
  // B = 1 (32 and 16 pairs: bv32 and bv8 tiles) cycles -2.1 and -2.2 %
  // (non-flush steps -2.5 %, flush level); B = 8 (256 and 128 pairs) +1.5 %
  // with force flags at 16/32, +2.2 % at 16/16; from B = 128 on level.
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  return units <= 32 ? ReplayCopyOrder::kTileFirst
                     : ReplayCopyOrder::kRingFirst;
}

absl::Status GdnDecodeParams::Validate() const {
  constexpr const char* kWho = "GdnDecodeParams";
  if (absl::Status s = CheckHeads(kWho, num_k_heads, num_v_heads, head_dim);
      !s.ok()) {
    return s;
  }
  if (batch < 0) return Invalid(kWho, "batch < 0");
  if (batch == 0) return absl::OkStatus();
  if (qkv == nullptr || a == nullptr || b == nullptr || A_log == nullptr ||
      dt_bias == nullptr || state == nullptr || slot_indices == nullptr ||
      o == nullptr) {
    return Invalid(kWho, "a required buffer is null");
  }
  const int64_t conv_dim = 2LL * num_k_heads * head_dim +
                           static_cast<int64_t>(num_v_heads) * head_dim;
  if (qkv_row_stride < conv_dim || qkv_row_stride % 8 != 0) {
    return Invalid(
        kWho, absl::StrCat("qkv_row_stride ", qkv_row_stride,
                           " must be >= ", conv_dim, " and a multiple of 8"));
  }
  if (ab_row_stride < num_v_heads) {
    return Invalid(kWho, "ab_row_stride < num_v_heads");
  }
  if (o_row_stride < static_cast<int64_t>(num_v_heads) * head_dim) {
    return Invalid(kWho, "o_row_stride < HV * V");
  }
  if (!Aligned(qkv, 16) || !Aligned(state, 16)) {
    return Invalid(kWho, "qkv and state must be 16-byte aligned");
  }
  if (num_slots <= 0) return Invalid(kWho, "num_slots <= 0");
  if (static_cast<int>(tile) < 0 || static_cast<int>(tile) >= kNumDecodeTiles) {
    return Invalid(kWho, "unknown tile");
  }
  if (static_cast<int>(state_policy) < 0 ||
      static_cast<int>(state_policy) > 2) {
    return Invalid(kWho, "unknown state policy");
  }
  if (static_cast<int>(overlap) < 0 || static_cast<int>(overlap) > 3) {
    return Invalid(kWho, "unknown overlap");
  }
  return absl::OkStatus();
}

int64_t GdnReplayRing::SlotBytes(int num_k_heads, int num_v_heads, int head_dim,
                                 int length, DType dtype) {
  const int64_t e = DTypeBytes(dtype);
  const int64_t k_bytes = 2LL * num_k_heads * head_dim + 4LL * num_k_heads;
  return static_cast<int64_t>(length) *
         (k_bytes + e * num_v_heads * head_dim + 4LL * num_v_heads);
}

absl::Status GdnReplayParams::Validate() const {
  constexpr const char* kWho = "GdnReplayParams";
  if (absl::Status s = step.Validate(); !s.ok()) return s;
  if (static_cast<int>(coef_route) < 0 || static_cast<int>(coef_route) > 2) {
    return Invalid(kWho, "unknown coef_route");
  }
  if (static_cast<int>(copy_order) < 0 || static_cast<int>(copy_order) > 2) {
    return Invalid(kWho, "unknown copy_order");
  }
  if (step.batch == 0) return absl::OkStatus();
  if (absl::Status s = CheckRing(kWho, ring); !s.ok()) return s;
  if (ring_indices == nullptr || write_pos == nullptr) {
    return Invalid(kWho, "ring_indices and write_pos must be set");
  }
  if (coef_route == ReplayCoefRoute::kPrecomputed) {
    if (coef_scratch == nullptr) {
      return Invalid(kWho, "coef_route kPrecomputed needs coef_scratch");
    }
  }
  if (coef_scratch != nullptr) {
    const int64_t need =
        CoefScratchFloats(step.batch, step.num_v_heads, ring.length);
    if (coef_scratch_floats < need) {
      return Invalid(
          kWho, absl::StrCat("coef_scratch_floats ", coef_scratch_floats, " < ",
                             need, " (batch * HV * (2 L + 4))"));
    }
    if (!Aligned(coef_scratch, 16)) {
      return Invalid(kWho, "coef_scratch must be 16-byte aligned");
    }
  }
  return absl::OkStatus();
}

bool ReplayCoefRouteFor(int rows, int num_k_heads, int num_v_heads,
                        DType ring_dtype) {
  // Run 8 (H200) put the threshold at 4096 (row, value head) pairs. Since
  // the fused route's staged ring and index loads (runs 42-65), its cycle is
  // shorter at 16/16 heads from B = 256 on (-2.5 to -4.7 %, run 69's A/B;
  // -1.5 to -6 % in runs 62-66) and at 16/32 B = 128 (-4.5 %); the pre-kernel
  // still wins at 16/32 B = 1024 (-5 to -6 %), where r = 2 value heads share
  // each key head's dots (the fused route computes them per value head). At
  // 16/32 B = 512 the fused route is 2-4.6 % faster with the fp32 ring (runs
  // 65, 66, 69; +0.4 % in run 63) and 1-2 % slower with the bf16 ring, whose
  // smaller d entries leave the fused route's dots a larger share.
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  const int64_t threshold = ring_dtype == DType::kBf16 ? 16384 : 32768;
  return num_v_heads >= 2 * num_k_heads && units >= threshold;
}

absl::Status GdnReplayFoldParams::Validate() const {
  constexpr const char* kWho = "GdnReplayFoldParams";
  if (absl::Status s = CheckHeads(kWho, num_k_heads, num_v_heads, head_dim);
      !s.ok()) {
    return s;
  }
  if (batch < 0) return Invalid(kWho, "batch < 0");
  if (batch == 0) return absl::OkStatus();
  if (state == nullptr || slot_indices == nullptr || ring_indices == nullptr ||
      write_pos == nullptr) {
    return Invalid(kWho, "a required buffer is null");
  }
  if (!Aligned(state, 16))
    return Invalid(kWho, "state must be 16-byte aligned");
  if (num_slots <= 0) return Invalid(kWho, "num_slots <= 0");
  return CheckRing(kWho, ring);
}

absl::Status GdnReplayAdvanceParams::Validate() const {
  constexpr const char* kWho = "GdnReplayAdvanceParams";
  if (batch < 0) return Invalid(kWho, "batch < 0");
  if (ring_length < 1 || ring_length > kMaxRing) {
    return Invalid(kWho, "ring_length out of range");
  }
  if (batch > 0 && (ring_indices == nullptr || write_pos == nullptr)) {
    return Invalid(kWho, "ring_indices and write_pos must be set");
  }
  return absl::OkStatus();
}

absl::Status LaunchGdnPackedDecode(const GdnDecodeParams& params,
                                   cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.batch == 0) return absl::OkStatus();
  const double peak_gbps = PeakGbpsFor(params);
  const DecodeOverlap overlap = OverlapOf(params, false, peak_gbps);
  DecodeArgs a = BaseArgs(params, overlap);
  a.cache = CacheOf(params, false);
  return Launched(internal::LaunchPackedDecodeKernel(
                      Resolve(params.tile, params.batch, params.num_v_heads,
                              false, peak_gbps),
                      a, stream, overlap != DecodeOverlap::kNone),
                  "LaunchGdnPackedDecode");
}

absl::Status LaunchGdnReplayDecode(const GdnReplayParams& params,
                                   cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.step.batch == 0) return absl::OkStatus();
  const double peak_gbps = PeakGbpsFor(params.step);
  const DecodeOverlap overlap = OverlapOf(params.step, true, peak_gbps);
  DecodeArgs a = BaseArgs(params.step, overlap);
  a.cache = CacheOf(params.step, true);
  SetRing(params.ring, params.ring_indices, params.write_pos, &a);
  a.force = params.force_flush;
  const bool pdl = overlap != DecodeOverlap::kNone;
  bool precomputed = params.coef_route == ReplayCoefRoute::kPrecomputed;
  if (params.coef_route == ReplayCoefRoute::kAuto) {
    precomputed =
        params.coef_scratch != nullptr &&
        ReplayCoefRouteFor(params.step.batch, params.step.num_k_heads,
                           params.step.num_v_heads, params.ring.dtype);
  }
  // The precomputed route's kAuto tile is bv64 (run 8: best at every batch
  // from 32 x 16 pairs on; bv128 lost 3-10 %).
  const DecodeTile tile =
      precomputed && params.step.tile == DecodeTile::kAuto
          ? DecodeTile::kBv64
          : Resolve(params.step.tile, params.step.batch,
                    params.step.num_v_heads, true, peak_gbps);
  // The precomputed route's staged fp32 flush folds only staged entries
  // (decode_kernel.cuh): rings longer than kStageJ + 1 are not staged there.
  const bool bf16 = params.ring.dtype == DType::kBf16;
  const bool stage =
      params.stage_ring &&
      (!precomputed || bf16 || params.ring.length <= internal::kStageJ + 1);
  // Only a kAuto tile is capped, and only where the rule says (never on the
  // precomputed route).
  if (params.step.tile == DecodeTile::kAuto) {
    a.max_ctas_per_sm = ReplayCtasPerSmFor(tile, precomputed, stage,
                                           params.ring.dtype, peak_gbps);
  }
  if (precomputed) {
    a.coef = params.coef_scratch;
    a.coef_stride = GdnReplayParams::CoefStride(params.ring.length);
    return Launched(
        bf16
            ? internal::LaunchReplayCoefDecodeKernelBf16(tile, stage, a, stream)
            : internal::LaunchReplayCoefDecodeKernelF32(tile, stage, a, stream),
        "LaunchGdnReplayDecode");
  }
  const ReplayCopyOrder order =
      params.copy_order == ReplayCopyOrder::kAuto
          ? ReplayCopyOrderFor(params.step.batch, params.step.num_v_heads)
          : params.copy_order;
  const bool tile_first = order == ReplayCopyOrder::kTileFirst;
  return Launched(bf16 ? internal::LaunchReplayDecodeKernelBf16(
                             tile, stage, tile_first, a, stream, pdl)
                       : internal::LaunchReplayDecodeKernelF32(
                             tile, stage, tile_first, a, stream, pdl),
                  "LaunchGdnReplayDecode");
}

absl::Status LaunchGdnReplayFold(const GdnReplayFoldParams& params,
                                 cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.batch == 0) return absl::OkStatus();
  DecodeArgs a;
  a.batch = params.batch;
  a.H = params.num_k_heads;
  a.HV = params.num_v_heads;
  a.r = params.num_v_heads / params.num_k_heads;
  a.state = params.state;
  a.slots = params.slot_indices;
  SetRing(params.ring, params.ring_indices, params.write_pos, &a);
  return Launched(params.ring.dtype == DType::kBf16
                      ? internal::LaunchReplayFoldKernelBf16(a, stream)
                      : internal::LaunchReplayFoldKernelF32(a, stream),
                  "LaunchGdnReplayFold");
}

absl::Status LaunchGdnReplayAdvance(const GdnReplayAdvanceParams& params,
                                    cudaStream_t stream) {
  if (absl::Status s = params.Validate(); !s.ok()) return s;
  if (params.batch == 0) return absl::OkStatus();
  constexpr int kThreads = 256;
  GDN_LAUNCH(AdvanceKernel, (params.batch + kThreads - 1) / kThreads, kThreads,
             0, stream, params.batch, params.ring_length, params.ring_indices,
             params.write_pos, params.force_flush);
  return internal::LaunchStatus("LaunchGdnReplayAdvance");
}

}  // namespace rollout::gdn
