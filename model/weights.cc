#include "model/weights.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "model/qwen3_next_layout.h"
#include "model/weight_names.h"

namespace rollout::model {
namespace {

using Shape = std::vector<int64_t>;

std::string ShapeStr(const Shape& s) {
  return absl::StrCat("[", absl::StrJoin(s, ", "), "]");
}

// Reads canonical-named tensors from a checkpoint, checking shapes and
// remembering which tensors were used.
class WeightReader {
 public:
  WeightReader(const Checkpoint& ckpt, NameMap names)
      : ckpt_(ckpt), names_(std::move(names)) {}

  bool Has(const std::string& name) const {
    return names_.to_checkpoint.count(name) > 0;
  }

  // The checkpoint entry of a canonical name, or an error naming it.
  absl::StatusOr<const Checkpoint::Entry*> Entry(const std::string& name) {
    auto it = names_.to_checkpoint.find(name);
    if (it == names_.to_checkpoint.end()) {
      return absl::NotFoundError(
          absl::StrCat(ckpt_.dir(), ": missing tensor '", name,
                       "' (or its model.language_model. form)"));
    }
    used_.insert(name);
    return ckpt_.Find(it->second);
  }

  // Reads `name` of shape `shape` (an alternative accepted shape may be given
  // with the same element count, e.g. conv1d [C, 1, Kc] vs [C, Kc]) into dst.
  absl::Status Read(const std::string& name, const Shape& shape, float* dst,
                    const Shape& alt_shape = {}) {
    ASSIGN_OR_RETURN(const Checkpoint::Entry* e, Entry(name));
    if (e->info->shape != shape &&
        (alt_shape.empty() || e->info->shape != alt_shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", e->info->name, "' has shape ", e->info->ShapeString(),
          ", the config needs ", ShapeStr(shape)));
    }
    return Convert(*e, dst);
  }

  // Whole tensor as floats (shape checked by the caller via Entry()).
  absl::Status Convert(const Checkpoint::Entry& e, float* dst) {
    const int64_t n = e.info->numel();
    absl::Status s = ToFloat32(e.info->dtype, e.file->Bytes(*e.info),
                               absl::MakeSpan(dst, static_cast<size_t>(n)));
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", e.info->name, "': ", s.message()));
    }
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(dst[i])) {
        return absl::DataLossError(
            absl::StrCat("tensor '", e.info->name,
                         "' holds a non-finite value at element ", i));
      }
    }
    return absl::OkStatus();
  }

  void MarkUsed(const std::string& name) { used_.insert(name); }

  // Every language-model tensor must have been used; unknown names fail.
  absl::Status CheckAllUsed() const {
    std::vector<std::string> unused;
    for (const auto& [canonical, original] : names_.to_checkpoint) {
      if (used_.count(canonical) == 0) unused.push_back(original);
    }
    for (const std::string& n : names_.unknown) unused.push_back(n);
    if (unused.empty()) return absl::OkStatus();
    if (unused.size() > 8) {
      unused.resize(8);
      unused.push_back("...");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(ckpt_.dir(),
                     ": tensors not used by this model config (wrong "
                     "architecture or config?): ",
                     absl::StrJoin(unused, ", ")));
  }

 private:
  const Checkpoint& ckpt_;
  NameMap names_;
  std::set<std::string> used_;
};

// Reads a [rows, cols] tensor and writes its rows permuted: dst row i =
// src row src_rows[i].
absl::Status ReadRowsPermuted(WeightReader& r, const std::string& name,
                              const Shape& shape,
                              const std::vector<int>& src_rows, float* dst) {
  std::vector<float> tmp(static_cast<size_t>(shape[0] * shape[1]));
  RETURN_IF_ERROR(r.Read(name, shape, tmp.data()));
  const size_t cols = static_cast<size_t>(shape[1]);
  for (size_t i = 0; i < src_rows.size(); ++i) {
    std::copy_n(tmp.data() + src_rows[i] * cols, cols, dst + i * cols);
  }
  return absl::OkStatus();
}

