#include "model/tools/checkpoint_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace rollout::model::tools {
namespace {

using nlohmann::json;

CheckpointSpec Qwen35Dense(int D, int layers, int hv, int nh, int nkv, int I,
                           bool tie) {
  CheckpointSpec s;
  s.model_type = "qwen3_5";
  s.nested = true;
  s.vocab_size = 248320;
  s.hidden_size = D;
  s.num_layers = layers;
  s.intermediate_size = I;
  s.tie_word_embeddings = tie;
  s.eos_token_id = 248044;
  s.linear_num_key_heads = 16;
  s.linear_num_value_heads = hv;
  s.num_attention_heads = nh;
  s.num_key_value_heads = nkv;
  s.mrope_section = {11, 11, 10};
  return s;
}

}  // namespace

bool CheckpointSpec::is_moe_layer(int layer) const {
  if (model_type == "qwen3_5_moe") return true;
  if (model_type != "qwen3_next" || num_experts == 0) return false;
  return std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) ==
             mlp_only_layers.end() &&
         (layer + 1) % decoder_sparse_step == 0;
}

absl::Status CheckpointSpec::Validate() const {
  if (model_type != "qwen3_next" && model_type != "qwen3_5" &&
      model_type != "qwen3_5_moe") {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported model_type '", model_type, "'"));
  }
  if (vocab_size < 1 || hidden_size < 1 || num_layers < 1 ||
      full_attention_interval < 1 || linear_num_key_heads < 1 ||
      linear_num_value_heads % linear_num_key_heads != 0 ||
      linear_key_head_dim < 1 || linear_value_head_dim < 1 ||
      linear_conv_kernel_dim < 2 || num_attention_heads < 1 ||
      num_key_value_heads < 1 ||
      num_attention_heads % num_key_value_heads != 0 || head_dim < 2) {
    return absl::InvalidArgumentError("checkpoint spec: invalid dimensions");
  }
  bool any_dense = false, any_moe = false;
  for (int i = 0; i < num_layers; ++i) {
    (is_moe_layer(i) ? any_moe : any_dense) = true;
  }
  if (any_dense && intermediate_size < 1) {
    return absl::InvalidArgumentError(
        "checkpoint spec: intermediate_size needed for dense layers");
  }
  if (any_moe &&
      (num_experts < 1 || num_experts_per_tok < 1 ||
       num_experts_per_tok > num_experts || moe_intermediate_size < 1 ||
       shared_expert_intermediate_size < 1)) {
    return absl::InvalidArgumentError("checkpoint spec: invalid MoE sizes");
  }
  return absl::OkStatus();
}

std::vector<std::string> PresetNames() {
  return {"qwen3.5-0.8b", "qwen3.5-2b",      "qwen3.5-4b",        "qwen3.5-9b",
          "qwen3.5-27b",  "qwen3.5-35b-a3b", "qwen3-next-80b-a3b"};
}

absl::StatusOr<CheckpointSpec> PresetSpec(absl::string_view name) {
  // gdn_replayssm.md section 3 (dk = dv = 128, Kc = 4, hd = 256).
  if (name == "qwen3.5-0.8b")
    return Qwen35Dense(1024, 24, 16, 8, 2, 3584, true);
  if (name == "qwen3.5-2b") return Qwen35Dense(2048, 24, 16, 8, 2, 6144, true);
  if (name == "qwen3.5-4b") return Qwen35Dense(2560, 32, 32, 16, 4, 9216, true);
  if (name == "qwen3.5-9b")
    return Qwen35Dense(4096, 32, 32, 16, 4, 12288, false);
  if (name == "qwen3.5-27b") {
    return Qwen35Dense(5120, 64, 48, 24, 4, 17408, false);
  }
  if (name == "qwen3.5-35b-a3b") {
    CheckpointSpec s = Qwen35Dense(2048, 40, 32, 16, 2, 0, false);
    s.model_type = "qwen3_5_moe";
    s.num_experts = 256;
    s.num_experts_per_tok = 8;
    s.moe_intermediate_size = 512;
    s.shared_expert_intermediate_size = 512;
    return s;
  }
  if (name == "qwen3-next-80b-a3b") {
    CheckpointSpec s;
    s.model_type = "qwen3_next";
    s.nested = false;
    s.vocab_size = 151936;
    s.hidden_size = 2048;
    s.num_layers = 48;
    s.intermediate_size = 5120;
    s.eos_token_id = 151645;
    s.linear_num_key_heads = 16;
    s.linear_num_value_heads = 32;
    s.num_attention_heads = 16;
    s.num_key_value_heads = 2;
    s.num_experts = 512;
    s.num_experts_per_tok = 10;
    s.moe_intermediate_size = 512;
    s.shared_expert_intermediate_size = 512;
    return s;
  }
  return absl::NotFoundError(
      absl::StrCat("unknown preset '", name,
                   "'; presets: ", absl::StrJoin(PresetNames(), ", ")));
}

