// GDN single-token decode kernels on the GPU: packed decode (state read +
// write), ReplaySSM decode + flush (state read only, exact fp32 history
// route), ReplaySSM fold, and the per-row cursor advance. Math and ring
// semantics: gdn/reference.h (the CPU oracle) and
// ../shared/docs/gdn_replayssm.md sections 1 and 4.
//
// Buffers (device memory, row-major; "bf16" = uint16_t bit patterns):
//   qkv      [B, qkv_row_stride] bf16. Row b holds the post-conv (SiLU)
//            channels [Q: H*K | K: H*K | V: HV*V], head-major per block
//            (conv.h writes exactly this).
//   a, b     [B, ab_row_stride], bf16 or fp32 (ab_dtype): the raw in_proj_a /
//            in_proj_b outputs (gates are computed in the kernel, fp32).
//   A_log, dt_bias  [HV] fp32.
//   state    [num_slots, HV, V, K] fp32, K contiguous. Row b uses slot
//            slot_indices[b]; a negative slot marks a padding row (its o is
//            written as zeros, nothing else is touched). Any order works;
//            rows in ascending slot order make the packed step ~1.3 %
//            faster at B >= 256 than the same slots in random order, and
//            contiguous slots ~2.6 % (H200, run 24), so an engine that can
//            order its decode rows by slot should.
//   o        [B, o_row_stride], row b = [HV, V], bf16 or fp32 (o_dtype).
//   ReplaySSM ring pool (one per GDN layer), ring slot = ring_indices[b]:
//     k        [num_ring_slots, H, L, K]   bf16: k as it came in q|k|v,
//                                          before its L2 norm
//     k_scale  [num_ring_slots, H, L]      fp32: that norm's scale 1/|k|,
//                                          so k_j = k * k_scale exactly (an
//                                          fp32 row in half the bytes)
//     d        [num_ring_slots, HV, L, V]  d_t = beta (v - alpha S_{t-1} k):
//                                          the rank-1 update S_t - alpha
//                                          S_{t-1}
//     g        [num_ring_slots, HV, L]     log decay, always fp32
//     d is fp32 (default: the ring is exact) or bf16 (ring.dtype).
//   coef     [B, HV, 2 L + 4] fp32 scratch of the ReplaySSM launch's
//            precomputed coefficient route (GdnReplayParams::coef_scratch).
//
// Cursor semantics (one int32 write_pos + one int8 force flag per row, in
// fixed device buffers shared by all GDN layers of a step, so one CUDA graph
// serves every step): write_pos[b] = number of ring entries committed since
// the checkpoint (the state slot) was last written, 0 <= write_pos < L. A row
// flushes when write_pos == L-1 or force_flush[b] != 0: it folds its
// write_pos entries, applies the token, writes the exact state into its slot
// and appends nothing. Otherwise it reads the slot, computes o by the fp32
// history route and appends (k, d, g) at entry write_pos. The kernels never
// move cursors; after all layers of a step, LaunchGdnReplayAdvance sets
// write_pos = flushed ? 0 : write_pos + 1 and clears the force flags. A row
// with ring_indices[b] < 0 is OFF: the plain packed step on its slot (no ring
// access, cursor ignored). After a prefill (which writes the exact state) the
// engine sets write_pos = 0; any other consumer of a slot (fork, export,
// chunked-prefill continuation) calls LaunchGdnReplayFold first.
//
// Shapes supported: K = V = 128, H >= 1, HV % H == 0 (the models use H = 16,
// HV in {16, 32, 48, 64}); ring length 1 <= L <= 64. Row strides are in
// elements and multiples of 8; base pointers 16-byte aligned.
//
// All launchers are asynchronous on `stream`, capture into CUDA graphs, and
// return InvalidArgument for bad params (nothing launched) or Internal for a
// launch error.
#ifndef ROLLOUT_GDN_DECODE_H_
#define ROLLOUT_GDN_DECODE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "gdn/dtype.h"

