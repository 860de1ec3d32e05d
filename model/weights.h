// The decoder's weights in fp32, in the layouts the CPU model computes with,
// loaded from a checkpoint and checked against the config.
//
// Layout decisions (all row-major, "[out, in]" as torch Linear weights):
//   - projections that read the same input are concatenated so that one GEMM
//     computes them: GDN in_proj = [q | k | v | z | b | a] rows (Qwen3-Next's
//     per-key-head grouping de-interleaved), attention qkv = [q_proj | k_proj
//     | v_proj] rows (q_proj keeps its per-head [query | gate] rows), MLP
//     gate_up = [gate | up] rows;
//   - MoE experts are stored per expert whichever form the checkpoint used
//     (per-expert tensors or fused experts.gate_up_proj [E, 2I, D] /
//     experts.down_proj [E, D, I]).
// Every tensor of the language model must be used exactly once; mtp.* and
// vision tensors are ignored (weight_names.h).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> w,
//                    LoadModelWeights(config, *checkpoint));
#ifndef ROLLOUT_MODEL_WEIGHTS_H_
#define ROLLOUT_MODEL_WEIGHTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "model/checkpoint.h"
#include "model/config.h"

namespace rollout::model {

struct GdnWeights {
  // [conv_dim + value_dim + 2*HV, D]: rows [Q | K | V | Z | b | a].
  std::vector<float> in_proj;
  std::vector<float> conv;      // [conv_dim, Kc]
  std::vector<float> A_log;     // [HV]
  std::vector<float> dt_bias;   // [HV]
  std::vector<float> norm;      // [V] gated RMSNorm weight (plain, not 1+w)
  std::vector<float> out_proj;  // [D, value_dim]
};

struct AttentionWeights {
  // [2*nh*hd + 2*nkv*hd, D]: q_proj rows (per head [query (hd) | gate (hd)]),
  // then k_proj, then v_proj.
  std::vector<float> qkv_proj;
  std::vector<float> q_norm;  // [hd] zero-centred (x * (1 + w))
  std::vector<float> k_norm;  // [hd] zero-centred
  std::vector<float> o_proj;  // [D, nh*hd]
};

struct MlpWeights {
  int intermediate = 0;        // I
  std::vector<float> gate_up;  // [2I, D]: gate rows, then up rows
  std::vector<float> down;     // [D, I]
};

struct MoeWeights {
  std::vector<float> router;        // [E, D]
  std::vector<MlpWeights> experts;  // E experts of moe_intermediate_size
  MlpWeights shared;                // shared expert
  std::vector<float> shared_gate;   // [D] (HF shared_expert_gate [1, D])
};

struct LayerWeights {
  LayerKind kind = LayerKind::kLinearAttention;
  FfnKind ffn = FfnKind::kDense;
  std::vector<float> input_norm;  // [D] zero-centred
  std::vector<float> post_norm;   // [D] zero-centred
  GdnWeights gdn;                 // kind == kLinearAttention
  AttentionWeights attention;     // kind == kFullAttention
  MlpWeights mlp;                 // ffn == kDense
  MoeWeights moe;                 // ffn == kMoe
};

struct ModelWeights {
  std::vector<float> embed;       // [vocab, D]
  std::vector<float> final_norm;  // [D] zero-centred
  std::vector<float> lm_head;     // [vocab, D]; empty when tied to embed
  std::vector<LayerWeights> layers;

  const float* lm_head_data() const {
    return lm_head.empty() ? embed.data() : lm_head.data();
  }
  int64_t bytes() const;
};

// Reads, converts (bf16/fp16/fp32 -> fp32), re-lays out and validates every
// weight. Errors name the checkpoint tensor and the expected shape; tensors
// with NaN/Inf are rejected.
absl::StatusOr<std::unique_ptr<ModelWeights>> LoadModelWeights(
    const ModelConfig& config, const Checkpoint& checkpoint);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_WEIGHTS_H_