absl::Status LoadGdn(const ModelConfig& c, const std::string& p,
                     WeightReader& r, GdnWeights* w) {
  const GdnConfig& g = c.gdn;
  const int64_t D = c.hidden_size, C = g.conv_dim(), VD = g.value_dim(),
                HV = g.num_v_heads;
  w->in_proj.resize(static_cast<size_t>((C + VD + 2 * HV) * D));
  float* qkv = w->in_proj.data();
  float* z = qkv + C * D;
  float* b = z + VD * D;
  float* a = b + HV * D;
  if (r.Has(p + "in_proj_qkvz.weight")) {
    // Qwen3-Next: fused and grouped per key head.
    RETURN_IF_ERROR(ReadRowsPermuted(r, p + "in_proj_qkvz.weight", {C + VD, D},
                                     QkvzSourceRows(g), qkv));
    RETURN_IF_ERROR(ReadRowsPermuted(r, p + "in_proj_ba.weight", {2 * HV, D},
                                     BaSourceRows(g), b));
  } else {
    RETURN_IF_ERROR(r.Read(p + "in_proj_qkv.weight", {C, D}, qkv));
    RETURN_IF_ERROR(r.Read(p + "in_proj_z.weight", {VD, D}, z));
    RETURN_IF_ERROR(r.Read(p + "in_proj_b.weight", {HV, D}, b));
    RETURN_IF_ERROR(r.Read(p + "in_proj_a.weight", {HV, D}, a));
  }
  w->conv.resize(static_cast<size_t>(C * g.conv_kernel));
  RETURN_IF_ERROR(r.Read(p + "conv1d.weight", {C, 1, g.conv_kernel},
                         w->conv.data(), {C, g.conv_kernel}));
  w->A_log.resize(HV);
  w->dt_bias.resize(HV);
  w->norm.resize(g.head_v_dim);
  w->out_proj.resize(static_cast<size_t>(D * VD));
  RETURN_IF_ERROR(r.Read(p + "A_log", {HV}, w->A_log.data()));
  RETURN_IF_ERROR(r.Read(p + "dt_bias", {HV}, w->dt_bias.data()));
  RETURN_IF_ERROR(r.Read(p + "norm.weight", {g.head_v_dim}, w->norm.data()));
  RETURN_IF_ERROR(r.Read(p + "out_proj.weight", {D, VD}, w->out_proj.data()));
  return absl::OkStatus();
}

absl::Status LoadAttention(const ModelConfig& c, const std::string& p,
                           WeightReader& r, AttentionWeights* w) {
  const AttentionConfig& a = c.attention;
  const int64_t D = c.hidden_size, hd = a.head_dim;
  const int64_t q_rows = 2 * a.num_heads * hd, kv_rows = a.num_kv_heads * hd;
  w->qkv_proj.resize(static_cast<size_t>((q_rows + 2 * kv_rows) * D));
  float* q = w->qkv_proj.data();
  RETURN_IF_ERROR(r.Read(p + "q_proj.weight", {q_rows, D}, q));
  RETURN_IF_ERROR(r.Read(p + "k_proj.weight", {kv_rows, D}, q + q_rows * D));
  RETURN_IF_ERROR(
      r.Read(p + "v_proj.weight", {kv_rows, D}, q + (q_rows + kv_rows) * D));
  w->q_norm.resize(hd);
  w->k_norm.resize(hd);
  w->o_proj.resize(static_cast<size_t>(D * a.num_heads * hd));
  RETURN_IF_ERROR(r.Read(p + "q_norm.weight", {hd}, w->q_norm.data()));
  RETURN_IF_ERROR(r.Read(p + "k_norm.weight", {hd}, w->k_norm.data()));
  RETURN_IF_ERROR(
      r.Read(p + "o_proj.weight", {D, a.num_heads * hd}, w->o_proj.data()));
  return absl::OkStatus();
}

