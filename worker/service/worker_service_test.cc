// The worker's internal API over the real engine and CPU backend (tiny
// model), through a real unix socket, with a blocking client.
#include "worker/service/worker_service.h"

#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "rollout/worker/v1/worker.grpc.pb.h"
#include "worker/service/device_choice.h"
#include "worker/service/worker_options.h"
#include "worker/service/worker_runtime.h"

namespace rollout::worker::service {
namespace {

namespace wv1 = ::rollout::worker::v1;

class WorkerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Unix socket paths are short (108 bytes); TEST_TMPDIR may be longer.
    char dir[] = "/tmp/worker-service-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    WorkerOptions options;
    options.socket_path = dir_ + "/w.sock";
    options.model_dir = "tests/data/tiny_qwen3_5";
    options.threads = 1;
    options.engine.max_num_seqs = 8;
    auto runtime = StartRuntime(options, DeviceChoice());
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    service_ =
        std::make_unique<WorkerService>(runtime_.executor.get(), runtime_.info);
    auto server = StartWorkerServer(service_.get(), options.socket_path);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = wv1::Worker::NewStub(grpc::CreateChannel(
        "unix:" + options.socket_path, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_) server_->Shutdown(absl::ToChronoTime(absl::Now()));
    if (runtime_.executor) runtime_.executor->Shutdown(ShutdownMode::kAbort);
    server_.reset();
    service_.reset();
    unlink((dir_ + "/w.sock").c_str());
    rmdir(dir_.c_str());
  }

  static wv1::GenerateRequest Request(const std::string& id, int n,
                                      int max_tokens) {
    wv1::GenerateRequest r;
    auto* g = r.mutable_request();
    g->set_request_id(id);
    for (int t : {1, 2, 3, 4}) g->add_prompt_token_ids(t);
    g->set_n(n);
    auto* s = g->mutable_sampling();
    s->set_temperature(0.0f);
    s->set_top_p(1.0f);
    s->set_top_k(0);
    s->set_min_p(0.0f);
    s->set_max_tokens(max_tokens);
    s->set_ignore_eos(true);
    s->set_seed(7);
    g->mutable_logprobs()->set_sampled(true);
    g->set_replay_ssm(rollout::v1::REPLAY_SSM_MODE_OFF);
    return r;
  }

  // Reads a whole Generate stream.
  struct Collected {
    bool accepted_first = false;
    std::vector<std::vector<int32_t>> tokens;
    std::vector<std::vector<float>> logprobs;
    std::vector<wv1::CompletionEnd> ends;
    wv1::GroupDone done;
    bool has_done = false;
    grpc::Status status;
  };
  Collected Collect(grpc::ClientReaderInterface<wv1::GenerateEvent>* reader,
                    int n) {
    Collected c;
    c.tokens.resize(n);
    c.logprobs.resize(n);
    wv1::GenerateEvent e;
    bool first = true;
    while (reader->Read(&e)) {
      if (first) c.accepted_first = e.accepted();
      first = false;
      for (const auto& d : e.deltas()) {
        EXPECT_EQ(d.offset(), static_cast<int>(c.tokens[d.index()].size()));
        c.tokens[d.index()].insert(c.tokens[d.index()].end(),
                                   d.token_ids().begin(), d.token_ids().end());
        c.logprobs[d.index()].insert(c.logprobs[d.index()].end(),
                                     d.logprobs().begin(), d.logprobs().end());
      }
      for (const auto& end : e.ends()) c.ends.push_back(end);
      if (e.has_done()) {
        c.done = e.done();
        c.has_done = true;
      }
    }
    c.status = reader->Finish();
    return c;
  }

  wv1::WorkerStats Stats() {
    grpc::ClientContext ctx;
    wv1::WorkerStats stats;
    EXPECT_TRUE(stub_->GetStats(&ctx, wv1::GetStatsRequest(), &stats).ok());
    return stats;
  }

