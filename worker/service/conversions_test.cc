#include "worker/service/conversions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::worker::service {
namespace {

using ::testing::ElementsAre;

TEST(ConversionsTest, GroupRequestTakesEveryResolvedField) {
  rollout::v1::GenerateRequest r;
  r.set_request_id("r#1");
  r.add_prompt_token_ids(5);
  r.add_prompt_token_ids(6);
  r.set_n(8);
  auto* s = r.mutable_sampling();
  s->set_temperature(0.5f);
  s->set_top_p(0.9f);
  s->set_top_k(7);
  s->set_min_p(0.1f);
  s->set_max_tokens(33);
  s->set_min_tokens(2);
  s->add_stop_token_ids(9);
  s->set_ignore_eos(true);
  s->set_seed(42);
  r.mutable_logprobs()->set_sampled(true);
  r.mutable_logprobs()->set_top_k(3);
  r.set_replay_ssm(rollout::v1::REPLAY_SSM_MODE_ON);
  r.set_min_weight_version(4);
  const GroupRequest g = ToGroupRequest(r, 1'000'000);
  EXPECT_EQ(g.request_id, "r#1");
  EXPECT_THAT(g.prompt, ElementsAre(5, 6));
  EXPECT_EQ(g.n, 8);
  EXPECT_FLOAT_EQ(g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(g.sampling.top_p, 0.9f);
  EXPECT_EQ(g.sampling.top_k, 7);
  EXPECT_FLOAT_EQ(g.sampling.min_p, 0.1f);
  EXPECT_EQ(g.sampling.max_tokens, 33);
  EXPECT_EQ(g.sampling.min_tokens, 2);
  EXPECT_THAT(g.sampling.stop_token_ids, ElementsAre(9));
  EXPECT_TRUE(g.sampling.ignore_eos);
  EXPECT_EQ(g.sampling.seed, 42u);
  EXPECT_TRUE(g.logprobs.sampled);
  EXPECT_EQ(g.logprobs.top_k, 3);
  EXPECT_EQ(g.replay_ssm, ReplayMode::kOn);
  EXPECT_EQ(g.min_weight_version, 4);
  EXPECT_EQ(g.deadline, absl::FromUnixSeconds(1));
}

TEST(ConversionsTest, NoLogprobsUnlessAskedAndNoDeadlineForZero) {
  rollout::v1::GenerateRequest r;
  r.set_n(1);
  const GroupRequest g = ToGroupRequest(r, 0);
  EXPECT_FALSE(g.logprobs.sampled);
  EXPECT_EQ(g.deadline, absl::InfiniteFuture());
  EXPECT_EQ(g.replay_ssm, ReplayMode::kDefault);
}

TEST(ConversionsTest, DeltaCarriesOffsetVersionAndFlatTopLogprobs) {
  TokenDelta d;
  d.completion_index = 2;
  d.token_ids = {10, 11};
  d.logprobs = {-0.5f, -1.5f};
  d.top_logprobs = {{{10, -0.5f}, {3, -2.0f}}, {{11, -1.5f}, {4, -1.6f}}};
  rollout::worker::v1::GenerateEvent event;
  AppendDelta(d, 7, 3, &event);
  ASSERT_EQ(event.deltas_size(), 1);
  const auto& out = event.deltas(0);
  EXPECT_EQ(out.index(), 2);
  EXPECT_EQ(out.offset(), 7);
  EXPECT_EQ(out.weight_version(), 3u);
  EXPECT_THAT(out.token_ids(), ElementsAre(10, 11));
  EXPECT_THAT(out.logprobs(), ElementsAre(-0.5f, -1.5f));
  EXPECT_THAT(out.top_logprob_token_ids(), ElementsAre(10, 3, 11, 4));
  EXPECT_THAT(out.top_logprobs(), ElementsAre(-0.5f, -2.0f, -1.5f, -1.6f));
}

TEST(ConversionsTest, CompletionEndReportsVersionsReplayAndCause) {
  CompletionResult r;
  r.completion_index = 1;
  r.token_ids = {1, 2, 3};
  r.finish_reason = FinishReason::kAborted;
  r.abort_cause = AbortCause::kDeadline;
  r.weight_versions = {{2, 0}, {3, 2}};
  r.replay_ssm.applied = false;
  r.replay_ssm.fallback = FallbackReason::kPrefillOnly;
  r.num_preemptions = 1;
  r.time_to_first_token = absl::Milliseconds(20);
  r.e2e = absl::Milliseconds(120);
  const auto end = ToCompletionEnd(r);
  EXPECT_EQ(end.index(), 1);
  EXPECT_EQ(end.finish_reason(), rollout::v1::FINISH_REASON_ABORTED);
  EXPECT_EQ(end.abort_cause(), rollout::worker::v1::ABORT_CAUSE_DEADLINE);
  EXPECT_EQ(end.num_tokens(), 3);
  EXPECT_EQ(end.weight_version_start(), 2u);
  EXPECT_EQ(end.weight_version_end(), 3u);
  EXPECT_EQ(end.replay_ssm_fallback_reason(),
            rollout::v1::REPLAY_SSM_FALLBACK_REASON_PREFILL_ONLY);
  EXPECT_EQ(end.num_preemptions(), 1);
  EXPECT_DOUBLE_EQ(end.time_to_first_token_seconds(), 0.02);
  EXPECT_DOUBLE_EQ(end.e2e_seconds(), 0.12);
}

TEST(ConversionsTest, GroupDoneKeepsTheEngineStatus) {
  GroupSummary s;
  s.status = absl::InternalError("step failed");
  s.prompt_tokens = 4;
  s.prompt_tokens_computed = 4;
  s.completion_tokens = 16;
  const auto done = ToGroupDone(s);
  EXPECT_EQ(done.code(), static_cast<int>(absl::StatusCode::kInternal));
  EXPECT_EQ(done.message(), "step failed");
  EXPECT_EQ(done.completion_tokens(), 16);
}

TEST(ConversionsTest, StatsNameModesAndFallbackReasons) {
  EngineStats s;
  s.generation_tokens_ring = 5;
  s.generation_tokens_plain = 7;
  s.completions_by_mode[static_cast<int>(ReplayMode::kOn)] = 2;
  s.fallbacks[static_cast<int>(FallbackReason::kPrefillOnly)] = 1;
  s.state_slots = {3, 64, 300, 900};
  s.device_peak_bytes = 1 << 20;
  s.batch_size.Observe(4);
  const absl::Time now = absl::FromUnixSeconds(100);
  s.last_token_time = now - absl::Seconds(2);
  const auto out = ToWorkerStats(s, now);
  EXPECT_EQ(out.generation_tokens_ring(), 5u);
  EXPECT_EQ(out.generation_tokens_plain(), 7u);
  EXPECT_EQ(out.completions_by_mode().at("on"), 2u);
  EXPECT_EQ(out.completions_by_mode().at("default"), 0u);
  EXPECT_EQ(out.fallbacks().at("prefill_only"), 1u);
  EXPECT_EQ(out.fallbacks().count("none"), 0u);
  EXPECT_EQ(out.fallbacks().size(), 5u);
  EXPECT_EQ(out.state_slots().used(), 3);
  EXPECT_EQ(out.state_slots().peak_bytes(), 900);
  EXPECT_EQ(out.device_peak_bytes(), 1 << 20);
  EXPECT_DOUBLE_EQ(out.last_token_age_seconds(), 2.0);
  EXPECT_EQ(out.batch_size().count(), 1u);
  EXPECT_EQ(out.batch_size().counts_size(), out.batch_size().bounds_size() + 1);
  s.last_token_time = absl::InfinitePast();
  EXPECT_DOUBLE_EQ(ToWorkerStats(s, now).last_token_age_seconds(), -1.0);
}

}  // namespace
}  // namespace rollout::worker::service
