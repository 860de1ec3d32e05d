#include "server/workers/generate_assembler.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

using rollout::worker::v1::GenerateEvent;
using ::testing::ElementsAre;

// An event with one delta of `tokens` at `offset` for completion `index`
// (logprob = -token, top-1 row = the token itself).
GenerateEvent Delta(int index, int offset, std::vector<int> tokens,
                    uint64_t version = 1) {
  GenerateEvent e;
  auto* d = e.add_deltas();
  d->set_index(index);
  d->set_offset(offset);
  d->set_weight_version(version);
  for (int t : tokens) {
    d->add_token_ids(t);
    d->add_logprobs(-static_cast<float>(t));
    d->add_top_logprob_token_ids(t);
    d->add_top_logprobs(-static_cast<float>(t));
  }
  return e;
}

GenerateEvent End(
    int index, int num_tokens,
    rollout::v1::FinishReason reason = rollout::v1::FINISH_REASON_LENGTH) {
  GenerateEvent e;
  auto* end = e.add_ends();
  end->set_index(index);
  end->set_num_tokens(num_tokens);
  end->set_finish_reason(reason);
  end->set_weight_version_start(1);
  end->set_weight_version_end(1);
  return e;
}

GenerateEvent Done() {
  GenerateEvent e;
  e.mutable_done()->set_completion_tokens(1);
  return e;
}

TEST(GenerateAssemblerTest, UnaryKeepsTheLastAttemptOnly) {
  GenerateAssembler a(2, /*stream=*/false);
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5, 6})).ok());
  a.StartAttempt();  // the worker died; re-run
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5, 6, 7})).ok());
  ASSERT_TRUE(a.Apply(Delta(1, 0, {8})).ok());
  ASSERT_TRUE(a.Apply(End(0, 3)).ok());
  ASSERT_TRUE(a.Apply(End(1, 1, rollout::v1::FINISH_REASON_STOP)).ok());
  EXPECT_FALSE(a.done());
  auto none = a.Apply(Done());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(a.done());
  const auto c = a.Completions();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_THAT(c[0].token_ids(), ElementsAre(5, 6, 7));
  EXPECT_THAT(c[0].logprobs(), ElementsAre(-5, -6, -7));
  EXPECT_THAT(c[0].top_logprob_token_ids(), ElementsAre(5, 6, 7));
  EXPECT_EQ(c[0].finish_reason(), rollout::v1::FINISH_REASON_LENGTH);
  EXPECT_EQ(c[0].weight_version_end(), 1u);
  EXPECT_EQ(c[1].finish_reason(), rollout::v1::FINISH_REASON_STOP);
  EXPECT_EQ(a.completion_tokens(), 4);
}

TEST(GenerateAssemblerTest, StreamForwardsDeltasAndMergesTheEnd) {
  GenerateAssembler a(1, /*stream=*/true);
  auto first = a.Apply(Delta(0, 0, {5, 6}));
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].offset(), 0);
  EXPECT_THAT((*first)[0].token_ids(), ElementsAre(5, 6));
  GenerateEvent last = Delta(0, 2, {7});
  *last.add_ends() = End(0, 3).ends(0);
  auto second = a.Apply(last);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].offset(), 2);
  EXPECT_THAT((*second)[0].token_ids(), ElementsAre(7));
  EXPECT_EQ((*second)[0].finish_reason(), rollout::v1::FINISH_REASON_LENGTH);
}