  // Polls until no state slot is in use (the engine frees slots within one
  // step of a cancel).
  bool SlotsFreed() {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      if (Stats().state_slots().used() == 0) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  std::string dir_;
  WorkerRuntime runtime_;
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<wv1::Worker::Stub> stub_;
};

TEST_F(WorkerServiceTest, InfoDescribesModelDeviceAndCapacity) {
  grpc::ClientContext ctx;
  wv1::WorkerInfo info;
  ASSERT_TRUE(stub_->GetInfo(&ctx, wv1::GetInfoRequest(), &info).ok());
  EXPECT_EQ(info.model().model_type(), "qwen3_5");
  EXPECT_EQ(info.model().vocab_size(), 1031);
  EXPECT_EQ(info.model().name(), "tiny_qwen3_5");
  EXPECT_EQ(info.device(), "cpu");
  EXPECT_EQ(info.backend(), "cpu");
  EXPECT_EQ(info.max_n(), 8);
  EXPECT_EQ(info.capacity(), 8 + 1024);
  EXPECT_EQ(info.weight_version(), 0u);
  EXPECT_TRUE(info.replay_ssm_available());
  EXPECT_EQ(info.pid(), getpid());
}

TEST_F(WorkerServiceTest, GenerateStreamsAcceptedDeltasEndsAndDone) {
  grpc::ClientContext ctx;
  auto reader = stub_->Generate(&ctx, Request("g#1", 2, 8));
  Collected c = Collect(reader.get(), 2);
  ASSERT_TRUE(c.status.ok()) << c.status.error_message();
  EXPECT_TRUE(c.accepted_first);
  ASSERT_TRUE(c.has_done);
  EXPECT_EQ(c.done.code(), 0);
  EXPECT_EQ(c.done.completion_tokens(), 16);
  ASSERT_EQ(c.ends.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(c.tokens[i].size(), 8u);
    EXPECT_EQ(c.logprobs[i].size(), 8u);
    EXPECT_EQ(c.ends[i].num_tokens(), 8);
    EXPECT_EQ(c.ends[i].finish_reason(), rollout::v1::FINISH_REASON_LENGTH);
  }
  EXPECT_EQ(c.tokens[0], c.tokens[1]);  // greedy
}

TEST_F(WorkerServiceTest, InvalidRequestFailsBeforeAccepted) {
  grpc::ClientContext ctx;
  wv1::GenerateRequest r = Request("bad", 2, 8);
  r.mutable_request()->add_prompt_token_ids(5000);  // >= vocab
  auto reader = stub_->Generate(&ctx, r);
  Collected c = Collect(reader.get(), 2);
  EXPECT_EQ(c.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(c.has_done);
}

TEST_F(WorkerServiceTest, CancellingTheCallFreesTheSlots) {
  grpc::ClientContext ctx;
  auto reader = stub_->Generate(&ctx, Request("long", 4, 4000));
  wv1::GenerateEvent e;
  int tokens = 0;
  while (tokens == 0 && reader->Read(&e)) {
    for (const auto& d : e.deltas()) tokens += d.token_ids_size();
  }
  EXPECT_GT(tokens, 0);
  ctx.TryCancel();
  while (reader->Read(&e)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(SlotsFreed());
}

TEST_F(WorkerServiceTest, CancelRpcAbortsWithPartialTokens) {
  grpc::ClientContext ctx;
  auto reader = stub_->Generate(&ctx, Request("abort-me", 2, 4000));
  wv1::GenerateEvent e;
  ASSERT_TRUE(reader->Read(&e));
  ASSERT_TRUE(e.accepted());
  grpc::ClientContext cancel_ctx;
  wv1::CancelRequest cancel;
  cancel.add_request_ids("abort-me");
  cancel.add_request_ids("unknown");
  wv1::CancelResponse cancelled;
  ASSERT_TRUE(stub_->Cancel(&cancel_ctx, cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.cancelled(), 1);
  Collected c = Collect(reader.get(), 2);
  ASSERT_TRUE(c.status.ok());
  ASSERT_TRUE(c.has_done);
  ASSERT_EQ(c.ends.size(), 2u);
  for (const auto& end : c.ends) {
    EXPECT_EQ(end.finish_reason(), rollout::v1::FINISH_REASON_ABORTED);
    EXPECT_EQ(end.abort_cause(), wv1::ABORT_CAUSE_CANCELLED);
    EXPECT_LT(end.num_tokens(), 4000);
    EXPECT_EQ(end.num_tokens(), static_cast<int>(c.tokens[end.index()].size()));
  }
}

TEST_F(WorkerServiceTest, DeadlineAbortsInTheEngine) {
  grpc::ClientContext ctx;
  wv1::GenerateRequest r = Request("deadline", 2, 4000);
  r.set_deadline_unix_micros(
      absl::ToUnixMicros(absl::Now() + absl::Milliseconds(50)));
  auto reader = stub_->Generate(&ctx, r);
  Collected c = Collect(reader.get(), 2);
  ASSERT_TRUE(c.status.ok());
  ASSERT_EQ(c.ends.size(), 2u);
  for (const auto& end : c.ends) {
    EXPECT_EQ(end.abort_cause(), wv1::ABORT_CAUSE_DEADLINE);
  }
  EXPECT_TRUE(SlotsFreed());
}

TEST_F(WorkerServiceTest, ScoreReturnsOneLogprobPerToken) {
  grpc::ClientContext ctx;
  wv1::ScoreRequest r;
  auto* s = r.mutable_request();
  s->set_request_id("score#1");
  for (int t : {1, 2, 3}) s->add_prompt_token_ids(t);
  auto* first = s->add_completions();
  for (int t : {4, 5, 6}) first->add_token_ids(t);
  s->add_completions()->add_token_ids(7);
  s->set_top_logprobs(2);
  wv1::ScoreResult result;
  ASSERT_TRUE(stub_->Score(&ctx, r, &result).ok());
  ASSERT_EQ(result.completions_size(), 2);
  EXPECT_EQ(result.completions(0).logprobs_size(), 3);
  EXPECT_EQ(result.completions(0).top_logprob_token_ids_size(), 6);
  EXPECT_EQ(result.completions(1).logprobs_size(), 1);
  EXPECT_FALSE(result.aborted());
}

TEST_F(WorkerServiceTest, ReconfigureAppliesGenerationsInOrder) {
  auto call = [&](int64_t generation, bool enabled, int auto_min,
                  wv1::ReconfigureResponse* response) {
    grpc::ClientContext ctx;
    wv1::ReconfigureRequest request;
    request.set_config_generation(generation);
    request.set_replay_ssm_enabled(enabled);
    request.set_replay_auto_min_batch(auto_min);
    return stub_->Reconfigure(&ctx, request, response);
  };
  wv1::ReconfigureResponse response;
  ASSERT_TRUE(call(3, false, 2, &response).ok());
  EXPECT_TRUE(response.applied());
  // Older than what is in effect: ignored, still OK (it was overtaken).
  ASSERT_TRUE(call(2, true, 2, &response).ok());
  EXPECT_FALSE(response.applied());
  ASSERT_TRUE(call(3, true, 2, &response).ok());
  EXPECT_FALSE(response.applied());
  ASSERT_TRUE(call(4, true, 1, &response).ok());
  EXPECT_TRUE(response.applied());
  // Invalid values never reach the engine.
  grpc::Status bad = call(5, true, 0, &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("auto_min_batch"), std::string::npos);
}

TEST_F(WorkerServiceTest, PauseResumeAndUpdateWeights) {
  {
    grpc::ClientContext ctx;
    wv1::PauseRequest pause;
    pause.set_mode(rollout::v1::PAUSE_MODE_KEEP);
    wv1::PauseResponse response;
    ASSERT_TRUE(stub_->Pause(&ctx, pause, &response).ok());
    EXPECT_EQ(Stats().paused(), rollout::v1::PAUSE_MODE_KEEP);
  }
  {
    grpc::ClientContext ctx;
    wv1::ResumeResponse response;
    ASSERT_TRUE(stub_->Resume(&ctx, wv1::ResumeRequest(), &response).ok());
  }
  grpc::ClientContext ctx;
  wv1::UpdateWeightsRequest update;
  update.set_path("tests/data/tiny_qwen3_5");
  update.set_version(5);
  wv1::UpdateWeightsResponse updated;
  ASSERT_TRUE(stub_->UpdateWeights(&ctx, update, &updated).ok());
  EXPECT_EQ(updated.weight_version(), 5u);
  EXPECT_EQ(Stats().weight_version(), 5u);
  grpc::ClientContext gen_ctx;
  auto reader = stub_->Generate(&gen_ctx, Request("after", 1, 2));
  Collected c = Collect(reader.get(), 1);
  ASSERT_EQ(c.ends.size(), 1u);
  EXPECT_EQ(c.ends[0].weight_version_start(), 5u);
  // A wrong path leaves the weights serving and says why.
  grpc::ClientContext bad_ctx;
  update.set_path("/nonexistent");
  update.set_version(6);
  EXPECT_FALSE(stub_->UpdateWeights(&bad_ctx, update, &updated).ok());
  EXPECT_EQ(Stats().weight_version(), 5u);
}

TEST_F(WorkerServiceTest, DrainingRefusesNewWork) {
  service_->StartDraining();
  grpc::ClientContext ctx;
  auto reader = stub_->Generate(&ctx, Request("late", 1, 2));
  Collected c = Collect(reader.get(), 1);
  EXPECT_EQ(c.status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace rollout::worker::service
