// Causal GQA softmax attention of one sequence over a paged KV cache, with
// the Qwen3-Next / Qwen3.5 output gate: out = softmax(q k^T * scale) v, then
// out *= sigmoid(gate) element-wise (heads flattened). Scores, softmax and the
// weighted sum are computed in double per (token, head) and rounded once.
#ifndef ROLLOUT_MODEL_OPS_ATTENTION_H_
#define ROLLOUT_MODEL_OPS_ATTENTION_H_

#include "model/ops/paged_kv.h"
#include "model/ops/parallel.h"

namespace rollout::model::ops {

struct AttentionShape {
  int num_heads = 0;  // query heads; head h reads kv head h / (nh / nkv)
  int num_kv_heads = 0;
  int head_dim = 0;
  float scale = 0.0f;  // head_dim^-1/2
};

// q: [T, nh, hd] (normed, rotated) for positions start_pos .. start_pos+T-1,
// whose keys and values are already in `kv`; gate: [T, nh*hd] (row stride
// gate_stride); out: [T, nh*hd]. Token t attends to positions <= start_pos+t.
void GatedAttention(const AttentionShape& shape, const float* q,
                    const float* gate, int gate_stride, int T, int start_pos,
                    const PagedKv& kv, float* out, ThreadPool* pool);

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_ATTENTION_H_
