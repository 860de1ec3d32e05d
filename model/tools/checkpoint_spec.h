// The description of a checkpoint to synthesise: the architecture (what
// config.json says) and the storage layout (which of the Hugging Face tensor
// layouts to write), with presets for the real model shapes of
// gdn_replayssm.md section 3 so that benchmarks run at real sizes without
// downloads.
//
//   ASSIGN_OR_RETURN(CheckpointSpec spec, PresetSpec("qwen3.5-0.8b"));
//   spec.num_layers = 4;  // fewer layers, real layer shapes
//   std::string config_json = ConfigJson(spec);
#ifndef ROLLOUT_MODEL_TOOLS_CHECKPOINT_SPEC_H_
#define ROLLOUT_MODEL_TOOLS_CHECKPOINT_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::model::tools {

struct CheckpointSpec {
  // "qwen3_next", "qwen3_5" or "qwen3_5_moe".
  std::string model_type = "qwen3_5";
  // Qwen3.5 conditional-generation layout: config under "text_config",
  // tensors under "model.language_model.". Ignored for qwen3_next.
  bool nested = true;

  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int full_attention_interval = 4;  // layer i is full attention iff (i+1)%4==0
  int intermediate_size = 0;  // dense FFN (Qwen3.5; Qwen3-Next dense layers)
  int max_position_embeddings = 262144;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  int eos_token_id = -1;  // -1: none

  // GDN.
  int linear_num_key_heads = 0;
  int linear_num_value_heads = 0;
  int linear_key_head_dim = 128;
  int linear_value_head_dim = 128;
  int linear_conv_kernel_dim = 4;

  // Attention.
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 256;
  double rope_theta = 1e7;
  double partial_rotary_factor = 0.25;
  std::vector<int> mrope_section;  // written for qwen3_5* when non-empty

  // MoE (qwen3_next with num_experts > 0, qwen3_5_moe).
  int num_experts = 0;
  int num_experts_per_tok = 0;
  int moe_intermediate_size = 0;
  int shared_expert_intermediate_size = 0;
  bool norm_topk_prob = true;        // qwen3_next
  int decoder_sparse_step = 1;       // qwen3_next
  std::vector<int> mlp_only_layers;  // qwen3_next
  // Experts as fused experts.gate_up_proj [E, 2I, D] / experts.down_proj
  // [E, D, I] (transformers 5 in-memory form) instead of per-expert tensors.
  bool fused_experts = false;
  // Qwen3-Next only: write the GDN projections as separate in_proj_qkv / z / b
  // / a (the Qwen3.5 form) instead of the fused per-key-head grouping.
  bool split_gdn_projections = false;
  // Also write tensors a loader must ignore (mtp.*, vision tower).
  bool extra_ignored_tensors = false;

  bool is_moe_layer(int layer) const;
  bool is_full_attention(int layer) const {
    return (layer + 1) % full_attention_interval == 0;
  }
  absl::Status Validate() const;
};

// Names of the presets ("qwen3.5-0.8b", ...).
std::vector<std::string> PresetNames();
absl::StatusOr<CheckpointSpec> PresetSpec(absl::string_view name);

// config.json text for the spec (transformers 5 field names).
std::string ConfigJson(const CheckpointSpec& spec);
// generation_config.json text.
std::string GenerationConfigJson(const CheckpointSpec& spec);

}  // namespace rollout::model::tools

#endif  // ROLLOUT_MODEL_TOOLS_CHECKPOINT_SPEC_H_
