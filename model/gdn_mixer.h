// The Gated DeltaNet token mixer of one layer for one sequence, in
// transformers' order: in_proj -> short causal conv (+SiLU) on [Q|K|V] ->
// split -> L2 norm of q, k (q scaled by K^-1/2) -> gates (beta, g) -> gated
// delta rule (chunked WY form for prefill chunks and plain decode rows, the
// ReplaySSM ring step for a ring row) -> gated RMSNorm
// with z -> out_proj. The recurrence runs per key-head group (a key head and
// its r value heads are independent of the others) on the thread pool.
#ifndef ROLLOUT_MODEL_GDN_MIXER_H_
#define ROLLOUT_MODEL_GDN_MIXER_H_

#include "gdn/reference.h"
#include "model/config.h"
#include "model/ops/parallel.h"
#include "model/sequence_state.h"
#include "model/weights.h"

namespace rollout::model {

gdn::GdnDims ToGdnDims(const GdnConfig& gdn);

// x: [T, D] (input-normed hidden states); out: [T, D]. For a ring row
// (replay.ring_length > 0) T must be 1. Returns whether the ring row flushed
// (materialised its state into the checkpoint).
bool GdnMixer(const ModelConfig& config, const GdnWeights& w, const float* x,
              int T, const ReplayArgs& replay, GdnLayerState& state, float* out,
              ops::ThreadPool* pool);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_GDN_MIXER_H_
