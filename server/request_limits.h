// The per-request limits in force: the admission section of the config and,
// once a model is known, its vocabulary and context length.
#ifndef ROLLOUT_SERVER_REQUEST_LIMITS_H_
#define ROLLOUT_SERVER_REQUEST_LIMITS_H_

#include <cstdint>

#include "rollout/v1/config.pb.h"
#include "rollout/v1/rollout.pb.h"

namespace rollout::server {

struct RequestLimits {
  int32_t max_n = 1;
  int32_t max_prompt_tokens = 1;
  int32_t max_tokens = 1;
  int32_t max_top_logprobs = 0;
  int32_t max_stop_token_ids = 0;
  int64_t max_response_bytes = 0;
  // From the model; 0 = not known yet (token-id and context checks are then
  // skipped; the worker checks them again).
  int32_t vocab_size = 0;
  int32_t context_length = 0;

  // `model` may be null (no model known).
  static RequestLimits From(const rollout::v1::ServerConfig& config,
                            const rollout::v1::ModelInfo* model);
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_REQUEST_LIMITS_H_
