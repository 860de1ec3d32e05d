#include "server/request_defaults.h"

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_defaults.h"

namespace rollout::server {
namespace {

RequestLimits WithContext(int context) {
  RequestLimits limits;
  limits.max_tokens = 32768;
  limits.context_length = context;
  return limits;
}

TEST(RequestDefaultsTest, FillsUnsetFieldsFromTheConfig) {
  v1::ServerConfig config = DefaultServerConfig();
  config.mutable_default_sampling()->set_temperature(0.7f);
  config.mutable_default_sampling()->set_top_k(50);
  config.mutable_replay_ssm()->set_default_mode(v1::REPLAY_SSM_MODE_ON);
  v1::GenerateRequest request;
  request.add_prompt_token_ids(1);
  absl::BitGen rng;
  const v1::GenerateRequest r =
      ResolveGenerateRequest(request, config, WithContext(0), rng);
  EXPECT_FLOAT_EQ(r.sampling().temperature(), 0.7f);
  EXPECT_FLOAT_EQ(r.sampling().top_p(), 1.0f);
  EXPECT_EQ(r.sampling().top_k(), 50);
  EXPECT_FLOAT_EQ(r.sampling().min_p(), 0.0f);
  EXPECT_EQ(r.sampling().max_tokens(), 1024);
  EXPECT_TRUE(r.sampling().has_seed());
  EXPECT_EQ(r.replay_ssm(), v1::REPLAY_SSM_MODE_ON);
  EXPECT_TRUE(absl::StartsWith(r.request_id(), "rolloutd-"));
  EXPECT_EQ(r.request_id().size(), 9u + 16u);
}

TEST(RequestDefaultsTest, KeepsWhatTheClientSetIncludingZeros) {
  v1::GenerateRequest request;
  request.set_request_id("mine");
  request.mutable_sampling()->set_temperature(0);  // greedy
  request.mutable_sampling()->set_top_k(0);
  request.mutable_sampling()->set_seed(0);
  request.mutable_sampling()->set_max_tokens(5000);  // invalid: kept
  request.set_replay_ssm(v1::REPLAY_SSM_MODE_OFF);
  absl::BitGen rng;
  const v1::GenerateRequest r = ResolveGenerateRequest(
      request, DefaultServerConfig(), WithContext(100), rng);
  EXPECT_EQ(r.request_id(), "mine");
  EXPECT_EQ(r.sampling().temperature(), 0);
  EXPECT_EQ(r.sampling().seed(), 0u);
  EXPECT_EQ(r.sampling().max_tokens(), 5000);
  EXPECT_EQ(r.replay_ssm(), v1::REPLAY_SSM_MODE_OFF);
}

TEST(RequestDefaultsTest, DefaultMaxTokensFitsTheContext) {
  v1::GenerateRequest request;
  for (int i = 0; i < 90; ++i) request.add_prompt_token_ids(1);
  absl::BitGen rng;
  EXPECT_EQ(ResolveGenerateRequest(request, DefaultServerConfig(),
                                   WithContext(100), rng)
                .sampling()
                .max_tokens(),
            10);
  // Unknown context: the configured default as is.
  EXPECT_EQ(ResolveGenerateRequest(request, DefaultServerConfig(),
                                   WithContext(0), rng)
                .sampling()
                .max_tokens(),
            1024);
}

TEST(RequestDefaultsTest, DefaultMaxTokensStaysWithinTheLimit) {
  RequestLimits limits = WithContext(0);
  limits.max_tokens = 200;
  absl::BitGen rng;
  v1::GenerateRequest request;
  EXPECT_EQ(ResolveGenerateRequest(request, DefaultServerConfig(), limits, rng)
                .sampling()
                .max_tokens(),
            200);
}

TEST(RequestDefaultsTest, DisabledReplaySsmTurnsAutoIntoOffButKeepsOn) {
  v1::ServerConfig config = DefaultServerConfig();
  config.mutable_replay_ssm()->set_enabled(false);
  absl::BitGen rng;
  v1::GenerateRequest request;
  EXPECT_EQ(
      ResolveGenerateRequest(request, config, WithContext(0), rng).replay_ssm(),
      v1::REPLAY_SSM_MODE_OFF);
  request.set_replay_ssm(v1::REPLAY_SSM_MODE_ON);
  EXPECT_EQ(
      ResolveGenerateRequest(request, config, WithContext(0), rng).replay_ssm(),
      v1::REPLAY_SSM_MODE_ON);
}

TEST(RequestDefaultsTest, SeedsAndIdsDiffer) {
  absl::BitGen rng;
  v1::GenerateRequest request;
  const auto a = ResolveGenerateRequest(request, DefaultServerConfig(),
                                        WithContext(0), rng);
  const auto b = ResolveGenerateRequest(request, DefaultServerConfig(),
                                        WithContext(0), rng);
  EXPECT_NE(a.sampling().seed(), b.sampling().seed());
  EXPECT_NE(a.request_id(), b.request_id());
  v1::ScoreRequest score;
  EXPECT_TRUE(absl::StartsWith(ResolveScoreRequest(score, rng).request_id(),
                               "rolloutd-"));
}

}  // namespace
}  // namespace rollout::server
