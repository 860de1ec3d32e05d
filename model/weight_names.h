// Checkpoint tensor names -> the canonical language-model names the loaders
// use ("model.layers.3.self_attn.q_proj.weight", "model.embed_tokens.weight",
// "lm_head.weight").
//
// Layouts: Qwen3-Next and text-only Qwen3.5 checkpoints use "model." directly;
// Qwen3.5 conditional-generation checkpoints put the language model under
// "model.language_model." next to the vision tower ("model.visual.*"). The
// multi-token-prediction head ("mtp.*") and vision tensors are not part of the
// decoder that transformers runs for text, so they are ignored.
#ifndef ROLLOUT_MODEL_WEIGHT_NAMES_H_
#define ROLLOUT_MODEL_WEIGHT_NAMES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::model {

enum class TensorRole {
  kLanguageModel,  // part of the text decoder (canonical name available)
  kIgnored,        // mtp.*, vision tower
  kUnknown,        // anything else (an error for the loader)
};

struct ClassifiedName {
  TensorRole role = TensorRole::kUnknown;
  std::string canonical;  // set for kLanguageModel
};

ClassifiedName ClassifyTensorName(absl::string_view checkpoint_name);

struct NameMap {
  // canonical name -> checkpoint name
  std::map<std::string, std::string> to_checkpoint;
  std::vector<std::string> ignored;  // checkpoint names skipped
  std::vector<std::string> unknown;  // checkpoint names not understood
};

// Classifies every name; two checkpoint names with the same canonical name
// (e.g. both "model.norm.weight" and "model.language_model.norm.weight") are
// an error.
absl::StatusOr<NameMap> BuildNameMap(const std::vector<std::string>& names);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_WEIGHT_NAMES_H_
