// Executor tests: threading, streams, control commands. Steps are gated by a
// backend wrapper the test controls, so no test relies on timing.
#include "worker/engine/executor.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "gtest/gtest.h"
#include "worker/engine/engine_test_util.h"
#include "worker/engine/fake_backend.h"

namespace rollout::worker {
namespace {

// A FakeBackend whose Forward waits for a permit from the test.
class GatedBackend : public model::Backend {
 public:
  explicit GatedBackend(FakeBackendOptions o) : fake_(std::move(o)) {}

  // Lets `n` more Forward calls run (-1: all from now on).
  void Grant(int n) {
    MutexLock lock(&mu_);
    permits_ = n < 0 ? -1 : std::max(permits_, 0) + n;
  }
  // Blocks until `n` Forward calls have started (their batch is built: the
  // requests in it are admitted).
  void AwaitStarted(int64_t n) {
    MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return started_ >= n;
    };
    mu_.Await(absl::Condition(&done));
  }
  // Blocks until `n` Forward calls have completed.
  void AwaitForwards(int64_t n) {
    MutexLock lock(&mu_);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return completed_ >= n;
    };
    mu_.Await(absl::Condition(&done));
  }

  const model::ModelInfo& info() const override { return fake_.info(); }
  model::BackendCapabilities capabilities() const override {
    return fake_.capabilities();
  }
  absl::StatusOr<model::PoolFootprint> Footprint(int l, int b) const override {
    return fake_.Footprint(l, b);
  }
  absl::Status InitPools(const model::PoolConfig& p) override {
    return fake_.InitPools(p);
  }
  absl::Status ResetState(int s) override { return fake_.ResetState(s); }
  absl::Status CopyState(int a, int b) override {
    return fake_.CopyState(a, b);
  }
  absl::Status CopyKvBlock(int a, int b) override {
    return fake_.CopyKvBlock(a, b);
  }
  absl::Status FlushRing(int s, int r, int w) override {
    return fake_.FlushRing(s, r, w);
  }
  absl::Status Forward(const model::ForwardBatch& b,
                       model::ForwardOutput* out) override {
    {
      MutexLock lock(&mu_);
      ++started_;
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return permits_ != 0;
      };
      mu_.Await(absl::Condition(&ready));
      if (permits_ > 0) --permits_;
    }
    absl::Status s = fake_.Forward(b, out);
    MutexLock lock(&mu_);
    ++completed_;
    return s;
  }
  absl::StatusOr<model::StateSnapshot> ExportState(
      int s, absl::Span<const int32_t> b) override {
    return fake_.ExportState(s, b);
  }
  absl::Status ImportState(const model::StateSnapshot& snap, int s,
                           absl::Span<const int32_t> b) override {
    return fake_.ImportState(snap, s, b);
  }
  absl::Status LoadWeights(const std::string& d) override {
    return fake_.LoadWeights(d);
  }
  model::MemoryStats memory() const override { return fake_.memory(); }

 private:
  FakeBackend fake_;
  Mutex mu_;
  int permits_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
};

std::vector<int32_t> Prompt(int len, int salt = 0) {
  std::vector<int32_t> p(len);
  for (int i = 0; i < len; ++i) p[i] = 1 + (i * 5 + salt) % 30;
  return p;
}

struct Fixture {
  explicit Fixture(EngineOptions eo = SmallEngineOptions()) {
    auto gated = std::make_unique<GatedBackend>(fo);
    gate = gated.get();
    auto e = Executor::Create(std::move(gated), eo);
    EXPECT_TRUE(e.ok()) << e.status();
    exec = std::move(*e);
  }
  // The engine thread has applied every command posted before this call and
  // published the stats of the step before it.
  void Barrier() {
    ASSERT_TRUE(exec->Pause(PauseMode::kKeep, absl::Seconds(60)).ok());
    exec->Resume();
  }
  FakeBackendOptions fo;
  GatedBackend* gate;
  std::unique_ptr<Executor> exec;
};

CollectedResults Collect(ResultStream& s) {
  absl::StatusOr<CollectedResults> r = CollectAll(s, absl::Seconds(60));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CollectedResults{};
}

