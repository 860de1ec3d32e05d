#include "server/request_defaults.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"

namespace rollout::server {
namespace {

std::string NewRequestId(absl::BitGenRef rng) {
  return absl::StrCat(
      "rolloutd-", absl::Hex(absl::Uniform<uint64_t>(rng), absl::kZeroPad16));
}

}  // namespace

rollout::v1::GenerateRequest ResolveGenerateRequest(
    rollout::v1::GenerateRequest request,
    const rollout::v1::ServerConfig& config, const RequestLimits& limits,
    absl::BitGenRef rng) {
  if (request.request_id().empty()) request.set_request_id(NewRequestId(rng));
  const auto& d = config.default_sampling();
  auto* s = request.mutable_sampling();
  if (!s->has_temperature()) s->set_temperature(d.temperature());
  if (!s->has_top_p()) s->set_top_p(d.top_p());
  if (!s->has_top_k()) s->set_top_k(d.top_k());
  if (!s->has_min_p()) s->set_min_p(d.min_p());
  if (!s->has_max_tokens()) {
    // A default must not make a valid request fail: keep it within
    // limits.max_tokens and shorten it to the room the context leaves (at
    // least 1; an over-long prompt is reported as such by validation).
    int32_t max_tokens = std::min(d.max_tokens(), limits.max_tokens);
    if (limits.context_length > 0) {
      const int64_t room = static_cast<int64_t>(limits.context_length) -
                           request.prompt_token_ids_size();
      max_tokens = static_cast<int32_t>(
          std::max<int64_t>(1, std::min<int64_t>(max_tokens, room)));
    }
    s->set_max_tokens(max_tokens);
  }
  if (!s->has_seed()) s->set_seed(absl::Uniform<uint64_t>(rng));
  if (request.replay_ssm() == rollout::v1::REPLAY_SSM_MODE_DEFAULT) {
    request.set_replay_ssm(config.replay_ssm().default_mode());
  }
  // With ReplaySSM disabled, AUTO can only mean OFF. ON stays ON: the worker
  // reports it as a fallback (DISABLED_BY_CONFIG), so the caller sees why.
  if (!config.replay_ssm().enabled() &&
      request.replay_ssm() == rollout::v1::REPLAY_SSM_MODE_AUTO) {
    request.set_replay_ssm(rollout::v1::REPLAY_SSM_MODE_OFF);
  }
  return request;
}

rollout::v1::ScoreRequest ResolveScoreRequest(rollout::v1::ScoreRequest request,
                                              absl::BitGenRef rng) {
  if (request.request_id().empty()) request.set_request_id(NewRequestId(rng));
  return request;
}

}  // namespace rollout::server
