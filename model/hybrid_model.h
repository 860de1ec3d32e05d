// The hybrid Gated DeltaNet decoder (Qwen3-Next, Qwen3.5, Qwen3.5-MoE) in
// fp32 for one sequence at a time: embedding -> per layer
// x += mixer(norm1(x)); x += ffn(norm2(x)) -> final norm -> lm_head (tied to
// the embedding when the config says so). The mixer is a GDN layer or gated
// attention, the FFN a SwiGLU MLP or the sparse MoE block (config).
//
// Each call processes one sequence's tokens against its own state, so a row's
// result never depends on other rows: the backend calls Forward once per row.
//
//   HybridModel model(config, weights, &pool);
//   ASSIGN_OR_RETURN(bool flushed,
//                    model.Forward(tokens, start_pos, state, first_logit,
//                    logits));
#ifndef ROLLOUT_MODEL_HYBRID_MODEL_H_
#define ROLLOUT_MODEL_HYBRID_MODEL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/config.h"
#include "model/ops/moe.h"
#include "model/ops/parallel.h"
#include "model/ops/rope.h"
#include "model/sequence_state.h"
#include "model/weights.h"

namespace rollout::model {

class HybridModel {
 public:
  // `pool` may be null (single-threaded); it must outlive the model.
  HybridModel(ModelConfig config, std::shared_ptr<const ModelWeights> weights,
              ops::ThreadPool* pool);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return *weights_; }

  // Feeds `tokens` (positions start_pos ..) through every layer, updating
  // `state`. Writes the fp32 logits of tokens [first_logit, T) to `logits`
  // ([T - first_logit, vocab]); first_logit == T asks for none. A ring row
  // (state.replay.ring_length > 0) must have exactly one token. Returns
  // whether a ReplaySSM ring row flushed its checkpoint.
  absl::StatusOr<bool> Forward(absl::Span<const int32_t> tokens, int start_pos,
                               SequenceState& state, int first_logit,
                               float* logits) const;

 private:
  ModelConfig config_;
  std::shared_ptr<const ModelWeights> weights_;
  ops::ThreadPool* pool_;
  std::unique_ptr<ops::Rope> rope_;  // null without attention layers
  std::vector<ops::MoeView> moe_;    // per layer (empty for dense layers)
};

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_HYBRID_MODEL_H_
