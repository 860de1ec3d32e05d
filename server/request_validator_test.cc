#include "server/request_validator.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_defaults.h"
#include "server/field_error.h"
#include "server/request_defaults.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

// The tiny model's vocabulary and context, and small limits so that the
// boundaries are easy to write down.
RequestLimits Limits(bool model_known = true) {
  RequestLimits l;
  l.max_n = 16;
  l.max_prompt_tokens = 100;
  l.max_tokens = 200;
  l.max_top_logprobs = 5;
  l.max_stop_token_ids = 3;
  l.max_response_bytes = 100000;
  if (model_known) {
    l.vocab_size = 1031;
    l.context_length = 256;
  }
  return l;
}

v1::GenerateRequest Good() {
  v1::GenerateRequest r;
  r.set_request_id("grpo-step-1/group-0");
  for (int id : {1, 2, 3, 1030}) r.add_prompt_token_ids(id);
  r.set_n(8);
  r.mutable_sampling()->set_max_tokens(64);
  r.mutable_logprobs()->set_sampled(true);
  r.mutable_logprobs()->set_top_k(5);
  return r;
}

// What the server validates: the request with defaults filled in.
v1::GenerateRequest Resolved(v1::GenerateRequest r,
                             const RequestLimits& limits = Limits()) {
  absl::BitGen rng;
  return ResolveGenerateRequest(std::move(r), DefaultServerConfig(), limits,
                                rng);
}

struct BadGenerate {
  std::string name;
  std::function<void(v1::GenerateRequest*)> mutate;
  std::string field;    // FieldOf(status), also the message's start
  std::string allowed;  // part of the message: the allowed range
};

void PrintTo(const BadGenerate& c, std::ostream* os) { *os << c.name; }

std::vector<BadGenerate> BadGenerates() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"request_id_too_long",
       [](auto* r) { r->set_request_id(std::string(257, 'a')); }, "request_id",
       "at most 256"},
      {"request_id_control_char", [](auto* r) { r->set_request_id("a\nb"); },
       "request_id", "printable ASCII"},
      {"empty_prompt", [](auto* r) { r->clear_prompt_token_ids(); },
       "prompt_token_ids", "must not be empty (1 to 100 token ids)"},
      {"prompt_over_limit",
       [](auto* r) {
         for (int i = 0; i < 100; ++i) r->add_prompt_token_ids(1);
       },
       "prompt_token_ids", "at most 100 tokens"},
      {"prompt_id_negative", [](auto* r) { r->set_prompt_token_ids(1, -1); },
       "prompt_token_ids", "entry 1 must be in [0, 1031)"},
      {"prompt_id_outside_vocab",
       [](auto* r) { r->set_prompt_token_ids(2, 1031); }, "prompt_token_ids",
       "entry 2 must be in [0, 1031) (the model's vocabulary), got 1031"},
      {"n_zero", [](auto* r) { r->set_n(0); }, "n", "[1, 16]"},
      {"n_over_limit", [](auto* r) { r->set_n(17); }, "n", "[1, 16]"},
      {"temperature_negative",
       [](auto* r) { r->mutable_sampling()->set_temperature(-0.5); },
       "sampling.temperature", ">= 0 and finite"},
      {"temperature_nan",
       [nan](auto* r) { r->mutable_sampling()->set_temperature(nan); },
       "sampling.temperature", ">= 0 and finite"},
      {"temperature_inf",
       [inf](auto* r) { r->mutable_sampling()->set_temperature(inf); },
       "sampling.temperature", ">= 0 and finite"},
      {"top_p_two", [](auto* r) { r->mutable_sampling()->set_top_p(2); },
       "sampling.top_p", "must be in (0, 1], got 2"},
      {"top_p_zero", [](auto* r) { r->mutable_sampling()->set_top_p(0); },
       "sampling.top_p", "(0, 1]"},
      {"top_p_nan", [nan](auto* r) { r->mutable_sampling()->set_top_p(nan); },
       "sampling.top_p", "(0, 1]"},
      {"top_k_negative", [](auto* r) { r->mutable_sampling()->set_top_k(-1); },
       "sampling.top_k", ">= 0"},
      {"min_p_negative",
       [](auto* r) { r->mutable_sampling()->set_min_p(-0.1); },
       "sampling.min_p", "[0, 1]"},
      {"min_p_over_one", [](auto* r) { r->mutable_sampling()->set_min_p(1.5); },
       "sampling.min_p", "[0, 1]"},
      {"max_tokens_zero",
       [](auto* r) { r->mutable_sampling()->set_max_tokens(0); },
       "sampling.max_tokens", "[1, 200]"},
      {"max_tokens_over_limit",
       [](auto* r) { r->mutable_sampling()->set_max_tokens(201); },
       "sampling.max_tokens", "[1, 200]"},
      {"max_tokens_over_context",
       [](auto* r) {
         for (int i = 0; i < 60; ++i) r->add_prompt_token_ids(1);
         r->mutable_sampling()->set_max_tokens(200);
       },
       "sampling.max_tokens", "exceeds the model's context of 256 tokens"},
      {"min_tokens_negative",
       [](auto* r) { r->mutable_sampling()->set_min_tokens(-1); },
       "sampling.min_tokens", "[0, max_tokens = 64]"},
      {"min_tokens_over_max",
       [](auto* r) { r->mutable_sampling()->set_min_tokens(65); },
       "sampling.min_tokens", "[0, max_tokens = 64]"},
      {"too_many_stop_ids",
       [](auto* r) {
         for (int i = 0; i < 4; ++i)
           r->mutable_sampling()->add_stop_token_ids(i);
       },
       "sampling.stop_token_ids", "at most 3 entries"},
      {"stop_id_outside_vocab",
       [](auto* r) { r->mutable_sampling()->add_stop_token_ids(5000); },
       "sampling.stop_token_ids", "[0, 1031)"},
      {"top_logprobs_negative",
       [](auto* r) { r->mutable_logprobs()->set_top_k(-1); }, "logprobs.top_k",
       "[0, 5]"},
      {"top_logprobs_over_limit",
       [](auto* r) { r->mutable_logprobs()->set_top_k(6); }, "logprobs.top_k",
       "[0, 5]"},
      {"replay_ssm_unknown",
       [](auto* r) { r->set_replay_ssm(static_cast<v1::ReplaySsmMode>(7)); },
       "replay_ssm", "got 7"},
      {"response_too_large",
       [](auto* r) {
         r->set_n(16);
         r->mutable_sampling()->set_max_tokens(190);
       },
       "response_size", "use GenerateStream"},
  };
}

