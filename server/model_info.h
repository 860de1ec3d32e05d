// The served model's description for GetServerInfo and request validation,
// read from a Hugging Face checkpoint directory's config.json (through
// model/config.h, the same parser the workers use).
//
// rolloutd reads it at start-up so that vocabulary and context checks work
// before any worker is ready; once workers report their model
// (Dispatcher::Model), that one wins.
#ifndef ROLLOUT_SERVER_MODEL_INFO_H_
#define ROLLOUT_SERVER_MODEL_INFO_H_

#include <string>

#include "absl/status/statusor.h"
#include "model/config.h"
#include "rollout/v1/rollout.pb.h"

namespace rollout::server {

rollout::v1::ModelInfo ToModelInfo(const rollout::model::ModelConfig& config,
                                   const std::string& name);

// Reads <dir>/config.json (+ generation_config.json).
absl::StatusOr<rollout::v1::ModelInfo> ReadModelInfo(const std::string& dir);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_MODEL_INFO_H_