std::string ConfigJson(const CheckpointSpec& s) {
  json text = {
      {"vocab_size", s.vocab_size},
      {"hidden_size", s.hidden_size},
      {"num_hidden_layers", s.num_layers},
      {"max_position_embeddings", s.max_position_embeddings},
      {"rms_norm_eps", s.rms_norm_eps},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"tie_word_embeddings", s.tie_word_embeddings},
      {"linear_num_key_heads", s.linear_num_key_heads},
      {"linear_num_value_heads", s.linear_num_value_heads},
      {"linear_key_head_dim", s.linear_key_head_dim},
      {"linear_value_head_dim", s.linear_value_head_dim},
      {"linear_conv_kernel_dim", s.linear_conv_kernel_dim},
      {"num_attention_heads", s.num_attention_heads},
      {"num_key_value_heads", s.num_key_value_heads},
      {"head_dim", s.head_dim},
  };
  json layer_types = json::array();
  for (int i = 0; i < s.num_layers; ++i) {
    layer_types.push_back(s.is_full_attention(i) ? "full_attention"
                                                 : "linear_attention");
  }
  text["layer_types"] = layer_types;
  json rope = {{"rope_type", "default"},
               {"rope_theta", s.rope_theta},
               {"partial_rotary_factor", s.partial_rotary_factor}};
  if (s.model_type != "qwen3_next" && !s.mrope_section.empty()) {
    rope["mrope_section"] = s.mrope_section;
    rope["mrope_interleaved"] = true;
  }
  text["rope_parameters"] = rope;
  if (s.eos_token_id >= 0) text["eos_token_id"] = s.eos_token_id;
  bool any_dense = false;
  for (int i = 0; i < s.num_layers; ++i) any_dense |= !s.is_moe_layer(i);
  if (any_dense || s.model_type == "qwen3_next") {
    text["intermediate_size"] = s.intermediate_size;
  }
  if (s.model_type == "qwen3_5_moe" ||
      (s.model_type == "qwen3_next" && s.num_experts > 0)) {
    text["num_experts"] = s.num_experts;
    text["num_experts_per_tok"] = s.num_experts_per_tok;
    text["moe_intermediate_size"] = s.moe_intermediate_size;
    text["shared_expert_intermediate_size"] = s.shared_expert_intermediate_size;
  }
  if (s.model_type == "qwen3_next") {
    text["model_type"] = "qwen3_next";
    text["architectures"] = {"Qwen3NextForCausalLM"};
    text["norm_topk_prob"] = s.norm_topk_prob;
    text["decoder_sparse_step"] = s.decoder_sparse_step;
    text["mlp_only_layers"] = s.mlp_only_layers;
    return text.dump(2);
  }
  const bool moe = s.model_type == "qwen3_5_moe";
  if (!s.nested) {
    text["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
    text["architectures"] = {moe ? "Qwen3_5MoeForCausalLM"
                                 : "Qwen3_5ForCausalLM"};
    return text.dump(2);
  }
  text["model_type"] = moe ? "qwen3_5_moe_text" : "qwen3_5_text";
  json root = {
      {"model_type", s.model_type},
      {"architectures",
       {moe ? "Qwen3_5MoeForConditionalGeneration"
            : "Qwen3_5ForConditionalGeneration"}},
      {"tie_word_embeddings", s.tie_word_embeddings},
      {"text_config", text},
      // The vision tower is not synthesised; its config keeps transformers
      // able to build the class.
      {"vision_config",
       {{"model_type", moe ? "qwen3_5_moe_vision" : "qwen3_5_vision"},
        {"depth", 1},
        {"hidden_size", 32},
        {"num_heads", 2},
        {"out_hidden_size", s.hidden_size}}},
  };
  return root.dump(2);
}

std::string GenerationConfigJson(const CheckpointSpec& s) {
  json gen = {{"_from_model_config", true}};
  if (s.eos_token_id >= 0) gen["eos_token_id"] = s.eos_token_id;
  return gen.dump(2);
}

}  // namespace rollout::model::tools
