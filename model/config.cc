#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "model/json_util.h"
#include "nlohmann/json.hpp"

namespace rollout::model {
namespace {

using nlohmann::json;

// Upper bounds that keep every derived size far from int overflow; real
// models are orders of magnitude below.
constexpr int64_t kMaxDim = 1 << 20;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxExperts = 4096;

absl::Status OutOfRange(absl::string_view where, absl::string_view key,
                        int64_t value, int64_t lo, int64_t hi) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": field '", key,
                                                 "' = ", value, " is outside [",
                                                 lo, ", ", hi, "]"));
}

// A required integer field within [lo, hi].
absl::StatusOr<int> GetDim(const json& obj, absl::string_view key,
                           absl::string_view where, int64_t lo = 1,
                           int64_t hi = kMaxDim) {
  ASSIGN_OR_RETURN(int64_t v, GetInt(obj, key, where));
  if (v < lo || v > hi) return OutOfRange(where, key, v, lo, hi);
  return static_cast<int>(v);
}

// An optional integer field within [lo, hi] with a default.
absl::StatusOr<int> GetDimOr(const json& obj, absl::string_view key,
                             absl::string_view where, int fallback,
                             int64_t lo = 1, int64_t hi = kMaxDim) {
  ASSIGN_OR_RETURN(std::optional<int64_t> v, GetOptionalInt(obj, key, where));
  if (!v.has_value()) return fallback;
  if (*v < lo || *v > hi) return OutOfRange(where, key, *v, lo, hi);
  return static_cast<int>(*v);
}

absl::StatusOr<ModelFamily> FamilyOf(const std::string& model_type) {
  if (model_type == "qwen3_next") return ModelFamily::kQwen3Next;
  if (model_type == "qwen3_5") return ModelFamily::kQwen3_5;
  if (model_type == "qwen3_5_moe") return ModelFamily::kQwen3_5Moe;
  return absl::UnimplementedError(
      absl::StrCat("config.json: unsupported model_type '", model_type,
                   "' (supported: qwen3_next, qwen3_5, qwen3_5_text, "
                   "qwen3_5_moe, qwen3_5_moe_text)"));
}

std::string NormaliseModelType(std::string type) {
  const std::string suffix = "_text";
  if (type.size() > suffix.size() &&
      type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0) {
    type.resize(type.size() - suffix.size());
  }
  return type;
}

absl::Status ParseLayerKinds(const json& text, absl::string_view where,
                             ModelConfig* c) {
  auto it = text.find("layer_types");
  if (it != text.end() && !it->is_null()) {
    if (!it->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": field 'layer_types' must be a list of strings"));
    }
    if (static_cast<int>(it->size()) != c->num_layers) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field 'layer_types' has ", it->size(),
                       " entries but num_hidden_layers is ", c->num_layers));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      // transformers remaps the legacy names "mamba" / "attention".
      std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "linear_attention" || s == "mamba") {
        c->layer_kinds.push_back(LayerKind::kLinearAttention);
      } else if (s == "full_attention" || s == "attention") {
        c->layer_kinds.push_back(LayerKind::kFullAttention);
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": field 'layer_types[", i, "]' = ", t.dump(),
                         " is not 'linear_attention' or 'full_attention'"));
      }
    }
    return absl::OkStatus();
  }
  // transformers default: full attention iff (i + 1) % interval == 0.
  ASSIGN_OR_RETURN(int interval, GetDimOr(text, "full_attention_interval",
                                          where, 4, 1, kMaxLayers));
  for (int i = 0; i < c->num_layers; ++i) {
    c->layer_kinds.push_back((i + 1) % interval == 0
                                 ? LayerKind::kFullAttention
                                 : LayerKind::kLinearAttention);
  }
  return absl::OkStatus();
}

