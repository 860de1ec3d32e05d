#include "server/request_limits.h"

namespace rollout::server {

RequestLimits RequestLimits::From(const rollout::v1::ServerConfig& config,
                                  const rollout::v1::ModelInfo* model) {
  const auto& a = config.admission();
  RequestLimits limits;
  limits.max_n = a.max_n();
  limits.max_prompt_tokens = a.max_prompt_tokens();
  limits.max_tokens = a.max_tokens();
  limits.max_top_logprobs = a.max_top_logprobs();
  limits.max_stop_token_ids = a.max_stop_token_ids();
  limits.max_response_bytes = a.max_response_bytes();
  if (model != nullptr) {
    limits.vocab_size = model->vocab_size();
    limits.context_length = model->max_position_embeddings();
  }
  return limits;
}

}  // namespace rollout::server
