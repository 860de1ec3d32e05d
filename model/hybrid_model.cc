#include "model/hybrid_model.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/attention_mixer.h"
#include "model/gdn_mixer.h"
#include "model/ops/linear.h"
#include "model/ops/mlp.h"
#include "model/ops/norm.h"

namespace rollout::model {
namespace {

ops::MlpView View(const MlpWeights& m) {
  return {m.gate_up.data(), m.down.data(), m.intermediate};
}

}  // namespace

HybridModel::HybridModel(ModelConfig config,
                         std::shared_ptr<const ModelWeights> weights,
                         ops::ThreadPool* pool)
    : config_(std::move(config)), weights_(std::move(weights)), pool_(pool) {
  if (config_.num_attention_layers() > 0) {
    rope_ = std::make_unique<ops::Rope>(config_.attention.head_dim,
                                        config_.rope.rotary_dim,
                                        config_.rope.theta);
  }
  moe_.resize(config_.num_layers);
  for (int i = 0; i < config_.num_layers; ++i) {
    const LayerWeights& l = weights_->layers[i];
    if (l.ffn != FfnKind::kMoe) continue;
    ops::MoeView& v = moe_[i];
    v.router = l.moe.router.data();
    for (const MlpWeights& e : l.moe.experts) v.experts.push_back(View(e));
    v.shared = View(l.moe.shared);
    v.shared_gate = l.moe.shared_gate.data();
    v.top_k = config_.moe.top_k;
    v.norm_topk_prob = config_.moe.norm_topk_prob;
  }
}

absl::StatusOr<bool> HybridModel::Forward(absl::Span<const int32_t> tokens,
                                          int start_pos, SequenceState& state,
                                          int first_logit,
                                          float* logits) const {
  const ModelConfig& c = config_;
  const int T = static_cast<int>(tokens.size());
  const int D = c.hidden_size;
  if (T < 1 || first_logit < 0 || first_logit > T || start_pos < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Forward: ", T, " tokens, first_logit ", first_logit,
                     ", start_pos ", start_pos));
  }
  if (state.replay.ring_length > 0 && T != 1) {
    return absl::InvalidArgumentError(
        "Forward: a ReplaySSM ring row must feed exactly one token");
  }
  if (static_cast<int>(state.gdn.size()) != c.num_gdn_layers() ||
      static_cast<int>(state.kv.size()) != c.num_attention_layers()) {
    return absl::InvalidArgumentError("Forward: state does not fit the model");
  }
  for (int t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", tokens[t], " at index ", t,
                       " outside the vocabulary [0, ", c.vocab_size, ")"));
    }
  }
  const ModelWeights& w = *weights_;
  const float eps = static_cast<float>(c.rms_norm_eps);
  std::vector<float> h(static_cast<size_t>(T) * D);  // [T, D] residual stream
  for (int t = 0; t < T; ++t) {
    std::copy_n(w.embed.data() + static_cast<size_t>(tokens[t]) * D, D,
                h.data() + static_cast<size_t>(t) * D);
  }
  std::vector<float> xn(h.size()), mix(h.size());  // [T, D] each
  bool flushed = false;
  int gdn_index = 0, attn_index = 0;
  for (int i = 0; i < c.num_layers; ++i) {
    const LayerWeights& l = w.layers[i];
    ops::RmsNormZeroCentered(h.data(), l.input_norm.data(), T, D, eps,
                             xn.data());
    if (l.kind == LayerKind::kLinearAttention) {
      flushed |= GdnMixer(c, l.gdn, xn.data(), T, state.replay,
                          state.gdn[gdn_index++], mix.data(), pool_);
    } else {
      AttentionMixer(c, l.attention, *rope_, xn.data(), T, start_pos,
                     state.kv[attn_index++], mix.data(), pool_);
    }
    for (size_t j = 0; j < h.size(); ++j) h[j] += mix[j];
    ops::RmsNormZeroCentered(h.data(), l.post_norm.data(), T, D, eps,
                             xn.data());
    if (l.ffn == FfnKind::kDense) {
      ops::SwiGluMlp(xn.data(), T, D, View(l.mlp), mix.data());
    } else {
      ops::MoeForward(xn.data(), T, D, moe_[i], mix.data(), pool_);
    }
    for (size_t j = 0; j < h.size(); ++j) h[j] += mix[j];
  }
  const int n = T - first_logit;
  if (n > 0) {
    const float* last = h.data() + static_cast<size_t>(first_logit) * D;
    std::vector<float> normed(static_cast<size_t>(n) * D);  // [n, D]
    ops::RmsNormZeroCentered(last, w.final_norm.data(), n, D, eps,
                             normed.data());
    // One GEMV per token keeps a logit row independent of its neighbours.
    for (int t = 0; t < n; ++t) {
      ops::Linear(normed.data() + static_cast<size_t>(t) * D, 1, D,
                  w.lm_head_data(), c.vocab_size,
                  logits + static_cast<size_t>(t) * c.vocab_size);
    }
  }
  return flushed;
}

}  // namespace rollout::model
