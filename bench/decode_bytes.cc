#include "bench/decode_bytes.h"

#include <algorithm>
#include <cmath>

namespace rollout::bench {
namespace {

constexpr double kDim = 128;  // K = V

// One ring entry of one row: k [H, K] in bf16 with an fp32 norm scale per
// key head, d [HV, V] in the ring's element type, g [HV] in fp32
// (gdn/decode.h).
double EntryBytes(DecodeShape s, int ring_elem_bytes) {
  return s.num_k_heads * (kDim * 2.0 + 4.0) +
         s.num_v_heads * kDim * ring_elem_bytes + s.num_v_heads * 4.0;
}

double RowStateBytes(DecodeShape s) { return s.num_v_heads * StateHeadBytes(); }

}  // namespace

double StateHeadBytes() { return kDim * kDim * 4.0; }

double DecodeIoBytes(DecodeShape s, int batch) {
  const double conv_dim = (2.0 * s.num_k_heads + s.num_v_heads) * kDim;
  return static_cast<double>(batch) *
         (conv_dim * 2.0 + s.num_v_heads * 4.0 + s.num_v_heads * kDim * 2.0);
}

double PackedStepBytes(DecodeShape s, int batch) {
  return batch * 2.0 * RowStateBytes(s) + DecodeIoBytes(s, batch);
}

double ReplayNonFlushBytes(DecodeShape s, int batch, int L,
                           int ring_elem_bytes) {
  const double e = EntryBytes(s, ring_elem_bytes);
  const double steps = L - 1;
  const double per_row = steps * RowStateBytes(s) +         // checkpoint reads
                         (steps * (steps - 1) / 2.0) * e +  // n = 0 .. L - 2
                         steps * e;                         // appends
  return batch * per_row + steps * DecodeIoBytes(s, batch);
}

double ReplayFlushBytes(DecodeShape s, int batch, int L, int ring_elem_bytes) {
  const double per_row = 2.0 * RowStateBytes(s) +  // read + write in place
                         (L - 1) * EntryBytes(s, ring_elem_bytes);
  return batch * per_row + DecodeIoBytes(s, batch);
}

double ReplayCycleBytes(DecodeShape s, int batch, int L, int ring_elem_bytes) {
  return ReplayNonFlushBytes(s, batch, L, ring_elem_bytes) +
         ReplayFlushBytes(s, batch, L, ring_elem_bytes);
}

double RingSlotBytes(DecodeShape s, int L, int ring_elem_bytes) {
  return L * EntryBytes(s, ring_elem_bytes);
}

int RotatingSlotSets(DecodeShape s, int batch, int L, bool rings,
                     double rotate_bytes) {
  auto sets_over = [&](double set_bytes) {
    return static_cast<int>(std::ceil(rotate_bytes / set_bytes));
  };
  int n = std::max(2, sets_over(batch * RowStateBytes(s)));
  if (rings) n = std::max(n, sets_over(batch * RingSlotBytes(s, L, 4)));
  return n;
}

double ReplayRatioBound(DecodeShape s, int L, int ring_elem_bytes) {
  return PackedStepBytes(s, 1) /
         (ReplayCycleBytes(s, 1, L, ring_elem_bytes) / L);
}

double ReplayRatioBoundAtCeilings(DecodeShape s, int L, int ring_elem_bytes,
                                  double copy_gbps, double read_gbps) {
  const double packed_s = PackedStepBytes(s, 1) / copy_gbps;
  const double cycle_s =
      ReplayNonFlushBytes(s, 1, L, ring_elem_bytes) / read_gbps +
      ReplayFlushBytes(s, 1, L, ring_elem_bytes) / copy_gbps;
  return packed_s / (cycle_s / L);
}

}  // namespace rollout::bench