namespace rollout::gdn {

// Work split of the decode kernels: a CTA owns bv v-rows of one (row, value
// head) over all K columns, staged through shared memory (bv * 512 bytes);
// 8 threads share a v-row (16 columns each) and each thread owns 1-4 rows
// (decode_kernel.cuh). Small tiles fill the GPU at small batch; large ones
// amortise the per-CTA work (ring coefficients, norms) at large batch. kAuto
// picks from the batch, head count and mode (DecodeTileFor).
enum class DecodeTile : int {
  kAuto = 0,
  kBv4 = 1,    // 1 warp,  1 row/thread  -> bv = 4    (2 KB tile)
  kBv8 = 2,    // 2 warps, 1 row/thread  -> bv = 8    (4 KB)
  kBv16 = 3,   // 2 warps, 2 rows/thread -> bv = 16   (8 KB)
  kBv32 = 4,   // 4 warps, 2 rows/thread -> bv = 32   (16 KB)
  kBv64 = 5,   // 4 warps, 4 rows/thread -> bv = 64   (32 KB)
  kBv128 = 6,  // 8 warps, 4 rows/thread -> bv = 128  (64 KB, whole head)
};
constexpr int kNumDecodeTiles = 7;
const char* DecodeTileName(DecodeTile tile);
// V-rows per CTA of a tile (kAuto: 0).
int DecodeTileRows(DecodeTile tile);
// Peak DRAM bandwidth (GB/s) of the calling thread's current device: twice
// its memory clock times its bus width (cached per device; 0 when the driver
// reports neither). The tile tables depend on it (DecodeTileFor).
double DevicePeakMemoryGbps();
// Below this peak DRAM bandwidth a card takes the narrow-memory tile tables
// (an H100 SXM: 3.35 TB/s; an H200: 4.8 TB/s).
inline constexpr double kNarrowMemoryGbps = 4000.0;
// Whether a card of `peak_gbps` takes them (0, unknown: no).
inline bool NarrowMemory(double peak_gbps) {
  return peak_gbps > 0.0 && peak_gbps < kNarrowMemoryGbps;
}
// The tile kAuto resolves to for `rows` decode rows of `num_v_heads` heads,
// for the packed or the ReplaySSM kernel, on a device whose peak DRAM
// bandwidth is `peak_gbps` (DevicePeakMemoryGbps; 0, unknown, takes the
// H200's table, for which the tiles were tuned).
DecodeTile DecodeTileFor(int rows, int num_v_heads, bool replay,
                         double peak_gbps);
// The CTAs per SM kAuto caps a ReplaySSM launch's kernel at, 0 for none
// (its shared memory and registers decide), for a launch of `tile` (resolved)
// on the fused (or the precomputed) coefficient route, its ring staged or not,
// with a ring of `ring_dtype`, on a card of `peak_gbps`. Run 126 (H100, three
// calls; docs/benchmarks/gdn_history.md): the fused route's staged 64-row
// tile with the fp32 ring, five CTAs per SM uncapped, runs each cycle
// 0.4-1.0 % faster at four, from 3072 (row, value head) pairs on; capped, the
// precomputed route's flush took 17 % longer and the 32-row tile's cycle
// 2-6 %. Run 127's A/B (H100, three passes): the cycle 0.2-0.5 % shorter at
// 16/32 B = 128-512 and 16/16 B = 256-1024. The H200 needs the larger tiles'
// bytes in flight (DecodeTileFor), so only a narrow-memory card takes the cap.
// Only a kAuto tile is capped: a launch that names its tile runs it uncapped.
int ReplayCtasPerSmFor(DecodeTile tile, bool precomputed, bool stage,
                       DType ring_dtype, double peak_gbps);

// L2 cache policy of the state traffic (loads and stores of the state slots).
// Measured on the H200 (docs/benchmarks/gdn_history.md): the packed step's
// in-place update of blocks scattered over the slot pool loses ~3 % of the copy
// ceiling to the scatter; evict-last on the state lines takes most of it back
// at large batch, and costs a little at batch 8.
enum class DecodeStatePolicy : int {
  kAuto = 0,       // packed step: kEvictLast from 512 (row, value head) pairs
                   // on, ReplaySSM launches from 2048; else kDefault
  kDefault = 1,    // plain loads and write-back stores (stream_stores: .cs)
  kEvictLast = 2,  // L2 evict-last policy on the state loads and stores
};
// The policy kAuto resolves to (never kAuto).
DecodeStatePolicy DecodeStatePolicyFor(int rows, int num_v_heads, bool replay);

// How a decode launch overlaps the kernel before it in the stream
// (programmatic dependent launch, sm_90). Measured on the H200
// (docs/benchmarks/gdn_history.md, runs 58-67): in a graph of back-to-back
// packed steps at one decode row of 32 value heads, kLaunch takes 2.7 instead
// of 3.2 us per call; up to 2048 (row, value head) pairs it is 0.5-15 % faster
// with the tiles DecodeTileFor picks (but not with the packed step's 64-row
// tile at 129-256 pairs); above, level or slower. The ReplaySSM step, on
// 5574a0b's kernels, gains up to 512 pairs (up to 2048 on a narrow-memory
// card: runs 114-115). After the conv update (gdn/conv.h, which lets its
// dependents launch as it starts), as in a layer, kLaunch saves 0.3-0.5 us;
// gdn/layer_decode.h launches that pair with kPrologue where it is faster
// still (its contract holds after the conv kernel).
enum class DecodeOverlap : int {
  kAuto = 0,  // kLaunch where it measured faster (DecodeOverlapFor), else kNone
  // A plain launch. (On the precomputed coefficient route the decode kernel
  // still overlaps its own pre-kernel, which is the plain launch.)
  kNone = 1,
  // The CTAs are launched during the preceding kernel's tail and wait for it
  // (and its memory) before their first memory access: the semantics of a
  // plain launch, with the launch latency hidden. Safe after any kernel.
  kLaunch = 2,
  // Also the index loads (slot_indices; for ReplaySSM ring_indices,
  // write_pos, force_flush and the ring entries) and the state streaming go
  // before the wait: q|k|v, a, b are read and every output written after it.
  // So the immediately preceding kernel must not write the state slots, the
  // ring or the cursors of this launch (true for conv -> decode; keep the
  // cursor advance away from the front of a layer).
  kPrologue = 3,
};
const char* DecodeOverlapName(DecodeOverlap overlap);
// The overlap kAuto resolves to (never kAuto) for `rows` decode rows of
// `num_v_heads` heads, for the packed or the ReplaySSM kernel, on a device of
// `peak_gbps` (as DecodeTileFor: on a narrow-memory card the packed step's
// plain-launch range is narrower, and the ReplaySSM step takes kLaunch up to
// 2048 (row, value head) pairs instead of 512).
DecodeOverlap DecodeOverlapFor(int rows, int num_v_heads, bool replay,
                               double peak_gbps);

// Whatever the policy, a ReplaySSM launch loads the checkpoint of its
// non-flush rows evict-first (read once, never written) and reads and
// appends the ring's k rows evict-last (read again at every later step of
// the cycle): 1-2.5 % faster non-flush steps at B = 128-256, where the k
// rows fit in L2 (runs 22-24).

// One packed decode step (state read + write) of a GDN layer.
struct GdnDecodeParams {
  int num_k_heads = 16;           // H
  int num_v_heads = 32;           // HV (multiple of H)
  int head_dim = 128;             // K = V (only 128)
  int batch = 0;                  // B decode rows (0: nothing to do)
  const uint16_t* qkv = nullptr;  // [B, qkv_row_stride] bf16, post-conv
  int64_t qkv_row_stride = 0;     // >= 2*H*K + HV*V
  const void* a = nullptr;        // [B, ab_row_stride] raw a (ab_dtype)
  const void* b = nullptr;        // [B, ab_row_stride] raw b (ab_dtype)
  int64_t ab_row_stride = 0;      // >= HV
  DType ab_dtype = DType::kBf16;
  const float* A_log = nullptr;    // [HV]
  const float* dt_bias = nullptr;  // [HV]
  float* state = nullptr;          // [num_slots, HV, V, K] fp32, in place
  int64_t num_slots = 0;           // pool size (for checks only)
  const int32_t* slot_indices = nullptr;  // [B]; < 0: padding row
  void* o = nullptr;                      // [B, o_row_stride] (o_dtype)
  int64_t o_row_stride = 0;               // >= HV*V
  DType o_dtype = DType::kBf16;
  DecodeTile tile = DecodeTile::kAuto;
  // Evict-first (st.global.cs) hint on the state writes instead of plain
  // write-back stores (when the state policy resolves to kDefault).
  bool stream_stores = false;
  DecodeStatePolicy state_policy = DecodeStatePolicy::kAuto;
  // Programmatic dependent launch (DecodeOverlap: kPrologue has a contract
  // on the preceding kernel; kAuto and kLaunch keep plain-launch semantics).
  DecodeOverlap overlap = DecodeOverlap::kAuto;