TEST(ExecutorTest, GroupStreamsDeltasThenFinalsThenSummary) {
  Fixture f;
  GroupRequest r = MakeRequest("g", Prompt(9), 4, 12, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto stream = f.exec->Enqueue(r);
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ((*stream)->request_id(), "g");
  std::vector<std::vector<int32_t>> streamed(4);
  std::vector<bool> final_seen(4, false);
  bool summary_seen = false;
  while (true) {
    absl::StatusOr<StreamEvent> ev = (*stream)->Next(absl::Seconds(60));
    if (absl::IsOutOfRange(ev.status())) break;
    ASSERT_TRUE(ev.ok()) << ev.status();
    ASSERT_FALSE(summary_seen);
    if (auto* d = std::get_if<TokenDelta>(&*ev)) {
      ASSERT_FALSE(final_seen[d->completion_index]);
      auto& v = streamed[d->completion_index];
      v.insert(v.end(), d->token_ids.begin(), d->token_ids.end());
    } else if (auto* c = std::get_if<CompletionResult>(&*ev)) {
      final_seen[c->completion_index] = true;
      EXPECT_EQ(c->token_ids, streamed[c->completion_index]);
      EXPECT_EQ(c->logprobs, ReferenceLogprobs(f.fo, Prompt(9), c->token_ids));
    } else {
      for (bool b : final_seen) EXPECT_TRUE(b);
      summary_seen = true;
      EXPECT_EQ(std::get<GroupSummary>(*ev).prompt_tokens_computed, 9);
    }
  }
  EXPECT_TRUE(summary_seen);
}

TEST(ExecutorTest, ConcurrentProducersAndConsumers) {
  EngineOptions eo = SmallEngineOptions();
  eo.max_num_seqs = 32;
  Fixture f(eo);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        GroupRequest r = MakeRequest(absl::StrCat("t", t, "-", i),
                                     Prompt(3 + i, t), 2, 5 + i, 1.0f, i);
        auto s = f.exec->Enqueue(r);
        ASSERT_TRUE(s.ok()) << s.status();
        CollectedResults res = Collect(**s);
        ASSERT_EQ(res.completions.size(), 2u);
        for (const CompletionResult& c : res.completions) {
          ASSERT_EQ(c.logprobs,
                    ReferenceLogprobs(f.fo, Prompt(3 + i, t), c.token_ids));
        }
        ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
  f.Barrier();
  const EngineStats st = f.exec->Stats();
  EXPECT_EQ(st.groups_finished, 40u);
  EXPECT_EQ(st.state_slots.used, 0);
  EXPECT_EQ(st.requests_running, 0);
}

TEST(ExecutorTest, DroppingAStreamCancelsItsRequest) {
  Fixture f;
  f.gate->Grant(0);  // nothing runs yet
  GroupRequest r = MakeRequest("dropped", Prompt(9), 2, 200, 1.0f, 3);
  r.sampling.ignore_eos = true;
  r.stream_deltas = false;
  {
    auto s = f.exec->Enqueue(r);
    ASSERT_TRUE(s.ok());
  }  // dropped at once
  auto next = f.exec->Enqueue(MakeRequest("next", Prompt(4), 1, 3, 1.0f, 1));
  ASSERT_TRUE(next.ok());
  f.gate->Grant(-1);
  Collect(**next);  // the cancel was posted before "next"
  f.Barrier();
  const EngineStats st = f.exec->Stats();
  EXPECT_EQ(st.completions_by_finish[static_cast<int>(FinishReason::kAborted)],
            2u);
  EXPECT_EQ(st.state_slots.used, 0);
  EXPECT_TRUE(absl::IsNotFound(f.exec->Cancel("dropped")));
}

TEST(ExecutorTest, CancelReturnsPartialTokens) {
  Fixture f;
  f.gate->Grant(3);
  GroupRequest r = MakeRequest("c", Prompt(9), 2, 200, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto s = f.exec->Enqueue(r);
  ASSERT_TRUE(s.ok());
  f.gate->AwaitForwards(3);  // prefill + 2 decode steps
  ASSERT_TRUE(f.exec->Cancel("c").ok());
  f.gate->Grant(-1);
  CollectedResults res = Collect(**s);
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.finish_reason, FinishReason::kAborted);
    EXPECT_EQ(c.abort_cause, AbortCause::kCancelled);
    EXPECT_GE(c.token_ids.size(), 3u);
    EXPECT_LT(c.token_ids.size(), 200u);
  }
}

