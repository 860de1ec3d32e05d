// Sparse MoE block of Qwen3-Next / Qwen3.5-MoE (transformers'
// *SparseMoeBlock): fp32 softmax router over E experts, top-k, optional
// renormalisation of the k probabilities, the weighted sum of the chosen
// SwiGLU experts (accumulated in ascending expert order, as transformers'
// index_add loop), plus a shared SwiGLU expert scaled by sigmoid(x . w_sg).
#ifndef ROLLOUT_MODEL_OPS_MOE_H_
#define ROLLOUT_MODEL_OPS_MOE_H_

#include <cstdint>
#include <vector>

#include "model/ops/mlp.h"
#include "model/ops/parallel.h"

namespace rollout::model::ops {

struct MoeView {
  const float* router = nullptr;  // [E, D]
  std::vector<MlpView> experts;   // E
  MlpView shared;
  const float* shared_gate = nullptr;  // [D]
  int top_k = 0;
  bool norm_topk_prob = true;
};

// Routing of one token: top_k experts (descending probability; ties to the
// lower index) and their weights.
struct Routing {
  std::vector<int32_t> experts;
  std::vector<float> weights;
};

// Router probabilities -> top-k (exposed for tests and the CUDA comparison).
Routing RouteToken(const float* logits, int num_experts, int top_k,
                   bool norm_topk_prob);

// x: [M, D] tokens of one sequence; y: [M, D] (overwritten, no aliasing).
void MoeForward(const float* x, int M, int D, const MoeView& w, float* y,
                ThreadPool* pool);

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_MOE_H_
