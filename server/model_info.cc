#include "server/model_info.h"

#include <utility>

namespace rollout::server {

rollout::v1::ModelInfo ToModelInfo(const rollout::model::ModelConfig& config,
                                   const std::string& name) {
  rollout::v1::ModelInfo info;
  info.set_model_type(config.model_type);
  info.set_name(name);
  info.set_vocab_size(config.vocab_size);
  info.set_num_layers(config.num_layers);
  for (const auto kind : config.layer_kinds) {
    info.add_layer_types(kind == rollout::model::LayerKind::kLinearAttention
                             ? rollout::v1::LAYER_TYPE_GATED_DELTANET
                             : rollout::v1::LAYER_TYPE_FULL_ATTENTION);
  }
  info.set_num_gdn_layers(config.num_gdn_layers());
  info.set_num_attention_layers(config.num_attention_layers());
  info.set_max_position_embeddings(config.max_position_embeddings);
  for (int32_t id : config.eos_token_ids) info.add_eos_token_ids(id);
  return info;
}

absl::StatusOr<rollout::v1::ModelInfo> ReadModelInfo(const std::string& dir) {
  auto config = rollout::model::LoadModelConfig(dir);
  if (!config.ok()) return config.status();
  std::string name = dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  return ToModelInfo(*config, name);
}

}  // namespace rollout::server
