// The worker pool as a Dispatcher (no gRPC front end), over one real
// rollout-worker process serving the tiny model. End-to-end behaviour
// (crashes, deadlines, metrics, fan-out) is in tests/e2e; this covers the
// Dispatcher contract: UNAVAILABLE before a worker is ready, results through
// the sink, Cancel never finishing inline, Abort NOT_FOUND, state and model.
#include "server/workers/worker_pool.h"

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "common/mutex.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/config/config_defaults.h"
#include "server/workers/worker_binary.h"

namespace rollout::server::workers {
namespace {

class RecordingSink : public GenerateSink {
 public:
  void Write(rollout::v1::GenerateStreamChunk chunk) override {
    rollout::MutexLock lock(&mu_);
    chunks_.push_back(std::move(chunk));
  }
  void Finish(absl::StatusOr<rollout::v1::GenerateResponse> result) override {
    {
      rollout::MutexLock lock(&mu_);
      result_ = std::move(result);
      finish_thread_ = std::this_thread::get_id();
      // Inline: on the thread that is inside Cancel. (Another thread may
      // finish the request while the caller is still in Cancel: that is
      // allowed, and under load it happens.)
      finished_during_cancel_ = cancelling.load() == finish_thread_;
    }
    done_.Notify();
  }
  absl::StatusOr<rollout::v1::GenerateResponse> Wait() {
    EXPECT_TRUE(done_.WaitForNotificationWithTimeout(absl::Seconds(60)));
    rollout::MutexLock lock(&mu_);
    return result_;
  }

  // The thread inside Cancel (default id: none).
  std::atomic<std::thread::id> cancelling{};
  rollout::Mutex mu_;
  std::vector<rollout::v1::GenerateStreamChunk> chunks_ ABSL_GUARDED_BY(mu_);
  absl::StatusOr<rollout::v1::GenerateResponse> result_ ABSL_GUARDED_BY(mu_) =
      absl::UnknownError("not finished");
  std::thread::id finish_thread_ ABSL_GUARDED_BY(mu_);
  bool finished_during_cancel_ ABSL_GUARDED_BY(mu_) = false;
  rollout::Notification done_;
};

std::shared_ptr<const rollout::v1::GenerateRequest> Request(int n,
                                                            int max_tokens) {
  auto r = std::make_shared<rollout::v1::GenerateRequest>();
  r->set_request_id("req");
  for (int t : {1, 2, 3}) r->add_prompt_token_ids(t);
  r->set_n(n);
  auto* s = r->mutable_sampling();
  s->set_temperature(1.0f);
  s->set_top_p(1.0f);
  s->set_top_k(0);
  s->set_min_p(0.0f);
  s->set_max_tokens(max_tokens);
  s->set_ignore_eos(true);
  s->set_seed(5);
  r->set_replay_ssm(rollout::v1::REPLAY_SSM_MODE_OFF);
  return r;
}

class WorkerPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<prometheus::Registry>();
    auto m = metrics::RolloutMetrics::Create(*registry_, {"0", "test", "none"});
    ASSERT_TRUE(m.ok());
    metrics_ = *std::move(m);
    auto snapshot = std::make_shared<ConfigSnapshot>();
    ApplyConfigDefaults(&snapshot->config);
    snapshot->config.mutable_workers()->add_devices("cpu");
    DispatcherEnv env;
    env.config = snapshot;
    env.metrics = metrics_.get();
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    env.model_dir = std::string(cwd) + "/tests/data/tiny_qwen3_5";
    env.state_changed = [this] { state_changes_.fetch_add(1); };
    WorkerPoolOptions options;
    auto binary = FindWorkerBinary("", WorkerBinaryCandidates());
    ASSERT_TRUE(binary.ok()) << binary.status();
    options.binary = *binary;
    auto pool = WorkerPool::Create(env, options);
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
  }

  void TearDown() override {
    if (pool_ != nullptr) pool_->Shutdown(absl::Now());
  }

  bool WaitReady() {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      if (pool_->State().ready_workers == 1) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  CallContext Context() {
    CallContext c;
    c.arrival = absl::Now();
    return c;
  }

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<metrics::RolloutMetrics> metrics_;
  std::atomic<int> state_changes_{0};
  std::unique_ptr<WorkerPool> pool_;
};

TEST_F(WorkerPoolTest, UnavailableUntilAWorkerIsReadyThenServes) {
  // The worker is still loading its model.
  RecordingSink early;
  auto early_handle = pool_->Generate(Request(2, 4), false, Context(), &early);
  EXPECT_EQ(early.Wait().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(pool_->Model(), nullptr);

  ASSERT_TRUE(WaitReady());
  // Health is told right after the state changed.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (state_changes_.load() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GE(state_changes_.load(), 1);
  ASSERT_NE(pool_->Model(), nullptr);
  EXPECT_EQ(pool_->Model()->vocab_size(), 1031);
  const DispatcherState state = pool_->State();
  ASSERT_EQ(state.workers.size(), 1u);
  EXPECT_EQ(state.workers[0].state(), rollout::v1::WORKER_STATE_READY);
  EXPECT_EQ(state.backend, "cpu");
  EXPECT_TRUE(state.replay_ssm_available);

  RecordingSink sink;
  auto handle = pool_->Generate(Request(3, 6), false, Context(), &sink);
  auto result = sink.Wait();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->completions_size(), 3);
  for (const auto& c : result->completions()) {
    EXPECT_EQ(c.token_ids_size(), 6);
    EXPECT_EQ(c.finish_reason(), rollout::v1::FINISH_REASON_LENGTH);
  }
  EXPECT_EQ(result->worker(), "0");
  EXPECT_EQ(result->request_id(), "req");
  handle->Cancel();  // after the finish: a no-op
}

TEST_F(WorkerPoolTest, StreamWritesDeltasThenALastChunk) {
  ASSERT_TRUE(WaitReady());
  RecordingSink sink;
  auto handle = pool_->Generate(Request(2, 5), true, Context(), &sink);
  ASSERT_TRUE(sink.Wait().ok());
  rollout::MutexLock lock(&sink.mu_);
  ASSERT_FALSE(sink.chunks_.empty());
  int tokens = 0;
  for (const auto& chunk : sink.chunks_) {
    for (const auto& d : chunk.deltas()) tokens += d.token_ids_size();
  }
  EXPECT_EQ(tokens, 10);
  EXPECT_EQ(sink.chunks_.front().seed(), 5u);
  EXPECT_TRUE(sink.chunks_.back().done());
  EXPECT_EQ(sink.chunks_.back().usage().completion_tokens(), 10);
}

TEST_F(WorkerPoolTest, CancelFinishesLaterNeverInline) {
  ASSERT_TRUE(WaitReady());
  RecordingSink sink;
  auto handle = pool_->Generate(Request(2, 3000), false, Context(), &sink);
  sink.cancelling.store(std::this_thread::get_id());
  handle->Cancel();
  sink.cancelling.store(std::thread::id());
  EXPECT_EQ(sink.Wait().status().code(), absl::StatusCode::kCancelled);
  rollout::MutexLock lock(&sink.mu_);
  EXPECT_FALSE(sink.finished_during_cancel_);
}

TEST_F(WorkerPoolTest, AbortOfAnUnknownIdIsNotFound) {
  ASSERT_TRUE(WaitReady());
  rollout::v1::AbortRequest request;
  request.set_request_id("nope");
  rollout::Notification done;
  absl::Status status;
  pool_->Abort(request, [&](absl::StatusOr<rollout::v1::AbortResponse> r) {
    status = r.status();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rollout::server::workers
