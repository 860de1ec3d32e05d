// The model description parsed from a Hugging Face config.json: everything the
// loader, the CPU model and the CUDA backend need to know about the
// architecture, validated once.
//
// Supported model types (config.json "model_type", top level or in a nested
// "text_config"): qwen3_next, qwen3_5 / qwen3_5_text, qwen3_5_moe /
// qwen3_5_moe_text. Field semantics follow transformers 5
// (models/qwen3_next, qwen3_5, qwen3_5_moe configuration classes); both the
// transformers-5 `rope_parameters` object and the older top-level
// rope_theta / partial_rotary_factor are accepted.
//
//   ASSIGN_OR_RETURN(ModelConfig config,
//   LoadModelConfig("/ckpt/Qwen3.5-0.8B")); for (int i = 0; i <
//   config.num_layers; ++i)
//     if (config.layer_kinds[i] == LayerKind::kLinearAttention) ...
#ifndef ROLLOUT_MODEL_CONFIG_H_
#define ROLLOUT_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::model {

enum class ModelFamily {
  kQwen3Next,   // fused in_proj_qkvz / in_proj_ba, MoE per decoder_sparse_step
  kQwen3_5,     // dense FFN, separate in_proj_qkv / z / b / a
  kQwen3_5Moe,  // every layer MoE, router always renormalises
};

enum class LayerKind {
  kLinearAttention,  // Gated DeltaNet ("linear_attention")
  kFullAttention,    // gated softmax attention ("full_attention")
};

enum class FfnKind {
  kDense,  // SwiGLU MLP of intermediate_size
  kMoe,    // routed experts + sigmoid-gated shared expert
};

// Gated DeltaNet layer dimensions (gdn_replayssm.md section 1).
struct GdnConfig {
  int num_k_heads = 0;  // H   (linear_num_key_heads)
  int num_v_heads = 0;  // HV  (linear_num_value_heads), HV % H == 0
  int head_k_dim = 0;   // K   (linear_key_head_dim)
  int head_v_dim = 0;   // V   (linear_value_head_dim)
  int conv_kernel = 4;  // Kc  (linear_conv_kernel_dim)

  int key_dim() const { return num_k_heads * head_k_dim; }
  int value_dim() const { return num_v_heads * head_v_dim; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
};

// Gated full attention (q_proj rows per head are [query | gate]).
struct AttentionConfig {
  int num_heads = 0;     // num_attention_heads
  int num_kv_heads = 0;  // num_key_value_heads, num_heads % num_kv_heads == 0
  int head_dim = 0;
};

struct RopeConfig {
  double theta = 0;                    // rope_theta
  double partial_rotary_factor = 1.0;  // rotary part of head_dim
  int rotary_dim = 0;  // int(head_dim * partial_rotary_factor), even, > 0
  // Qwen3.5 multimodal RoPE: with text-only positions (t = h = w) it is
  // exactly 1-D RoPE, so the sections are kept for information only.
  std::vector<int> mrope_section;
  bool mrope_interleaved = false;
};

struct MoeConfig {
  int num_experts = 0;               // E
  int top_k = 0;                     // num_experts_per_tok
  int intermediate_size = 0;         // moe_intermediate_size (per expert)
  int shared_intermediate_size = 0;  // shared_expert_intermediate_size
  bool norm_topk_prob = true;        // renormalise the top-k probabilities
};

struct ModelConfig {
  std::string model_type;  // normalised: "qwen3_next", "qwen3_5", "qwen3_5_moe"
  ModelFamily family = ModelFamily::kQwen3_5;
  // True when the text fields came from a nested "text_config" (Qwen3.5
  // conditional-generation checkpoints: tensors under model.language_model.).
  bool nested_text_config = false;

  int vocab_size = 0;
  int hidden_size = 0;  // D
  int num_layers = 0;
  int intermediate_size = 0;  // dense FFN width; 0 when no layer is dense
  int max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;

  std::vector<LayerKind> layer_kinds;  // [num_layers]
  std::vector<FfnKind> ffn_kinds;      // [num_layers]

  GdnConfig gdn;              // meaningful when a layer is linear attention
  AttentionConfig attention;  // meaningful when a layer is full attention
  RopeConfig rope;
  MoeConfig moe;  // num_experts == 0 when no layer is MoE

  // From generation_config.json and config.json (union, generation first).
  std::vector<int32_t> eos_token_ids;

  int num_gdn_layers() const;
  int num_attention_layers() const;
  // Index of layer i among the layers of its kind (its GDN state index or its
  // KV cache index).
  int KindIndex(int layer) const;

  absl::Status Validate() const;
};

// OK when `candidate` has the same architecture as `serving` (every shape,
// layer kind, FFN kind and numeric convention), so that its weights can
// replace the serving ones without touching any pool; otherwise
// FailedPrecondition naming the first differing field. eos ids and
// max_position_embeddings may differ.
absl::Status CheckSameArchitecture(const ModelConfig& serving,
                                   const ModelConfig& candidate);

// Parses config.json text (and optionally generation_config.json text; empty
// when absent). Every error names the field.
absl::StatusOr<ModelConfig> ParseModelConfig(
    absl::string_view config_json,
    absl::string_view generation_config_json = "");

// Reads <dir>/config.json and, when present, <dir>/generation_config.json.
absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& checkpoint_dir);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_CONFIG_H_
