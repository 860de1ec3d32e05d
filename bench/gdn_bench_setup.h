// One (head shape, batch) point of the GDN decode benchmark on the device
// (Setup: state pool, slot sets, cursors, inputs, rings), the launch
// variants measured side by side, their launch parameters and the byte
// counts the bandwidth figures use.
#ifndef ROLLOUT_BENCH_GDN_BENCH_SETUP_H_
#define ROLLOUT_BENCH_GDN_BENCH_SETUP_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>

#include "bench/gdn_bench_device.h"
#include "gdn/decode.h"
#include "gdn/dtype.h"

namespace rollout::bench {

// Everything one (shape, batch) point needs on the device.
struct Setup {
  int H = kH, HV = 32, B = 1, nsets = 2, num_slots = 2;
  int conv_dim = 0;
  float* state = nullptr;          // [num_slots, HV, V, K]
  int32_t* sets = nullptr;         // [nsets, B] scattered disjoint slots
  int32_t* sets_lin = nullptr;     // [nsets, B] set s = slots s*B .. s*B+B-1
  int32_t* sets_sorted = nullptr;  // [nsets, B] the sets of `sets`, ascending
  int32_t* half_on = nullptr;      // [nsets, B/2] even rows of each set
  int32_t* half_off = nullptr;     // [nsets, B/2] odd rows
  int32_t* mixed_rings = nullptr;  // [nsets, B] slot or -1 (odd rows OFF)
  int32_t* cursors = nullptr;      // [L, B]: buffer s holds s everywhere
  // [L, B]: buffer s holds (s + row) % L: the flush phases staggered over the
  // rows as the engine schedules them (DESIGN.md), B / L rows flush per step.
  int32_t* stag_cursors = nullptr;
  // [B] all 0: force-flush flags passed and never set, as an engine that
  // keeps one flag buffer passes them every step (Variant::flags).
  int8_t* zero_flags = nullptr;
  uint16_t* qkv = nullptr;  // [B, conv_dim]
  uint16_t* a = nullptr;    // [B, HV]
  uint16_t* b = nullptr;
  float* A_log = nullptr;  // [HV]
  float* dt_bias = nullptr;
  uint16_t* o = nullptr;       // [B, HV*V]
  uint16_t* ring_k = nullptr;  // rings per slot: bf16 k rows + scales,
  float* ring_ks = nullptr;    // d fp32 or bf16 (ring_dtype)
  void* ring_d = nullptr;
  float* ring_g = nullptr;
  gdn::DType ring_dtype = gdn::DType::kFp32;
  float* coef = nullptr;  // ReplaySSM coefficient scratch [B, HV, 2L + 4]
  int64_t coef_floats = 0;

  void Free() {
    FreeAll(state, sets, sets_lin, sets_sorted, half_on, half_off, mixed_rings,
            cursors, stag_cursors, zero_flags, qkv, a, b, A_log, dt_bias, o,
            ring_k, ring_ks, ring_d, ring_g, coef);
  }

  // The slot list of set `set` (scattered, scattered in ascending order, or
  // contiguous).
  const int32_t* SlotSet(bool linear, bool sorted, int set) const {
    return (linear   ? sets_lin
            : sorted ? sets_sorted
                     : sets) +
           static_cast<int64_t>(set) * B;
  }