absl::Status ParseRope(const json& text, absl::string_view where,
                       ModelConfig* c) {
  std::optional<double> theta, factor;
  std::string rope_type = "default";
  auto rp = text.find("rope_parameters");
  const json* params = nullptr;
  if (rp != text.end() && !rp->is_null()) {
    if (!rp->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field 'rope_parameters' must be an object"));
    }
    params = &*rp;
    // Some transformers configs key the parameters by layer type.
    auto per_type = rp->find("full_attention");
    if (per_type != rp->end() && per_type->is_object()) params = &*per_type;
  } else {
    // Older configs: rope_scaling may carry the mrope sections.
    auto rs = text.find("rope_scaling");
    if (rs != text.end() && !rs->is_null()) {
      if (!rs->is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": field 'rope_scaling' must be an object"));
      }
      params = &*rs;
    }
  }
  const std::string pwhere =
      params == nullptr
          ? std::string(where)
          : absl::StrCat(where, " ",
                         rp != text.end() && !rp->is_null() ? "rope_parameters"
                                                            : "rope_scaling");
  if (params != nullptr) {
    ASSIGN_OR_RETURN(theta, GetOptionalDouble(*params, "rope_theta", pwhere));
    ASSIGN_OR_RETURN(
        factor, GetOptionalDouble(*params, "partial_rotary_factor", pwhere));
    ASSIGN_OR_RETURN(std::optional<std::string> type,
                     GetOptionalString(*params, "rope_type", pwhere));
    if (!type.has_value()) {
      ASSIGN_OR_RETURN(type, GetOptionalString(*params, "type", pwhere));
    }
    if (type.has_value()) rope_type = *type;
    auto ms = params->find("mrope_section");
    if (ms != params->end() && !ms->is_null()) {
      if (!ms->is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(
            pwhere, ": field 'mrope_section' must be a list of integers"));
      }
      for (size_t i = 0; i < ms->size(); ++i) {
        const json& v = (*ms)[i];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
            v.get<int64_t>() > kMaxDim) {
          return absl::InvalidArgumentError(absl::StrCat(
              pwhere, ": field 'mrope_section[", i, "]' must be an integer"));
        }
        c->rope.mrope_section.push_back(static_cast<int>(v.get<int64_t>()));
      }
    }
    ASSIGN_OR_RETURN(std::optional<bool> interleaved,
                     GetOptionalBool(*params, "mrope_interleaved", pwhere));
    c->rope.mrope_interleaved = interleaved.value_or(false);
  }
  if (!theta.has_value()) {
    ASSIGN_OR_RETURN(theta, GetOptionalDouble(text, "rope_theta", where));
  }
  if (!factor.has_value()) {
    ASSIGN_OR_RETURN(factor,
                     GetOptionalDouble(text, "partial_rotary_factor", where));
  }
  if (rope_type != "default" && rope_type != "mrope") {
    return absl::UnimplementedError(
        absl::StrCat(pwhere, ": rope_type '", rope_type,
                     "' is not supported (only 'default')"));
  }
  if (!theta.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     ": missing required field 'rope_theta' (in "
                     "'rope_parameters' or at the top level)"));
  }
  if (!(*theta > 1.0) || !std::isfinite(*theta)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field 'rope_theta' = ", *theta,
                     " must be a finite number > 1"));
  }
  c->rope.theta = *theta;
  // transformers' default for these model classes.
  c->rope.partial_rotary_factor = factor.value_or(0.25);
  if (!(c->rope.partial_rotary_factor > 0.0 &&
        c->rope.partial_rotary_factor <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field 'partial_rotary_factor' = ",
                     c->rope.partial_rotary_factor, " must be in (0, 1]"));
  }
  // int() truncation, as transformers' compute_default_rope_parameters.
  c->rope.rotary_dim =
      static_cast<int>(c->attention.head_dim * c->rope.partial_rotary_factor);
  return absl::OkStatus();
}

absl::Status ParseMoe(const json& text, absl::string_view where,
                      ModelConfig* c) {
  ASSIGN_OR_RETURN(c->moe.num_experts,
                   GetDim(text, "num_experts", where, 1, kMaxExperts));
  ASSIGN_OR_RETURN(c->moe.top_k, GetDim(text, "num_experts_per_tok", where, 1,
                                        c->moe.num_experts));
  ASSIGN_OR_RETURN(c->moe.intermediate_size,
                   GetDim(text, "moe_intermediate_size", where));
  ASSIGN_OR_RETURN(c->moe.shared_intermediate_size,
                   GetDim(text, "shared_expert_intermediate_size", where));
  return absl::OkStatus();
}

