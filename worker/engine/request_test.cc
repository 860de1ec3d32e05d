#include "worker/engine/request.h"

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

RequestLimits Limits() {
  RequestLimits l;
  l.vocab_size = 100;
  l.max_model_len = 64;
  l.max_n = 8;
  l.max_top_logprobs = 5;
  return l;
}

GroupRequest Valid() {
  GroupRequest r;
  r.prompt = {1, 2, 3};
  r.n = 2;
  return r;
}

void ExpectInvalid(const GroupRequest& r, const std::string& field) {
  absl::Status s = ValidateGroupRequest(r, Limits());
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(field), absl::string_view::npos) << s;
}

TEST(RequestTest, ValidRequestPasses) {
  EXPECT_TRUE(ValidateGroupRequest(Valid(), Limits()).ok());
}

TEST(RequestTest, InvalidFieldsAreNamed) {
  GroupRequest r = Valid();
  r.prompt.clear();
  ExpectInvalid(r, "prompt_token_ids");
  r = Valid();
  r.prompt[1] = 100;
  ExpectInvalid(r, "prompt_token_ids");
  r = Valid();
  r.n = 9;
  ExpectInvalid(r, "n");
  r = Valid();
  r.sampling.temperature = -1;
  ExpectInvalid(r, "temperature");
  r = Valid();
  r.sampling.top_p = 0;
  ExpectInvalid(r, "top_p");
  r = Valid();
  r.sampling.min_p = 1.5f;
  ExpectInvalid(r, "min_p");
  r = Valid();
  r.sampling.max_tokens = 62;  // 3 + 62 > 64
  ExpectInvalid(r, "max_tokens");
  r = Valid();
  r.sampling.min_tokens = 20;  // > max_tokens 16
  ExpectInvalid(r, "min_tokens");
  r = Valid();
  r.sampling.stop_token_ids = {-1};
  ExpectInvalid(r, "stop_token_ids");
  r = Valid();
  r.logprobs.top_k = 6;
  ExpectInvalid(r, "logprobs.top_k");
}

TEST(RequestTest, ScoreValidation) {
  ScoreRequest s;
  s.prompt = {1};
  s.completions = {{2, 3}, {4}};
  EXPECT_TRUE(ValidateScoreRequest(s, Limits()).ok());
  s.completions.push_back({});
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateScoreRequest(s, Limits())));
  s.completions = {std::vector<int32_t>(64, 1)};
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateScoreRequest(s, Limits())));
}

TEST(RequestTest, EnumNamesMatchMetricsCatalog) {
  EXPECT_EQ(FallbackReasonName(FallbackReason::kNoGdnLayers), "no_gdn_layers");
  EXPECT_EQ(FallbackReasonName(FallbackReason::kRingPoolExhausted),
            "ring_pool_exhausted");
  EXPECT_EQ(FallbackReasonName(FallbackReason::kBackendUnsupported),
            "backend_unsupported");
  EXPECT_EQ(FallbackReasonName(FallbackReason::kDisabledByConfig),
            "disabled_by_config");
  EXPECT_EQ(FallbackReasonName(FallbackReason::kPrefillOnly), "prefill_only");
  EXPECT_EQ(FinishReasonName(FinishReason::kAborted), "aborted");
  EXPECT_EQ(ReplayModeName(ReplayMode::kAuto), "auto");
}

}  // namespace
}  // namespace rollout::worker
