// Views of one sequence's decode state in the backend's pools, as the model
// consumes them for one Forward call. The backend owns the storage and builds
// these views per row; the model reads and updates the state through them.
#ifndef ROLLOUT_MODEL_SEQUENCE_STATE_H_
#define ROLLOUT_MODEL_SEQUENCE_STATE_H_

#include <vector>

#include "model/ops/paged_kv.h"

namespace rollout::model {

// One GDN layer's state (gdn/reference.h layouts).
struct GdnLayerState {
  float* conv_state = nullptr;  // [Kc-1, conv_dim]
  float* recurrent = nullptr;   // [HV, V, K] (the ReplaySSM checkpoint)
  float* ring_k = nullptr;      // [H, L, K]   ring path only
  float* ring_d = nullptr;      // [HV, L, V]  ring path only
  float* ring_g = nullptr;      // [HV, L]     ring path only
};

// ReplaySSM arguments of a one-token decode row (backend.h ReplayRow).
struct ReplayArgs {
  int ring_length = 0;  // L; 0 = plain path (state read and written)
  int write_pos = 0;    // committed ring entries since the checkpoint
  bool force_flush = false;
};

struct SequenceState {
  std::vector<GdnLayerState> gdn;  // one per linear-attention layer, in order
  std::vector<ops::PagedKv> kv;    // one per full-attention layer, in order
  ReplayArgs replay;
};

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_SEQUENCE_STATE_H_