  void AllocRing(gdn::DType dt, cudaStream_t s) {
    FreeAll(ring_k, ring_ks, ring_d, ring_g);
    ring_dtype = dt;
    const size_t e = gdn::DTypeBytes(dt);
    const size_t nk = static_cast<size_t>(num_slots) * H * kL * kD;
    const size_t nks = static_cast<size_t>(num_slots) * H * kL;
    const size_t nd = static_cast<size_t>(num_slots) * HV * kL * kD;
    ring_k = Alloc<uint16_t>(nk);
    ring_ks = Alloc<float>(nks);
    ring_d = Alloc<uint8_t>(nd * e);
    ring_g = Alloc<float>(static_cast<size_t>(num_slots) * HV * kL);
    // Written before read by the cycle order; zeroed so nothing is garbage.
    BENCH_CUDA(cudaMemsetAsync(ring_k, 0, nk * 2, s));
    BENCH_CUDA(cudaMemsetAsync(ring_ks, 0, nks * 4, s));
    BENCH_CUDA(cudaMemsetAsync(ring_d, 0, nd * e, s));
    BENCH_CUDA(cudaMemsetAsync(ring_g, 0, num_slots * HV * kL * 4ull, s));
  }
};

// What the slot sets rotate over. kRotate: at least kRotateBytes of state and
// kRotateBytes of (fp32) rings, so that neither a set's state nor its ring
// entries are still in L2 at its next step, as in a model whose other layers
// run between two steps of one layer. kStateOnly: the state alone (the method
// up to run 118, whose B <= 160 ReplaySSM lines read ring entries that L2
// kept from the set's previous step: `--cold-rings`, run 119).
enum class RingRotation { kRotate, kStateOnly };

// Slot sets of a (HV, B) point: max(2, the sets `rings` asks for).
int RotatingSets(int HV, int B, RingRotation rings);

// `min_sets`: at least this many slot sets (default: RotatingSets).
Setup MakeSetup(int HV, int B, cudaStream_t s, std::mt19937& rng,
                int min_sets = 2, RingRotation rings = RingRotation::kRotate);

// Launch variants measured side by side.
struct Variant {
  gdn::DecodeTile tile = gdn::DecodeTile::kAuto;
  // Programmatic dependent launch (kAuto: the shipped choice).
  gdn::DecodeOverlap overlap = gdn::DecodeOverlap::kAuto;
  bool cs = false;    // evict-first state stores
  bool stage = true;  // ReplaySSM: ring staged in shared memory
  // ReplaySSM, staged: which copy group goes first (kAuto: the shipped rule).
  gdn::ReplayCopyOrder order = gdn::ReplayCopyOrder::kAuto;
  gdn::DecodeStatePolicy policy = gdn::DecodeStatePolicy::kAuto;
  bool linear = false;  // contiguous slot sets instead of scattered ones
  bool sorted = false;  // scattered slot sets, rows in ascending slot order
  gdn::ReplayCoefRoute route = gdn::ReplayCoefRoute::kAuto;
  bool flags = false;  // ReplaySSM: force-flush flags passed (all 0)
  std::string Name() const {
    std::string n = gdn::DecodeTileName(tile);
    if (overlap != gdn::DecodeOverlap::kAuto) {
      n += std::string("+") + gdn::DecodeOverlapName(overlap);
    }
    if (cs) n += "+cs";
    if (!stage) n += "+unstaged";
    if (order != gdn::ReplayCopyOrder::kAuto) {
      n += std::string("+") + gdn::ReplayCopyOrderName(order);
    }
    if (policy == gdn::DecodeStatePolicy::kDefault) n += "+plain";
    if (policy == gdn::DecodeStatePolicy::kEvictLast) n += "+el";
    if (linear) n += "+linear";
    if (sorted) n += "+sorted";
    if (route == gdn::ReplayCoefRoute::kFused) n += "+fused";
    if (route == gdn::ReplayCoefRoute::kPrecomputed) n += "+coef";
    if (flags) n += "+flags";
    return n;
  }
};

gdn::GdnDecodeParams StepParams(const Setup& st, const int32_t* slots, int B,
                                const Variant& var);

gdn::GdnReplayParams ReplayParams(const Setup& st, const int32_t* slots,
                                  const int32_t* rings, const int32_t* cursor,
                                  int B, const Variant& var);

// Byte counts (bench/decode_bytes.h: the state, ring, q|k|v, a, b and o
// traffic each step must move).
double PackedBytes(const Setup& st, int B);

// Bytes of one full ring cycle (L steps) of B ON rows.
double ReplayCycleBytes(const Setup& st, int B, gdn::DType ring);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_SETUP_H_