// gate_proj / up_proj / down_proj under prefix p (dense MLP, shared expert,
// per-expert tensors).
absl::Status LoadMlp(int64_t D, int64_t I, const std::string& p,
                     WeightReader& r, MlpWeights* w) {
  w->intermediate = static_cast<int>(I);
  w->gate_up.resize(static_cast<size_t>(2 * I * D));
  w->down.resize(static_cast<size_t>(D * I));
  RETURN_IF_ERROR(r.Read(p + "gate_proj.weight", {I, D}, w->gate_up.data()));
  RETURN_IF_ERROR(
      r.Read(p + "up_proj.weight", {I, D}, w->gate_up.data() + I * D));
  RETURN_IF_ERROR(r.Read(p + "down_proj.weight", {D, I}, w->down.data()));
  return absl::OkStatus();
}

// Fused experts: gate_up_proj [E, 2I, D] (gate half first) and down_proj
// [E, D, I] as transformers 5 keeps them; the transposed forms [E, D, 2I] /
// [E, I, D] of some exports are accepted when unambiguous.
absl::Status LoadFusedExperts(int64_t D, int64_t I, int64_t E,
                              const std::string& p, WeightReader& r,
                              std::vector<MlpWeights>* experts) {
  ASSIGN_OR_RETURN(const Checkpoint::Entry* gu, r.Entry(p + "gate_up_proj"));
  ASSIGN_OR_RETURN(const Checkpoint::Entry* dn, r.Entry(p + "down_proj"));
  const Shape gu_shape = gu->info->shape, dn_shape = dn->info->shape;
  const bool gu_direct = gu_shape == Shape{E, 2 * I, D};
  const bool gu_transposed = !gu_direct && gu_shape == Shape{E, D, 2 * I};
  if (!gu_direct && !gu_transposed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", gu->info->name, "' has shape ", gu->info->ShapeString(),
        ", the config needs ", ShapeStr({E, 2 * I, D})));
  }
  const bool dn_direct = dn_shape == Shape{E, D, I};
  const bool dn_transposed = !dn_direct && dn_shape == Shape{E, I, D};
  if (!dn_direct && !dn_transposed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", dn->info->name, "' has shape ", dn->info->ShapeString(),
        ", the config needs ", ShapeStr({E, D, I})));
  }
  std::vector<float> gu_all(static_cast<size_t>(E * 2 * I * D));
  std::vector<float> dn_all(static_cast<size_t>(E * D * I));
  RETURN_IF_ERROR(r.Convert(*gu, gu_all.data()));
  RETURN_IF_ERROR(r.Convert(*dn, dn_all.data()));
  experts->resize(E);
  for (int64_t e = 0; e < E; ++e) {
    MlpWeights& w = (*experts)[e];
    w.intermediate = static_cast<int>(I);
    w.gate_up.resize(static_cast<size_t>(2 * I * D));
    w.down.resize(static_cast<size_t>(D * I));
    const float* g = gu_all.data() + e * 2 * I * D;
    const float* d = dn_all.data() + e * D * I;
    for (int64_t i = 0; i < 2 * I; ++i) {
      for (int64_t j = 0; j < D; ++j) {
        w.gate_up[i * D + j] = gu_direct ? g[i * D + j] : g[j * 2 * I + i];
      }
    }
    for (int64_t i = 0; i < D; ++i) {
      for (int64_t j = 0; j < I; ++j) {
        w.down[i * I + j] = dn_direct ? d[i * I + j] : d[j * D + i];
      }
    }
  }
  return absl::OkStatus();
}

absl::Status LoadMoe(const ModelConfig& c, const std::string& p,
                     WeightReader& r, MoeWeights* w) {
  const int64_t D = c.hidden_size, E = c.moe.num_experts,
                I = c.moe.intermediate_size;
  w->router.resize(static_cast<size_t>(E * D));
  RETURN_IF_ERROR(r.Read(p + "gate.weight", {E, D}, w->router.data()));
  if (r.Has(p + "experts.gate_up_proj")) {
    RETURN_IF_ERROR(LoadFusedExperts(D, I, E, p + "experts.", r, &w->experts));
  } else {
    w->experts.resize(E);
    for (int64_t e = 0; e < E; ++e) {
      RETURN_IF_ERROR(LoadMlp(D, I, absl::StrCat(p, "experts.", e, "."), r,
                              &w->experts[e]));
    }
  }
  RETURN_IF_ERROR(LoadMlp(D, c.moe.shared_intermediate_size,
                          p + "shared_expert.", r, &w->shared));
  w->shared_gate.resize(D);
  RETURN_IF_ERROR(
      r.Read(p + "shared_expert_gate.weight", {1, D}, w->shared_gate.data()));
  return absl::OkStatus();
}

}  // namespace