absl::Status ParseFfnKinds(const json& text, absl::string_view where,
                           ModelConfig* c) {
  c->ffn_kinds.assign(c->num_layers, FfnKind::kDense);
  if (c->family == ModelFamily::kQwen3_5Moe) {
    RETURN_IF_ERROR(ParseMoe(text, where, c));
    // Qwen3.5-MoE's router always renormalises the top-k probabilities.
    c->moe.norm_topk_prob = true;
    c->ffn_kinds.assign(c->num_layers, FfnKind::kMoe);
  } else if (c->family == ModelFamily::kQwen3Next) {
    ASSIGN_OR_RETURN(std::optional<int64_t> experts,
                     GetOptionalInt(text, "num_experts", where));
    if (experts.value_or(0) > 0) {
      RETURN_IF_ERROR(ParseMoe(text, where, c));
      ASSIGN_OR_RETURN(std::optional<bool> norm,
                       GetOptionalBool(text, "norm_topk_prob", where));
      c->moe.norm_topk_prob = norm.value_or(true);
      ASSIGN_OR_RETURN(int step, GetDimOr(text, "decoder_sparse_step", where, 1,
                                          1, kMaxLayers));
      std::set<int> mlp_only;
      auto it = text.find("mlp_only_layers");
      if (it != text.end() && !it->is_null()) {
        if (!it->is_array()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": field 'mlp_only_layers' must be a list of integers"));
        }
        for (size_t i = 0; i < it->size(); ++i) {
          const json& v = (*it)[i];
          if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
              v.get<int64_t>() >= c->num_layers) {
            return absl::InvalidArgumentError(absl::StrCat(
                where, ": field 'mlp_only_layers[", i, "]' = ", v.dump(),
                " is not a layer index in [0, ", c->num_layers, ")"));
          }
          mlp_only.insert(static_cast<int>(v.get<int64_t>()));
        }
      }
      for (int i = 0; i < c->num_layers; ++i) {
        if (mlp_only.count(i) == 0 && (i + 1) % step == 0) {
          c->ffn_kinds[i] = FfnKind::kMoe;
        }
      }
    }
  }
  const bool any_dense =
      std::count(c->ffn_kinds.begin(), c->ffn_kinds.end(), FfnKind::kDense) > 0;
  if (any_dense) {
    ASSIGN_OR_RETURN(c->intermediate_size,
                     GetDim(text, "intermediate_size", where));
  }
  if (std::count(c->ffn_kinds.begin(), c->ffn_kinds.end(), FfnKind::kMoe) ==
      0) {
    c->moe = MoeConfig();
  }
  return absl::OkStatus();
}

