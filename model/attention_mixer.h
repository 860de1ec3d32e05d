// The gated full-attention token mixer of one layer for one sequence, in
// transformers' order: q_proj (per head [query | gate]), k_proj, v_proj ->
// zero-centred q_norm / k_norm per head -> partial NeoX RoPE -> append K, V to
// the paged cache -> causal GQA softmax attention -> * sigmoid(gate) ->
// o_proj.
#ifndef ROLLOUT_MODEL_ATTENTION_MIXER_H_
#define ROLLOUT_MODEL_ATTENTION_MIXER_H_

#include "model/config.h"
#include "model/ops/paged_kv.h"
#include "model/ops/parallel.h"
#include "model/ops/rope.h"
#include "model/weights.h"

namespace rollout::model {

// x: [T, D] (input-normed) at positions start_pos .. start_pos+T-1; kv must
// have blocks for positions [0, start_pos + T); out: [T, D].
void AttentionMixer(const ModelConfig& config, const AttentionWeights& w,
                    const ops::Rope& rope, const float* x, int T, int start_pos,
                    const ops::PagedKv& kv, float* out, ops::ThreadPool* pool);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_ATTENTION_MIXER_H_