  absl::Status Validate() const;
};

// A layer's ReplaySSM ring pool. The k rows are kept as the bf16 keys of the
// q|k|v rows (the kernels' only input format) plus one fp32 norm scale per
// row, which gives every kernel the same fp32 k_j an fp32 row would hold:
// the default ring stays exact while its k bytes halve (at 16/16, with one
// k row per d row, a quarter of the fp32 ring's bytes).
struct GdnReplayRing {
  int length = 16;             // L (1..64)
  DType dtype = DType::kFp32;  // of d (k is bf16 + k_scale, g is fp32)
  uint16_t* k = nullptr;       // [num_ring_slots, H, L, K] bf16, raw
  float* k_scale = nullptr;    // [num_ring_slots, H, L]
  void* d = nullptr;           // [num_ring_slots, HV, L, V]
  float* g = nullptr;          // [num_ring_slots, HV, L]
  int64_t num_ring_slots = 0;  // pool size (for checks only)

  // Bytes of one ring slot for a layer with H key and HV value heads.
  static int64_t SlotBytes(int num_k_heads, int num_v_heads, int head_dim,
                           int length, DType dtype);
};

// Where the non-flush rows of a ReplaySSM step get their ring coefficients
// c^x_j = w_j (k_j . x) (x = q, k; w_j from the ring's g) and the checkpoint
// decay A:
//   kFused:       every CTA computes them from the ring k rows and g (one
//                 launch; the work repeats for each value head and v-block of
//                 a key group).
//   kPrecomputed: a pre-kernel (one warp per row and key head) computes them
//                 once into GdnReplayParams::coef_scratch, then the decode
//                 kernel reads 2 n + 1 floats per (row, value head) instead
//                 of n ring k rows (two launches; fp32 or bf16 ring).
//                 The ring's elements are read as stored either way.
//   kAuto:        kPrecomputed where it measured faster (ReplayCoefRouteFor)
//                 and coef_scratch is set, else kFused.
// Both routes give the same outputs up to fp32 rounding (fp32 ring, tests:
// <= 1e-5 of the fp32 recurrence, measured ~5e-7; a bf16 ring rounds d on
// either route: within 2e-2, measured ~1.7e-3). The pre-kernel is launched
// without PDL (it follows the caller's preceding kernel completely); with
// a PDL step.overlap the decode kernel then overlaps the pre-kernel, reading
// the records only after its dependency wait. The kAuto tile of the precomputed
// route is kBv64.
enum class ReplayCoefRoute : int { kAuto = 0, kFused = 1, kPrecomputed = 2 };
// Whether kAuto takes the precomputed route for `rows` rows of
// `num_k_heads` / `num_v_heads` heads and a ring of `ring_dtype` (given a
// scratch buffer): where value heads share key heads, from 32768 (row, value
// head) pairs with the fp32 ring, 16384 with the bf16 ring (runs 62-70).
bool ReplayCoefRouteFor(int rows, int num_k_heads, int num_v_heads,
                        DType ring_dtype);

// The order of a staged ReplaySSM launch's two asynchronous copy groups on the
// fused route (the precomputed route, the kBv4 tile and unstaged launches
// have one order). Ring first, the CTA can dot the staged k rows while the
// state tile still flies; tile first, the tile (the step's longest latency)
// leaves ~100 SASS instructions earlier, as in the packed kernel, and
// the dots wait for it. Run 103 (H100, fp32 ring, bv32 and bv8 tiles):
// tile first, the batch-1 cycle is 2.1-2.2 % shorter (16/32: 3.20 -> 3.13
// us; 16/16: 2.67 -> 2.61) and B = 8 up to 2.7 % longer; B >= 128 level.
// Run 105 (H100) timed the shipped kAuto against the kernels before it:
// batch-1 cycle -2.9 % (16/32) and -3.2 % (16/16), every other line level.
// Run 120 (H100, the rings from DRAM as in a model): tile first still wins
// at batch 1 (cycle 3.8 % and 6.4 % shorter than ring first); at B = 8 it is
// 2.9 % faster at 16/32 but 7.5 % slower at 16/16, so kAuto keeps ring
// first there.
enum class ReplayCopyOrder : int {
  kAuto = 0,       // ReplayCopyOrderFor
  kRingFirst = 1,  // the staged ring, then the tile
  kTileFirst = 2,  // the tile, then the staged ring
};
const char* ReplayCopyOrderName(ReplayCopyOrder order);
// The order kAuto resolves to (never kAuto): kTileFirst up to 32 (row, value
// head) pairs (batch 1 at 16 or 32 value heads), else kRingFirst.
ReplayCopyOrder ReplayCopyOrderFor(int rows, int num_v_heads);

// One ReplaySSM decode step (ON rows) plus plain packed steps (OFF rows) of a
// GDN layer. `step` carries everything of the packed step (its tile too).
struct GdnReplayParams {
  GdnDecodeParams step;
  GdnReplayRing ring;
  const int32_t* ring_indices = nullptr;  // [B]; < 0: OFF row
  const int32_t* write_pos = nullptr;     // [B] cursor, 0..L-1
  // [B] or null (no forced flush). Pass null on steps for which the engine
  // set no flag: with an array every ReplaySSM step waits for its row's flag
  // load before it knows whether it flushes (run 80, H200: the batch-1 cycle
  // 4 % longer with an all-zero array than with null).
  const int8_t* force_flush = nullptr;
  // Stage the first 16 ring entries (k rows, this block's d) in shared memory
  // with the state tile instead of reading them from L2 on demand (tile kBv4
  // never stages; nor does the precomputed route with an fp32 ring longer
  // than 17 entries: its staged flush scales the staged entries in place).
  bool stage_ring = true;
  // Which of a staged launch's copy groups goes first (fused route only).
  ReplayCopyOrder copy_order = ReplayCopyOrder::kAuto;
  ReplayCoefRoute coef_route = ReplayCoefRoute::kAuto;
  // Device scratch of the precomputed route, fp32, 16-byte aligned, owned by
  // the caller (one buffer per stream suffices: it is rewritten by every
  // launch and read only by that launch), [B, HV, CoefStride(L)]: the record
  // of (row b, value head h) holds c^q_j at [j], c^k_j at [L + j] (j < n =
  // write_pos[b]) and A at [2 L]; the rest is padding. Null: kAuto fuses.
  float* coef_scratch = nullptr;
  int64_t coef_scratch_floats = 0;  // capacity, checked against the need

