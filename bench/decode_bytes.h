// The HBM byte model of the GDN decode benchmark (bench/gdn_bench.cc): the
// bytes one packed decode step and one ReplaySSM ring cycle must move, from
// which gdn_bench reports GB/s and % of the copy ceiling, and the bounds these
// byte counts put on the ReplaySSM speed-up over the packed step.
//
// Shapes: H key heads, HV value heads, K = V = 128, fp32 state [HV, V, K] per
// sequence. Activations per decode row: q|k|v (bf16) and raw a, b (bf16) in,
// o (bf16) out. A ring entry (one step of one row) holds k [H, K] in bf16
// with one fp32 norm scale per key head, d [HV, V] in the ring's element
// type and g [HV] in fp32 (gdn/decode.h).
#ifndef ROLLOUT_BENCH_DECODE_BYTES_H_
#define ROLLOUT_BENCH_DECODE_BYTES_H_

namespace rollout::bench {

struct DecodeShape {
  int num_k_heads = 16;  // H
  int num_v_heads = 32;  // HV
};

// fp32 state of one value head: V x K x 4 bytes.
double StateHeadBytes();
// Per-step activation bytes of `batch` rows.
double DecodeIoBytes(DecodeShape s, int batch);
// One packed step: the state read and written once, plus the activations.
double PackedStepBytes(DecodeShape s, int batch);

// One ReplaySSM ring cycle of L steps for `batch` ON rows whose cursors move
// together (the benchmark's cycle): L - 1 non-flush steps, each reading the
// checkpoint and the n committed entries (n = 0 .. L - 2) and appending one,
// then the flush, which reads the checkpoint and L - 1 entries and writes the
// state. `ring_elem_bytes`: the d element, 4 (fp32 ring) or 2 (bf16 ring).
double ReplayNonFlushBytes(DecodeShape s, int batch, int L,
                           int ring_elem_bytes);  // all L - 1 steps together
double ReplayFlushBytes(DecodeShape s, int batch, int L, int ring_elem_bytes);
double ReplayCycleBytes(DecodeShape s, int batch, int L, int ring_elem_bytes);

// A ring's capacity for one slot (row): L entries.
double RingSlotBytes(DecodeShape s, int L, int ring_elem_bytes);

// The slot sets a benchmark point of `batch` rows rotates over: at least 2,
// enough for `rotate_bytes` of state and, with `rings`, for `rotate_bytes` of
// fp32 rings of length L too, so that neither is still in L2 at a set's next
// step (gdn_bench's method).
int RotatingSlotSets(DecodeShape s, int batch, int L, bool rings,
                     double rotate_bytes);

// The largest ReplaySSM speed-up over the packed step (packed time / mean
// cycle step time) these bytes allow when every step moves its bytes at the
// same bandwidth. Independent of the batch.
double ReplayRatioBound(DecodeShape s, int L, int ring_elem_bytes);
// The same when the non-flush steps (read-only state traffic) run at
// `read_gbps` and the packed and flush steps at `copy_gbps`.
double ReplayRatioBoundAtCeilings(DecodeShape s, int L, int ring_elem_bytes,
                                  double copy_gbps, double read_gbps);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_DECODE_BYTES_H_
