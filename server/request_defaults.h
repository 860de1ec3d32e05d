// Fills in what a GenerateRequest leaves to the server, so that workers only
// ever see complete requests:
//  - unset SamplingParams fields take config.default_sampling;
//  - a defaulted max_tokens is kept within limits.max_tokens and shortened to
//    what fits the model's context;
//  - replay_ssm DEFAULT becomes config.replay_ssm.default_mode (AUTO becomes
//    OFF when replay_ssm.enabled is false);
//  - a missing seed becomes a random one (reported back in the response);
//  - an empty request_id becomes "rolloutd-<16 hex digits>".
// Values the client set are kept as they are (validation judges them).
#ifndef ROLLOUT_SERVER_REQUEST_DEFAULTS_H_
#define ROLLOUT_SERVER_REQUEST_DEFAULTS_H_

#include "absl/random/bit_gen_ref.h"
#include "rollout/v1/config.pb.h"
#include "rollout/v1/rollout.pb.h"
#include "server/request_limits.h"

namespace rollout::server {

rollout::v1::GenerateRequest ResolveGenerateRequest(
    rollout::v1::GenerateRequest request,
    const rollout::v1::ServerConfig& config, const RequestLimits& limits,
    absl::BitGenRef rng);

// An empty request_id becomes "rolloutd-<16 hex digits>".
rollout::v1::ScoreRequest ResolveScoreRequest(rollout::v1::ScoreRequest request,
                                              absl::BitGenRef rng);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_REQUEST_DEFAULTS_H_
