#include "worker/engine/result_stream.h"

#include <atomic>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

TokenDelta Delta(int c, std::vector<int32_t> tokens) {
  TokenDelta d;
  d.completion_index = c;
  d.token_ids = tokens;
  d.logprobs.assign(tokens.size(), -1.0f);
  return d;
}

TEST(ResultStreamTest, OrderAndMergingOfUnreadDeltas) {
  auto ch = std::make_shared<ResultChannel>("r", 2);
  ch->PushDelta(Delta(0, {1}));
  ch->PushDelta(Delta(1, {7}));
  ch->PushDelta(Delta(0, {2, 3}));  // merged into the unread delta of 0
  CompletionResult c0;
  c0.completion_index = 0;
  ch->PushCompletion(c0);
  ch->PushDelta(Delta(1, {8}));  // merged into 1's unread delta
  CompletionResult c1;
  c1.completion_index = 1;
  ch->PushCompletion(c1);
  GroupSummary s;
  s.request_id = "r";
  ch->PushGroupDone(s);
  EXPECT_TRUE(ch->closed());
  EXPECT_FALSE(ch->done());
  EXPECT_EQ(ch->buffered_tokens(), 5);  // 3 + 2 delta tokens, empty finals

  auto ev = ch->TryPop();
  ASSERT_TRUE(ev.has_value());
  const auto& d0 = std::get<TokenDelta>(*ev);
  EXPECT_EQ(d0.completion_index, 0);
  EXPECT_EQ(d0.token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(d0.logprobs.size(), 3u);
  ev = ch->TryPop();
  EXPECT_EQ(std::get<TokenDelta>(*ev).token_ids, (std::vector<int32_t>{7, 8}));
  ev = ch->TryPop();
  EXPECT_EQ(std::get<CompletionResult>(*ev).completion_index, 0);
  ev = ch->TryPop();
  EXPECT_EQ(std::get<CompletionResult>(*ev).completion_index, 1);
  ev = ch->TryPop();
  EXPECT_EQ(std::get<GroupSummary>(*ev).request_id, "r");
  EXPECT_TRUE(ch->done());
  EXPECT_EQ(ch->buffered_tokens(), 0);
  EXPECT_TRUE(absl::IsOutOfRange(ch->Next(absl::Milliseconds(1)).status()));
}

TEST(ResultStreamTest, NextTimesOutWithoutEvents) {
  auto ch = std::make_shared<ResultChannel>("r", 1);
  EXPECT_TRUE(
      absl::IsDeadlineExceeded(ch->Next(absl::Milliseconds(1)).status()));
}

TEST(ResultStreamTest, ConsumerOnAnotherThreadSeesEverything) {
  auto ch = std::make_shared<ResultChannel>("r", 1);
  std::thread producer([ch] {
    for (int i = 0; i < 1000; ++i) ch->PushDelta(Delta(0, {i}));
    CompletionResult c;
    ch->PushCompletion(c);
    ch->PushGroupDone(GroupSummary{});
  });
  ResultStream stream(ch, nullptr);
  absl::StatusOr<CollectedResults> all = CollectAll(stream, absl::Seconds(30));
  producer.join();
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<int32_t> tokens;
  for (const TokenDelta& d : all->deltas) {
    tokens.insert(tokens.end(), d.token_ids.begin(), d.token_ids.end());
  }
  ASSERT_EQ(tokens.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(tokens[i], i);
  EXPECT_EQ(all->completions.size(), 1u);
}

TEST(ResultStreamTest, DroppingAnUnfinishedStreamCancels) {
  auto ch = std::make_shared<ResultChannel>("r", 1);
  int cancels = 0;
  {
    ResultStream s(ch, [&] { ++cancels; });
  }
  EXPECT_EQ(cancels, 1);
  ch->PushGroupDone(GroupSummary{});
  {
    ResultStream s(ch, [&] { ++cancels; });
  }
  EXPECT_EQ(cancels, 1);  // finished streams do not cancel
}

TEST(ResultStreamTest, ListenerRunsOnPush) {
  auto ch = std::make_shared<ResultChannel>("r", 1);
  std::atomic<int> calls{0};
  ch->SetListener([&] { ++calls; });
  ch->PushDelta(Delta(0, {1}));
  ch->PushGroupDone(GroupSummary{});
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace rollout::worker
