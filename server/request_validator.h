// Validation of every public request before any work starts.
//
// Each function returns OK or the first problem as INVALID_ARGUMENT naming the
// field and what is allowed (FieldOf(status) gives the field for metrics):
//   "sampling.top_p: must be in (0, 1], got 2"
//   "prompt_token_ids: must not be empty (1 to 32768 token ids)"
// Generate requests are validated after ResolveGenerateRequest, so every
// optional field is set; a client value outside its range is reported under
// the name the client used.
#ifndef ROLLOUT_SERVER_REQUEST_VALIDATOR_H_
#define ROLLOUT_SERVER_REQUEST_VALIDATOR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "rollout/v1/admin.pb.h"
#include "rollout/v1/rollout.pb.h"
#include "server/request_limits.h"

namespace rollout::server {

// `unary`: Generate (the whole group in one message, so its worst-case size
// must fit limits.max_response_bytes) rather than GenerateStream.
absl::Status ValidateGenerateRequest(
    const rollout::v1::GenerateRequest& resolved, const RequestLimits& limits,
    bool unary);

absl::Status ValidateScoreRequest(const rollout::v1::ScoreRequest& request,
                                  const RequestLimits& limits);

absl::Status ValidateAbortRequest(const rollout::v1::AbortRequest& request);

absl::Status ValidatePauseRequest(const rollout::v1::PauseRequest& request);

// Shape only (non-empty absolute path); confinement to the model roots is
// CheckUnderModelRoots.
absl::Status ValidateUpdateWeightsRequest(
    const rollout::v1::UpdateWeightsRequest& request);

// Worst-case bytes of a unary GenerateResponse for these parameters.
int64_t EstimateResponseBytes(int32_t n, int32_t max_tokens, bool sampled,
                              int32_t top_k);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_REQUEST_VALIDATOR_H_