int64_t ModelWeights::bytes() const {
  int64_t n = embed.size() + final_norm.size() + lm_head.size();
  auto mlp = [](const MlpWeights& m) {
    return static_cast<int64_t>(m.gate_up.size() + m.down.size());
  };
  for (const LayerWeights& l : layers) {
    n += l.input_norm.size() + l.post_norm.size();
    n += l.gdn.in_proj.size() + l.gdn.conv.size() + l.gdn.A_log.size() +
         l.gdn.dt_bias.size() + l.gdn.norm.size() + l.gdn.out_proj.size();
    n += l.attention.qkv_proj.size() + l.attention.q_norm.size() +
         l.attention.k_norm.size() + l.attention.o_proj.size();
    n += mlp(l.mlp) + mlp(l.moe.shared) + l.moe.router.size() +
         l.moe.shared_gate.size();
    for (const MlpWeights& e : l.moe.experts) n += mlp(e);
  }
  return n * static_cast<int64_t>(sizeof(float));
}

absl::StatusOr<std::unique_ptr<ModelWeights>> LoadModelWeights(
    const ModelConfig& c, const Checkpoint& checkpoint) {
  RETURN_IF_ERROR(c.Validate());
  std::vector<std::string> names;
  for (const auto& [name, entry] : checkpoint.tensors()) names.push_back(name);
  ASSIGN_OR_RETURN(NameMap map, BuildNameMap(names));
  WeightReader r(checkpoint, std::move(map));

  auto w = std::make_unique<ModelWeights>();
  const int64_t D = c.hidden_size, V = c.vocab_size;
  w->embed.resize(static_cast<size_t>(V * D));
  RETURN_IF_ERROR(r.Read("model.embed_tokens.weight", {V, D}, w->embed.data()));
  w->final_norm.resize(D);
  RETURN_IF_ERROR(r.Read("model.norm.weight", {D}, w->final_norm.data()));
  if (c.tie_word_embeddings) {
    // transformers ties lm_head to the embedding; a stored copy is unused.
    r.MarkUsed("lm_head.weight");
  } else {
    w->lm_head.resize(static_cast<size_t>(V * D));
    RETURN_IF_ERROR(r.Read("lm_head.weight", {V, D}, w->lm_head.data()));
  }
  w->layers.resize(c.num_layers);
  for (int i = 0; i < c.num_layers; ++i) {
    LayerWeights& l = w->layers[i];
    const std::string p = absl::StrCat("model.layers.", i, ".");
    l.kind = c.layer_kinds[i];
    l.ffn = c.ffn_kinds[i];
    l.input_norm.resize(D);
    l.post_norm.resize(D);
    RETURN_IF_ERROR(
        r.Read(p + "input_layernorm.weight", {D}, l.input_norm.data()));
    RETURN_IF_ERROR(
        r.Read(p + "post_attention_layernorm.weight", {D}, l.post_norm.data()));
    if (l.kind == LayerKind::kLinearAttention) {
      RETURN_IF_ERROR(LoadGdn(c, p + "linear_attn.", r, &l.gdn));
    } else {
      RETURN_IF_ERROR(LoadAttention(c, p + "self_attn.", r, &l.attention));
    }
    if (l.ffn == FfnKind::kDense) {
      RETURN_IF_ERROR(LoadMlp(D, c.intermediate_size, p + "mlp.", r, &l.mlp));
    } else {
      RETURN_IF_ERROR(LoadMoe(c, p + "mlp.", r, &l.moe));
    }
  }
  RETURN_IF_ERROR(r.CheckAllUsed());
  return w;
}

}  // namespace rollout::model