class GenerateValidationTest : public ::testing::TestWithParam<BadGenerate> {};

TEST_P(GenerateValidationTest, BadFieldIsInvalidArgumentNamingIt) {
  v1::GenerateRequest request = Good();
  GetParam().mutate(&request);
  const absl::Status status =
      ValidateGenerateRequest(Resolved(request), Limits(), /*unary=*/true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(FieldOf(status), GetParam().field) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(GetParam().field + ": "));
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().allowed));
}

INSTANTIATE_TEST_SUITE_P(Table, GenerateValidationTest,
                         ::testing::ValuesIn(BadGenerates()),
                         [](const auto& info) { return info.param.name; });

TEST(GenerateValidationTest, GoodRequestsPass) {
  std::vector<v1::GenerateRequest> goods;
  goods.push_back(Good());
  v1::GenerateRequest minimal;  // everything else from the defaults
  minimal.add_prompt_token_ids(0);
  minimal.set_n(1);
  goods.push_back(minimal);
  v1::GenerateRequest edges = Good();
  edges.set_n(16);
  edges.mutable_sampling()->set_temperature(0);
  edges.mutable_sampling()->set_top_p(1);
  edges.mutable_sampling()->set_top_k(100000);  // >= vocab: off
  edges.mutable_sampling()->set_min_p(1);
  edges.mutable_sampling()->set_min_tokens(64);
  for (int id : {0, 1, 1030}) edges.mutable_sampling()->add_stop_token_ids(id);
  edges.mutable_logprobs()->set_top_k(0);
  edges.set_replay_ssm(v1::REPLAY_SSM_MODE_ON);
  edges.set_min_weight_version(12);
  goods.push_back(edges);
  for (const auto& request : goods) {
    EXPECT_TRUE(ValidateGenerateRequest(Resolved(request), Limits(), true).ok())
        << request.DebugString();
  }
}

TEST(GenerateValidationTest, StreamHasNoResponseSizeLimit) {
  v1::GenerateRequest request = Good();
  request.set_n(16);
  request.mutable_sampling()->set_max_tokens(190);
  EXPECT_FALSE(ValidateGenerateRequest(Resolved(request), Limits(), true).ok());
  EXPECT_TRUE(ValidateGenerateRequest(Resolved(request), Limits(), false).ok());
}

TEST(GenerateValidationTest, WithoutAModelVocabularyChecksAreSkipped) {
  v1::GenerateRequest request = Good();
  request.set_prompt_token_ids(0, 999999);
  request.mutable_sampling()->set_max_tokens(200);
  const RequestLimits unknown = Limits(/*model_known=*/false);
  EXPECT_TRUE(
      ValidateGenerateRequest(Resolved(request, unknown), unknown, false).ok());
  // Negative ids are never valid.
  request.set_prompt_token_ids(0, -3);
  const absl::Status status =
      ValidateGenerateRequest(Resolved(request, unknown), unknown, false);
  EXPECT_EQ(FieldOf(status), "prompt_token_ids");
  EXPECT_THAT(std::string(status.message()), HasSubstr("must be >= 0"));
}