TEST(ExecutorTest, PauseKeepUpdateWeightsResume) {
  Fixture f;
  f.gate->Grant(3);
  GroupRequest r = MakeRequest("k", Prompt(9), 2, 10, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto s = f.exec->Enqueue(r);
  ASSERT_TRUE(s.ok());
  f.gate->AwaitForwards(3);
  // The engine thread is now blocked in the 4th Forward; the pause is applied
  // right after it.
  auto paused = std::make_shared<Notification>();
  f.exec->PauseAsync(PauseMode::kKeep, [paused](absl::Status st) {
    EXPECT_TRUE(st.ok()) << st;
    paused->Notify();
  });
  f.gate->Grant(1);
  paused->WaitForNotification();
  EXPECT_EQ(f.exec->Stats().paused, 3);
  EXPECT_FALSE(f.exec->UpdateWeights("bad path").ok());
  ASSERT_TRUE(f.exec->UpdateWeights("fake:5").ok());
  EXPECT_EQ(f.exec->Stats().weight_version, 1);
  f.gate->Grant(-1);
  f.exec->Resume();
  CollectedResults res = Collect(**s);
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.token_ids.size(), 10u);
    ASSERT_EQ(c.weight_versions.size(), 2u);
    EXPECT_EQ(c.weight_versions[0].version, 0);
    EXPECT_EQ(c.weight_versions[1].version, 1);
    // 3 or 4 tokens under version 0: the pause lands right after the 3rd
    // step, or after the 4th if the engine thread had already entered it.
    EXPECT_GE(c.weight_versions[1].first_token, 3);
    EXPECT_LE(c.weight_versions[1].first_token, 4);
  }
  const EngineStats st = f.exec->Stats();
  EXPECT_EQ(st.weight_updates_ok, 1u);
  EXPECT_EQ(st.weight_updates_rejected, 1u);
}

TEST(ExecutorTest, PauseWaitSettlesWhenRunningFinish) {
  EngineOptions eo = SmallEngineOptions();
  eo.max_num_seqs = 2;
  Fixture f(eo);
  f.gate->Grant(1);
  GroupRequest r = MakeRequest("run", Prompt(9), 2, 8, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto run = f.exec->Enqueue(r);
  f.gate->AwaitForwards(1);  // admitted and prefilled
  auto queued =
      f.exec->Enqueue(MakeRequest("queued", Prompt(4), 1, 3, 1.0f, 1));
  ASSERT_TRUE(run.ok() && queued.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      f.exec->Pause(PauseMode::kWait, absl::Milliseconds(1))));
  f.gate->Grant(-1);
  ASSERT_TRUE(f.exec->Pause(PauseMode::kWait, absl::Seconds(60)).ok());
  EXPECT_EQ(Collect(**run).completions.size(), 2u);
  EXPECT_FALSE((*queued)->TryPop().has_value());  // held while paused
  EXPECT_EQ(f.exec->Stats().requests_waiting, 1);
  f.exec->Resume();
  EXPECT_EQ(Collect(**queued).completions.size(), 1u);
}