absl::Status AppendEos(const json& obj, absl::string_view where,
                       std::vector<int32_t>* eos) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ids,
                   GetOptionalIntOrIntList(obj, "eos_token_id", where));
  if (!ids.has_value()) return absl::OkStatus();
  for (int64_t id : *ids) {
    if (id < 0 || id >= kMaxVocab) {
      return OutOfRange(where, "eos_token_id", id, 0, kMaxVocab - 1);
    }
    if (std::find(eos->begin(), eos->end(), id) == eos->end()) {
      eos->push_back(static_cast<int32_t>(id));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int ModelConfig::num_gdn_layers() const {
  return static_cast<int>(std::count(layer_kinds.begin(), layer_kinds.end(),
                                     LayerKind::kLinearAttention));
}

int ModelConfig::num_attention_layers() const {
  return static_cast<int>(std::count(layer_kinds.begin(), layer_kinds.end(),
                                     LayerKind::kFullAttention));
}

int ModelConfig::KindIndex(int layer) const {
  int index = 0;
  for (int i = 0; i < layer; ++i) {
    if (layer_kinds[i] == layer_kinds[layer]) ++index;
  }
  return index;
}

absl::Status ModelConfig::Validate() const {
  auto bad = [](auto... parts) {
    return absl::InvalidArgumentError(absl::StrCat("config: ", parts...));
  };
  if (vocab_size < 1 || vocab_size > kMaxVocab) {
    return bad("vocab_size = ", vocab_size, " out of range");
  }
  if (hidden_size < 1 || hidden_size > kMaxDim) {
    return bad("hidden_size = ", hidden_size, " out of range");
  }
  if (num_layers < 1 || num_layers > kMaxLayers) {
    return bad("num_hidden_layers = ", num_layers, " out of range");
  }
  if (static_cast<int>(layer_kinds.size()) != num_layers ||
      static_cast<int>(ffn_kinds.size()) != num_layers) {
    return bad("layer_types has ", layer_kinds.size(), " entries for ",
               num_layers, " layers");
  }
  if (!(rms_norm_eps > 0.0) || !(rms_norm_eps < 1.0)) {
    return bad("rms_norm_eps = ", rms_norm_eps, " must be in (0, 1)");
  }
  if (num_gdn_layers() > 0) {
    const GdnConfig& g = gdn;
    if (g.num_k_heads < 1 || g.num_v_heads < 1 || g.head_k_dim < 1 ||
        g.head_v_dim < 1) {
      return bad("linear attention head counts and dims must be >= 1");
    }
    if (g.num_v_heads % g.num_k_heads != 0) {
      return bad("linear_num_value_heads (", g.num_v_heads,
                 ") must be a multiple of linear_num_key_heads (",
                 g.num_k_heads, ")");
    }
    if (g.conv_kernel < 2 || g.conv_kernel > 16) {
      return bad("linear_conv_kernel_dim = ", g.conv_kernel,
                 " must be in [2, 16]");
    }
    if (static_cast<int64_t>(g.num_v_heads) * g.head_v_dim > kMaxDim ||
        static_cast<int64_t>(g.num_k_heads) * g.head_k_dim > kMaxDim) {
      return bad("linear attention heads x dims too large");
    }
  }
  if (num_attention_layers() > 0) {
    const AttentionConfig& a = attention;
    if (a.num_heads < 1 || a.num_kv_heads < 1 || a.head_dim < 1) {
      return bad("attention heads and head_dim must be >= 1");
    }
    if (a.num_heads % a.num_kv_heads != 0) {
      return bad("num_attention_heads (", a.num_heads,
                 ") must be a multiple of num_key_value_heads (",
                 a.num_kv_heads, ")");
    }
    if (static_cast<int64_t>(a.num_heads) * a.head_dim * 2 > kMaxDim) {
      return bad("attention heads x head_dim too large");
    }
    if (rope.rotary_dim < 2 || rope.rotary_dim % 2 != 0 ||
        rope.rotary_dim > a.head_dim) {
      return bad("rotary dim = int(head_dim * partial_rotary_factor) = ",
                 rope.rotary_dim,
                 " must be even and in [2, head_dim = ", a.head_dim, "]");
    }
  }
  const bool any_moe =
      std::count(ffn_kinds.begin(), ffn_kinds.end(), FfnKind::kMoe) > 0;
  const bool any_dense =
      std::count(ffn_kinds.begin(), ffn_kinds.end(), FfnKind::kDense) > 0;
  if (any_dense && (intermediate_size < 1 || intermediate_size > kMaxDim)) {
    return bad("intermediate_size = ", intermediate_size, " out of range");
  }
  if (any_moe) {
    if (moe.num_experts < 1 || moe.top_k < 1 || moe.top_k > moe.num_experts ||
        moe.intermediate_size < 1 || moe.shared_intermediate_size < 1) {
      return bad(
          "MoE sizes invalid: num_experts = ", moe.num_experts,
          ", num_experts_per_tok = ", moe.top_k,
          ", moe_intermediate_size = ", moe.intermediate_size,
          ", shared_expert_intermediate_size = ", moe.shared_intermediate_size);
    }
  }
  for (int32_t id : eos_token_ids) {
    if (id < 0 || id >= vocab_size) {
      return bad("eos_token_id ", id, " outside the vocabulary [0, ",
                 vocab_size, ")");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSameArchitecture(const ModelConfig& a, const ModelConfig& b) {
  auto differ = [](absl::string_view field, const auto& x, const auto& y) {
    return absl::FailedPreconditionError(
        absl::StrCat("new checkpoint has a different architecture: ", field,
                     " is ", y, ", serving model has ", x));
  };
  if (a.model_type != b.model_type) {
    return differ("model_type", a.model_type, b.model_type);
  }
  if (a.vocab_size != b.vocab_size) {
    return differ("vocab_size", a.vocab_size, b.vocab_size);
  }
  if (a.hidden_size != b.hidden_size) {
    return differ("hidden_size", a.hidden_size, b.hidden_size);
  }
  if (a.num_layers != b.num_layers) {
    return differ("num_hidden_layers", a.num_layers, b.num_layers);
  }
  if (a.intermediate_size != b.intermediate_size) {
    return differ("intermediate_size", a.intermediate_size,
                  b.intermediate_size);
  }
  if (a.rms_norm_eps != b.rms_norm_eps) {
    return differ("rms_norm_eps", a.rms_norm_eps, b.rms_norm_eps);
  }
  if (a.tie_word_embeddings != b.tie_word_embeddings) {
    return differ("tie_word_embeddings", a.tie_word_embeddings,
                  b.tie_word_embeddings);
  }
  for (int i = 0; i < a.num_layers; ++i) {
    if (a.layer_kinds[i] != b.layer_kinds[i]) {
      return differ(absl::StrCat("layer_types[", i, "]"),
                    static_cast<int>(a.layer_kinds[i]),
                    static_cast<int>(b.layer_kinds[i]));
    }
    if (a.ffn_kinds[i] != b.ffn_kinds[i]) {
      return differ(absl::StrCat("MoE-ness of layer ", i),
                    static_cast<int>(a.ffn_kinds[i]),
                    static_cast<int>(b.ffn_kinds[i]));
    }
  }
  const GdnConfig &ga = a.gdn, &gb = b.gdn;
  if (ga.num_k_heads != gb.num_k_heads || ga.num_v_heads != gb.num_v_heads ||
      ga.head_k_dim != gb.head_k_dim || ga.head_v_dim != gb.head_v_dim ||
      ga.conv_kernel != gb.conv_kernel) {
    return differ(
        "linear attention heads/dims",
        absl::StrCat(ga.num_k_heads, "/", ga.num_v_heads, "/", ga.head_k_dim,
                     "/", ga.head_v_dim, "/", ga.conv_kernel),
        absl::StrCat(gb.num_k_heads, "/", gb.num_v_heads, "/", gb.head_k_dim,
                     "/", gb.head_v_dim, "/", gb.conv_kernel));
  }
  const AttentionConfig &aa = a.attention, &ab = b.attention;
  if (aa.num_heads != ab.num_heads || aa.num_kv_heads != ab.num_kv_heads ||
      aa.head_dim != ab.head_dim) {
    return differ(
        "attention heads/kv heads/head_dim",
        absl::StrCat(aa.num_heads, "/", aa.num_kv_heads, "/", aa.head_dim),
        absl::StrCat(ab.num_heads, "/", ab.num_kv_heads, "/", ab.head_dim));
  }
  if (a.rope.theta != b.rope.theta || a.rope.rotary_dim != b.rope.rotary_dim) {
    return differ("rope theta/rotary dim",
                  absl::StrCat(a.rope.theta, "/", a.rope.rotary_dim),
                  absl::StrCat(b.rope.theta, "/", b.rope.rotary_dim));
  }
  const MoeConfig &ma = a.moe, &mb = b.moe;
  if (ma.num_experts != mb.num_experts || ma.top_k != mb.top_k ||
      ma.intermediate_size != mb.intermediate_size ||
      ma.shared_intermediate_size != mb.shared_intermediate_size ||
      ma.norm_topk_prob != mb.norm_topk_prob) {
    return differ(
        "MoE experts/top-k/sizes/normalisation",
        absl::StrCat(ma.num_experts, "/", ma.top_k, "/", ma.intermediate_size,
                     "/", ma.shared_intermediate_size, "/", ma.norm_topk_prob),
        absl::StrCat(mb.num_experts, "/", mb.top_k, "/", mb.intermediate_size,
                     "/", mb.shared_intermediate_size, "/", mb.norm_topk_prob));
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> ParseModelConfig(
    absl::string_view config_json, absl::string_view generation_config_json) {
  ASSIGN_OR_RETURN(json root, ParseJson(config_json, "config.json"));
  if (!root.is_object()) {
    return absl::InvalidArgumentError("config.json: not a JSON object");
  }
  ModelConfig c;
  const json* text = &root;
  std::string where = "config.json";
  auto tc = root.find("text_config");
  if (tc != root.end() && !tc->is_null()) {
    if (!tc->is_object()) {
      return absl::InvalidArgumentError(
          "config.json: field 'text_config' must be an object");
    }
    text = &*tc;
    where = "config.json text_config";
    c.nested_text_config = true;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> type,
                   GetOptionalString(root, "model_type", "config.json"));
  if (!type.has_value() && c.nested_text_config) {
    ASSIGN_OR_RETURN(type, GetOptionalString(*text, "model_type", where));
  }
  if (!type.has_value()) {
    return absl::InvalidArgumentError(
        "config.json: missing required field 'model_type'");
  }
  c.model_type = NormaliseModelType(*type);
  ASSIGN_OR_RETURN(c.family, FamilyOf(c.model_type));

  ASSIGN_OR_RETURN(std::optional<std::string> act,
                   GetOptionalString(*text, "hidden_act", where));
  if (act.has_value() && *act != "silu") {
    return absl::UnimplementedError(absl::StrCat(
        where, ": hidden_act '", *act, "' is not supported (only 'silu')"));
  }
  ASSIGN_OR_RETURN(std::optional<bool> bias,
                   GetOptionalBool(*text, "attention_bias", where));
  if (bias.value_or(false)) {
    return absl::UnimplementedError(
        absl::StrCat(where, ": attention_bias = true is not supported"));
  }

  ASSIGN_OR_RETURN(c.vocab_size,
                   GetDim(*text, "vocab_size", where, 1, kMaxVocab));
  ASSIGN_OR_RETURN(c.hidden_size, GetDim(*text, "hidden_size", where));
  ASSIGN_OR_RETURN(c.num_layers,
                   GetDim(*text, "num_hidden_layers", where, 1, kMaxLayers));
  ASSIGN_OR_RETURN(c.max_position_embeddings,
                   GetDimOr(*text, "max_position_embeddings", where, 32768, 1,
                            int64_t{1} << 30));
  ASSIGN_OR_RETURN(std::optional<double> eps,
                   GetOptionalDouble(*text, "rms_norm_eps", where));
  c.rms_norm_eps = eps.value_or(1e-6);
  // Nested checkpoints: the top-level flag is the model class's own.
  ASSIGN_OR_RETURN(std::optional<bool> tie,
                   GetOptionalBool(root, "tie_word_embeddings", "config.json"));
  if (!tie.has_value() && c.nested_text_config) {
    ASSIGN_OR_RETURN(tie, GetOptionalBool(*text, "tie_word_embeddings", where));
  }
  c.tie_word_embeddings = tie.value_or(false);

  RETURN_IF_ERROR(ParseLayerKinds(*text, where, &c));
  if (c.num_gdn_layers() > 0) {
    ASSIGN_OR_RETURN(c.gdn.num_k_heads,
                     GetDim(*text, "linear_num_key_heads", where));
    ASSIGN_OR_RETURN(c.gdn.num_v_heads,
                     GetDim(*text, "linear_num_value_heads", where));
    ASSIGN_OR_RETURN(c.gdn.head_k_dim,
                     GetDim(*text, "linear_key_head_dim", where));
    ASSIGN_OR_RETURN(c.gdn.head_v_dim,
                     GetDim(*text, "linear_value_head_dim", where));
    ASSIGN_OR_RETURN(c.gdn.conv_kernel,
                     GetDimOr(*text, "linear_conv_kernel_dim", where, 4));
  }
  if (c.num_attention_layers() > 0) {
    ASSIGN_OR_RETURN(c.attention.num_heads,
                     GetDim(*text, "num_attention_heads", where));
    ASSIGN_OR_RETURN(c.attention.num_kv_heads,
                     GetDim(*text, "num_key_value_heads", where));
    ASSIGN_OR_RETURN(c.attention.head_dim, GetDim(*text, "head_dim", where));
    RETURN_IF_ERROR(ParseRope(*text, where, &c));
  }
  RETURN_IF_ERROR(ParseFfnKinds(*text, where, &c));

  if (!generation_config_json.empty()) {
    ASSIGN_OR_RETURN(
        json gen, ParseJson(generation_config_json, "generation_config.json"));
    if (!gen.is_object()) {
      return absl::InvalidArgumentError(
          "generation_config.json: not a JSON object");
    }
    RETURN_IF_ERROR(AppendEos(gen, "generation_config.json", &c.eos_token_ids));
  }
  RETURN_IF_ERROR(AppendEos(*text, where, &c.eos_token_ids));
  if (c.nested_text_config) {
    RETURN_IF_ERROR(AppendEos(root, "config.json", &c.eos_token_ids));
  }
  RETURN_IF_ERROR(c.Validate());
  return c;
}

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& checkpoint_dir) {
  ASSIGN_OR_RETURN(std::string config,
                   ReadTextFile(checkpoint_dir + "/config.json"));
  std::string generation;
  absl::StatusOr<std::string> gen =
      ReadTextFile(checkpoint_dir + "/generation_config.json");
  if (gen.ok()) {
    generation = *std::move(gen);
  } else if (!absl::IsNotFound(gen.status())) {
    return gen.status();
  }
  absl::StatusOr<ModelConfig> parsed = ParseModelConfig(config, generation);
  if (!parsed.ok()) {
    return absl::Status(
        parsed.status().code(),
        absl::StrCat(checkpoint_dir, ": ", parsed.status().message()));
  }
  return parsed;
}

}  // namespace rollout::model