  // Floats per (row, value head) record, and the scratch a launch needs.
  static int CoefStride(int ring_length) { return 2 * ring_length + 4; }
  static int64_t CoefScratchFloats(int batch, int num_v_heads,
                                   int ring_length) {
    return static_cast<int64_t>(batch) * num_v_heads * CoefStride(ring_length);
  }

  absl::Status Validate() const;
};

// Folds the committed entries of each row's ring into its slot (no token):
// afterwards the slot holds the exact current state; the caller resets
// write_pos to 0 (LaunchGdnReplayAdvance with force flags set does it).
struct GdnReplayFoldParams {
  int num_k_heads = 16;
  int num_v_heads = 32;
  int head_dim = 128;
  int batch = 0;
  float* state = nullptr;  // [num_slots, HV, V, K]
  int64_t num_slots = 0;
  const int32_t* slot_indices = nullptr;  // [B]; < 0: skipped
  GdnReplayRing ring;
  const int32_t* ring_indices = nullptr;  // [B]; < 0: skipped
  const int32_t* write_pos = nullptr;     // [B] entries to fold, 0..L-1

  absl::Status Validate() const;
};

// Per-row cursor move after a decode step (once per model step, after all GDN
// layers): write_pos[b] = (write_pos[b] == L-1 || force_flush[b]) ? 0 :
// write_pos[b] + 1 for ON rows (ring_indices[b] >= 0); force_flush[b] = 0.
struct GdnReplayAdvanceParams {
  int batch = 0;
  int ring_length = 16;
  const int32_t* ring_indices = nullptr;  // [B]
  int32_t* write_pos = nullptr;           // [B] in/out
  int8_t* force_flush = nullptr;          // [B] in/out, or null
  absl::Status Validate() const;
};

absl::Status LaunchGdnPackedDecode(const GdnDecodeParams& params,
                                   cudaStream_t stream);
absl::Status LaunchGdnReplayDecode(const GdnReplayParams& params,
                                   cudaStream_t stream);
absl::Status LaunchGdnReplayFold(const GdnReplayFoldParams& params,
                                 cudaStream_t stream);
absl::Status LaunchGdnReplayAdvance(const GdnReplayAdvanceParams& params,
                                    cudaStream_t stream);

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_DECODE_H_