TEST(GenerateValidationTest, PromptFillingTheContextIsRejected) {
  RequestLimits limits = Limits();
  limits.max_prompt_tokens = 1000;
  v1::GenerateRequest request = Good();
  request.clear_prompt_token_ids();
  for (int i = 0; i < 256; ++i) request.add_prompt_token_ids(1);
  request.mutable_sampling()->clear_max_tokens();
  const absl::Status status =
      ValidateGenerateRequest(Resolved(request, limits), limits, false);
  EXPECT_EQ(FieldOf(status), "prompt_token_ids");
  EXPECT_THAT(std::string(status.message()), HasSubstr("context of 256"));
}

TEST(ScoreValidationTest, TableOfBadRequests) {
  auto good = [] {
    v1::ScoreRequest r;
    r.add_prompt_token_ids(5);
    r.add_completions()->add_token_ids(7);
    r.set_top_logprobs(2);
    return r;
  };
  EXPECT_TRUE(ValidateScoreRequest(good(), Limits()).ok());
  struct Case {
    std::function<void(v1::ScoreRequest*)> mutate;
    std::string field;
    std::string allowed;
  };
  const std::vector<Case> cases = {
      {[](auto* r) { r->clear_prompt_token_ids(); }, "prompt_token_ids",
       "must not be empty"},
      {[](auto* r) { r->clear_completions(); }, "completions", "1 to 16"},
      {[](auto* r) { r->mutable_completions(0)->clear_token_ids(); },
       "completions.token_ids", "completion 0 must have 1 to 200 tokens"},
      {[](auto* r) { r->mutable_completions(0)->add_token_ids(2000); },
       "completions.token_ids", "completion 0 entry 1 must be in [0, 1031)"},
      {[](auto* r) {
         for (int i = 0; i < 199; ++i)
           r->mutable_completions(0)->add_token_ids(1);
         for (int i = 0; i < 60; ++i) r->add_prompt_token_ids(1);
       },
       "completions.token_ids", "context of 256"},
      {[](auto* r) { r->set_top_logprobs(6); }, "top_logprobs", "[0, 5]"},
      {[](auto* r) { r->set_request_id(std::string(300, 'x')); }, "request_id",
       "at most 256"},
  };
  for (const Case& c : cases) {
    v1::ScoreRequest r = good();
    c.mutate(&r);
    const absl::Status status = ValidateScoreRequest(r, Limits());
    EXPECT_EQ(FieldOf(status), c.field) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.allowed));
  }
}

TEST(AdminValidationTest, AbortPauseUpdateWeights) {
  v1::AbortRequest abort;
  EXPECT_EQ(FieldOf(ValidateAbortRequest(abort)), "target");
  abort.set_request_id("");
  EXPECT_EQ(FieldOf(ValidateAbortRequest(abort)), "request_id");
  abort.set_request_id("r1");
  EXPECT_TRUE(ValidateAbortRequest(abort).ok());
  abort.set_all(false);
  EXPECT_EQ(FieldOf(ValidateAbortRequest(abort)), "all");
  abort.set_all(true);
  EXPECT_TRUE(ValidateAbortRequest(abort).ok());

  v1::PauseRequest pause;
  EXPECT_TRUE(ValidatePauseRequest(pause).ok());  // unset = WAIT
  pause.set_mode(static_cast<v1::PauseMode>(9));
  EXPECT_EQ(FieldOf(ValidatePauseRequest(pause)), "mode");

  v1::UpdateWeightsRequest update;
  EXPECT_EQ(FieldOf(ValidateUpdateWeightsRequest(update)), "path");
  update.set_path("relative/ckpt");
  EXPECT_EQ(FieldOf(ValidateUpdateWeightsRequest(update)), "path");
  update.set_path("/ckpt/step-10");
  EXPECT_TRUE(ValidateUpdateWeightsRequest(update).ok());
}

TEST(EstimateResponseBytesTest, GrowsWithEveryFactor) {
  const int64_t base = EstimateResponseBytes(8, 100, false, 0);
  EXPECT_GT(EstimateResponseBytes(16, 100, false, 0), base);
  EXPECT_GT(EstimateResponseBytes(8, 200, false, 0), base);
  EXPECT_GT(EstimateResponseBytes(8, 100, true, 0), base);
  EXPECT_GT(EstimateResponseBytes(8, 100, true, 5),
            EstimateResponseBytes(8, 100, true, 0));
  // 16 x 32k tokens x 21 logprobs (rl_ecosystem.md): about 86 MB.
  const int64_t big = EstimateResponseBytes(16, 32768, true, 20);
  EXPECT_GT(big, 80'000'000);
  EXPECT_LT(big, 120'000'000);
}

}  // namespace
}  // namespace rollout::server