TEST(GenerateAssemblerTest, StreamReRunSkipsWhatWasSentAndChecksIt) {
  GenerateAssembler a(2, /*stream=*/true);
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5, 6, 7})).ok());
  ASSERT_TRUE(a.Apply(Delta(1, 0, {9})).ok());
  ASSERT_TRUE(a.Apply(End(1, 1, rollout::v1::FINISH_REASON_STOP)).ok());
  a.StartAttempt();
  // The re-run repeats the prefix in different chunks: nothing goes out.
  auto skipped = a.Apply(Delta(0, 0, {5, 6}));
  ASSERT_TRUE(skipped.ok());
  EXPECT_TRUE(skipped->empty());
  // Completion 1 already ended: its repeat and end are not re-sent.
  auto again = a.Apply(Delta(1, 0, {9}));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  auto again_end = a.Apply(End(1, 1, rollout::v1::FINISH_REASON_STOP));
  ASSERT_TRUE(again_end.ok());
  EXPECT_TRUE(again_end->empty());
  // Crossing the sent prefix: only the new tail goes out, at offset 3.
  auto tail = a.Apply(Delta(0, 2, {7, 8}));
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].offset(), 3);
  EXPECT_THAT((*tail)[0].token_ids(), ElementsAre(8));
  EXPECT_THAT((*tail)[0].logprobs(), ElementsAre(-8));
  EXPECT_THAT((*tail)[0].top_logprob_token_ids(), ElementsAre(8));
  const auto c = a.Completions();
  EXPECT_THAT(c[0].token_ids(), ElementsAre(5, 6, 7, 8));
  EXPECT_EQ(c[0].finish_reason(), rollout::v1::FINISH_REASON_ABORTED);
  EXPECT_EQ(c[1].finish_reason(), rollout::v1::FINISH_REASON_STOP);
  EXPECT_EQ(a.completion_tokens(), 5);
}

TEST(GenerateAssemblerTest, StreamReRunThatContradictsIsAnError) {
  GenerateAssembler a(1, /*stream=*/true);
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5, 6})).ok());
  a.StartAttempt();
  auto diverged = a.Apply(Delta(0, 0, {5, 4}));
  EXPECT_EQ(diverged.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(diverged.status().message().find("diverged"),
            absl::string_view::npos);
}

TEST(GenerateAssemblerTest, StreamReRunEndingEarlyIsAnErrorUnlessAborted) {
  GenerateAssembler a(1, /*stream=*/true);
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5, 6})).ok());
  a.StartAttempt();
  EXPECT_FALSE(a.Apply(End(0, 1, rollout::v1::FINISH_REASON_STOP)).ok());
  GenerateAssembler b(1, /*stream=*/true);
  ASSERT_TRUE(b.Apply(Delta(0, 0, {5, 6})).ok());
  b.StartAttempt();
  auto aborted = b.Apply(End(0, 0, rollout::v1::FINISH_REASON_ABORTED));
  ASSERT_TRUE(aborted.ok());
  ASSERT_EQ(aborted->size(), 1u);
  EXPECT_EQ((*aborted)[0].offset(), 2);
}

TEST(GenerateAssemblerTest, BadOffsetsAndIndexesAreErrors) {
  GenerateAssembler a(1, /*stream=*/false);
  EXPECT_FALSE(a.Apply(Delta(0, 1, {5})).ok());
  EXPECT_FALSE(a.Apply(Delta(3, 0, {5})).ok());
  EXPECT_FALSE(a.Apply(End(2, 0)).ok());
}

TEST(GenerateAssemblerTest, AbortUnfinishedEndsWhatIsOpen) {
  GenerateAssembler a(2, /*stream=*/true);
  ASSERT_TRUE(a.Apply(Delta(0, 0, {5})).ok());
  ASSERT_TRUE(a.Apply(End(1, 0, rollout::v1::FINISH_REASON_STOP)).ok());
  const auto ends = a.AbortUnfinished();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].index(), 0);
  EXPECT_EQ(ends[0].offset(), 1);
  EXPECT_EQ(ends[0].finish_reason(), rollout::v1::FINISH_REASON_ABORTED);
  EXPECT_TRUE(a.AbortUnfinished().empty());
}

TEST(GenerateAssemblerTest, AnyEndedBy) {
  GenerateAssembler a(1, /*stream=*/false);
  GenerateEvent e = End(0, 0, rollout::v1::FINISH_REASON_ABORTED);
  e.mutable_ends(0)->set_abort_cause(rollout::worker::v1::ABORT_CAUSE_DEADLINE);
  ASSERT_TRUE(a.Apply(e).ok());
  EXPECT_TRUE(a.AnyEndedBy(rollout::worker::v1::ABORT_CAUSE_DEADLINE));
  EXPECT_FALSE(a.AnyEndedBy(rollout::worker::v1::ABORT_CAUSE_CANCELLED));
  EXPECT_EQ(a.Ends().size(), 1u);
}

}  // namespace
}  // namespace rollout::server::workers