TEST(ExecutorTest, PauseAbortEndsAdmittedRequests) {
  Fixture f;
  f.gate->Grant(2);
  GroupRequest r = MakeRequest("a", Prompt(9), 2, 100, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto s = f.exec->Enqueue(r);
  ASSERT_TRUE(s.ok());
  f.gate->AwaitForwards(2);
  auto paused = std::make_shared<Notification>();
  f.exec->PauseAsync(PauseMode::kAbort, [paused](absl::Status st) {
    EXPECT_TRUE(st.ok());
    paused->Notify();
  });
  f.gate->Grant(-1);
  paused->WaitForNotification();
  for (const CompletionResult& c : Collect(**s).completions) {
    EXPECT_EQ(c.abort_cause, AbortCause::kPaused);
    EXPECT_FALSE(c.token_ids.empty());
  }
  f.exec->Resume();
}

TEST(ExecutorTest, EnqueueErrors) {
  EngineOptions eo = SmallEngineOptions();
  eo.max_waiting_groups = 1;
  eo.max_num_seqs = 1;
  Fixture f(eo);
  f.gate->Grant(0);
  EXPECT_TRUE(absl::IsInvalidArgument(
      f.exec->Enqueue(MakeRequest("x", {}, 1, 3, 1.0f, 1)).status()));
  GroupRequest bad = MakeRequest("x", {1}, 1, 3, 1.0f, 1);
  bad.sampling.top_p = 2.0f;
  EXPECT_TRUE(absl::IsInvalidArgument(f.exec->Enqueue(bad).status()));
  auto a = f.exec->Enqueue(MakeRequest("a", {1}, 1, 3, 1.0f, 1));
  ASSERT_TRUE(a.ok());
  f.gate->AwaitStarted(1);  // "a" is admitted: the waiting queue is empty
  EXPECT_TRUE(absl::IsAlreadyExists(
      f.exec->Enqueue(MakeRequest("a", {1}, 1, 3, 1.0f, 1)).status()));
  auto b = f.exec->Enqueue(MakeRequest("", {1}, 1, 3, 1.0f, 1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->request_id(), "auto-1");
  // "auto-1" waits (no free slot): the queue of 1 is full.
  EXPECT_TRUE(absl::IsResourceExhausted(
      f.exec->Enqueue(MakeRequest("c", {1}, 1, 3, 1.0f, 1)).status()));
  EXPECT_EQ(f.exec->Stats().rejected_requests, 4u);
  f.gate->Grant(-1);
  Collect(**a);
  Collect(**b);
}

TEST(ExecutorTest, DeadlineWakesAnIdleEngine) {
  Fixture f;
  GroupRequest r = MakeRequest("d", Prompt(4), 1, 3, 1.0f, 1);
  r.min_weight_version = 5;  // never admitted: only the deadline ends it
  r.deadline = absl::Now() + absl::Milliseconds(50);
  auto s = f.exec->Enqueue(r);
  ASSERT_TRUE(s.ok());
  CollectedResults res = Collect(**s);
  EXPECT_EQ(res.completions[0].abort_cause, AbortCause::kDeadline);
  EXPECT_TRUE(res.completions[0].token_ids.empty());
}

TEST(ExecutorTest, ShutdownDrainFinishesEverythingThenRefuses) {
  Fixture f;
  f.gate->Grant(0);
  std::vector<std::unique_ptr<ResultStream>> streams;
  for (int i = 0; i < 5; ++i) {
    auto s = f.exec->Enqueue(
        MakeRequest(absl::StrCat("s", i), Prompt(5, i), 2, 6, 1.0f, i));
    ASSERT_TRUE(s.ok());
    streams.push_back(std::move(*s));
  }
  f.gate->Grant(-1);
  f.exec->Shutdown(ShutdownMode::kDrain);
  for (auto& s : streams) {
    CollectedResults res = Collect(*s);
    for (const CompletionResult& c : res.completions) {
      EXPECT_NE(c.finish_reason, FinishReason::kAborted);
    }
  }
  EXPECT_TRUE(absl::IsUnavailable(
      f.exec->Enqueue(MakeRequest("late", {1}, 1, 3, 1.0f, 1)).status()));
  EXPECT_FALSE(f.exec->UpdateWeights("fake:3").ok());
  f.exec->Shutdown(ShutdownMode::kAbort);  // idempotent
}

TEST(ExecutorTest, ShutdownAbortEndsRequestsWithPartialTokens) {
  Fixture f;
  f.gate->Grant(2);
  GroupRequest r = MakeRequest("a", Prompt(9), 2, 100, 1.0f, 3);
  r.sampling.ignore_eos = true;
  auto s = f.exec->Enqueue(r);
  ASSERT_TRUE(s.ok());
  f.gate->AwaitForwards(2);
  // Freeze the request in flight (the pause lands after the step the engine
  // thread may be blocked in), then stop.
  auto paused = std::make_shared<Notification>();
  f.exec->PauseAsync(PauseMode::kKeep,
                     [paused](absl::Status) { paused->Notify(); });
  f.gate->Grant(1);
  paused->WaitForNotification();
  f.exec->Shutdown(ShutdownMode::kAbort);
  for (const CompletionResult& c : Collect(**s).completions) {
    EXPECT_EQ(c.abort_cause, AbortCause::kShutdown);
  }
}

TEST(ExecutorTest, ListenerDrivenConsumer) {
  Fixture f;
  f.gate->Grant(0);
  auto s = f.exec->Enqueue(MakeRequest("l", Prompt(5), 3, 7, 1.0f, 2));
  ASSERT_TRUE(s.ok());
  ResultStream* stream = s->get();
  Mutex mu;
  int finals = 0;
  bool done = false;
  stream->SetListener([&] {
    // Runs on the engine thread: pop without blocking.
    while (auto ev = stream->TryPop()) {
      MutexLock lock(&mu);
      if (std::holds_alternative<CompletionResult>(*ev)) ++finals;
      if (std::holds_alternative<GroupSummary>(*ev)) done = true;
    }
  });
  f.gate->Grant(-1);
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(&done));
    EXPECT_EQ(finals, 3);
  }
  // The listener may still be returning on the engine thread: stop it
  // before its captures go out of scope.
  f.exec->Shutdown(ShutdownMode::kAbort);
}

}  // namespace
}  // namespace rollout::worker
