// RolloutServer in-process on port 0, driven over a real gRPC channel: the
// Rollout and Admin services, validation on the wire, routing through the
// Dispatcher interface (with a scripted fake), cancellation, pause, admission
// and authenticated reload.
#include "server/rollout_server.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rollout/v1/admin.grpc.pb.h"
#include "rollout/v1/rollout.grpc.pb.h"
#include "server/admin_service.h"
#include "server/reactor_util.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

// A Dispatcher that answers from other threads, as the worker pool will.
// Generate: unary -> one completion echoing the prompt; stream -> two chunks.
// Requests whose request_id starts with "hold" wait until cancelled.
class FakeDispatcher final : public Dispatcher {
 public:
  ~FakeDispatcher() override {
    std::vector<std::thread> threads;
    {
      rollout::MutexLock lock(&mu_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
  }

  std::unique_ptr<CallHandle> Generate(
      std::shared_ptr<const v1::GenerateRequest> request, bool stream,
      const CallContext& context, GenerateSink* sink) override {
    {
      rollout::MutexLock lock(&mu_);
      seen_.push_back(*request);
    }
    auto handle = std::make_unique<Handle>();
    Handle* h = handle.get();
    auto cancelled = h->cancelled;
    // gRPC calls Generate from several threads at once.
    rollout::MutexLock lock(&mu_);
    threads_.emplace_back([request, stream, sink, cancelled] {
      if (absl::StartsWith(request->request_id(), "hold")) {
        cancelled->WaitForNotification();
        sink->Finish(absl::CancelledError("cancelled by the client"));
        return;
      }
      if (request->request_id() == "flood") {
        // ~1 KiB chunks until cancelled (at most 64 MiB), paced like a model
        // so that the transport's buffers fill before the server's does.
        for (int i = 0; i < 65536 && !cancelled->HasBeenNotified(); ++i) {
          v1::GenerateStreamChunk chunk;
          auto* delta = chunk.add_deltas();
          delta->set_offset(256 * i);
          for (int t = 0; t < 256; ++t) delta->add_token_ids(1 << 20);
          sink->Write(std::move(chunk));
          absl::SleepFor(absl::Microseconds(500));
        }
        sink->Finish(absl::CancelledError("cancelled"));
        return;
      }
      v1::GenerateResponse response;
      response.set_request_id(request->request_id());
      response.set_seed(request->sampling().seed());
      response.set_replay_ssm_mode(request->replay_ssm());
      auto* completion = response.add_completions();
      completion->mutable_token_ids()->CopyFrom(request->prompt_token_ids());
      completion->set_finish_reason(v1::FINISH_REASON_LENGTH);
      if (stream) {
        for (int i = 0; i < 2; ++i) {
          v1::GenerateStreamChunk chunk;
          chunk.set_request_id(request->request_id());
          auto* delta = chunk.add_deltas();
          delta->set_offset(i);
          delta->add_token_ids(100 + i);
          chunk.set_done(i == 1);
          sink->Write(std::move(chunk));
        }
      }
      sink->Finish(std::move(response));
    });
    return handle;
  }

  std::unique_ptr<CallHandle> Score(std::shared_ptr<const v1::ScoreRequest>,
                                    const CallContext&,
                                    Callback<v1::ScoreResponse> done) override {
    v1::ScoreResponse response;
    response.set_weight_version(7);
    done(response);
    return std::make_unique<Handle>();
  }
  void Abort(const v1::AbortRequest&,
             Callback<v1::AbortResponse> done) override {
    done(v1::AbortResponse());
  }
  void Pause(v1::PauseMode mode, absl::Time,
             Callback<v1::PauseResponse> done) override {
    v1::PauseResponse response;
    response.set_requests_kept(mode == v1::PAUSE_MODE_KEEP ? 1 : 0);
    done(response);
  }
  void Resume(Callback<v1::ResumeResponse> done) override {
    done(v1::ResumeResponse());
  }
  void UpdateWeights(const v1::UpdateWeightsRequest& request, absl::Time,
                     Callback<v1::UpdateWeightsResponse> done) override {
    {
      rollout::MutexLock lock(&mu_);
      weight_paths_.push_back(request.path());
    }
    v1::UpdateWeightsResponse response;
    response.set_weight_version(2);
    done(response);
  }
  void ApplyConfig(std::shared_ptr<const ConfigSnapshot> config) override {
    rollout::MutexLock lock(&mu_);
    applied_generations_.push_back(config->generation);
  }
  DispatcherState State() const override {
    DispatcherState state;
    state.ready_workers = 1;
    state.weight_version = 1;
    state.backend = "cpu";
    return state;
  }
  std::shared_ptr<const v1::ModelInfo> Model() const override {
    return nullptr;
  }
  void Shutdown(absl::Time) override {}

  std::vector<v1::GenerateRequest> seen() {
    rollout::MutexLock lock(&mu_);
    return seen_;
  }
  std::vector<uint64_t> applied_generations() {
    rollout::MutexLock lock(&mu_);
    return applied_generations_;
  }
  std::vector<std::string> weight_paths() {
    rollout::MutexLock lock(&mu_);
    return weight_paths_;
  }

 private:
  struct Handle final : CallHandle {
    std::shared_ptr<rollout::Notification> cancelled =
        std::make_shared<rollout::Notification>();
    void Cancel() override {
      if (!cancelled->HasBeenNotified()) cancelled->Notify();
    }
  };

  rollout::Mutex mu_;
  std::vector<v1::GenerateRequest> seen_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> applied_generations_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> weight_paths_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

class Client {
 public:
  explicit Client(const std::string& address)
      : channel_(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials())),
        rollout_(v1::Rollout::NewStub(channel_)),
        admin_(v1::Admin::NewStub(channel_)) {}

  v1::Rollout::Stub& rollout() { return *rollout_; }
  v1::Admin::Stub& admin() { return *admin_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Rollout::Stub> rollout_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

v1::GenerateRequest ValidRequest(const std::string& id = "") {
  v1::GenerateRequest request;
  request.set_request_id(id);
  for (int t : {11, 12, 13}) request.add_prompt_token_ids(t);
  request.set_n(2);
  request.mutable_sampling()->set_max_tokens(8);
  return request;
}

struct Started {
  std::unique_ptr<RolloutServer> server;
  FakeDispatcher* fake = nullptr;  // owned by the server
};

Started Start(const std::string& config_text, bool fake) {
  RolloutServerOptions options;
  if (!config_text.empty()) {
    static int n = 0;
    options.config_path =
        TempFile("config" + std::to_string(++n) + ".textproto", config_text);
  }
  options.overrides = {"127.0.0.1:0", "127.0.0.1:0"};
  options.health_period = absl::Milliseconds(20);
  Started started;
  if (fake) {
    options.dispatcher_factory = [&started](const DispatcherEnv&) {
      auto dispatcher = std::make_unique<FakeDispatcher>();
      started.fake = dispatcher.get();
      return absl::StatusOr<std::unique_ptr<Dispatcher>>(std::move(dispatcher));
    };
  }
  auto server = RolloutServer::Start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  if (server.ok()) started.server = *std::move(server);
  return started;
}

TEST(RolloutServerTest, WithoutWorkersValidRequestsAreUnavailable) {
  Started s = Start("", /*fake=*/false);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext context;
  v1::GenerateResponse response;
  const grpc::Status status =
      client.rollout().Generate(&context, ValidRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "no worker is serving");
}

TEST(RolloutServerTest, BadFieldsAreNamedOnTheWire) {
  Started s = Start("", /*fake=*/false);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  {
    v1::GenerateRequest request = ValidRequest();
    request.mutable_sampling()->set_top_p(2);
    grpc::ClientContext context;
    v1::GenerateResponse response;
    const grpc::Status status =
        client.rollout().Generate(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("sampling.top_p"));
    EXPECT_THAT(status.error_message(), HasSubstr("(0, 1]"));
  }
  {
    v1::GenerateRequest request = ValidRequest();
    request.clear_prompt_token_ids();
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::GenerateStreamChunk>> reader =
        client.rollout().GenerateStream(&context, request);
    v1::GenerateStreamChunk chunk;
    EXPECT_FALSE(reader->Read(&chunk));
    const grpc::Status status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("prompt_token_ids"));
  }
  {
    // The tiny model's vocabulary (1031) is known from its config.json.
    v1::GenerateRequest request = ValidRequest();
    request.set_prompt_token_ids(0, 1031);
    grpc::ClientContext context;
    v1::GenerateResponse response;
    const grpc::Status status =
        client.rollout().Generate(&context, request, &response);
    EXPECT_THAT(status.error_message(), HasSubstr("[0, 1031)"));
  }
}

TEST(RolloutServerTest, ServerInfoReportsModelLimitsAndGeneration) {
  Started s = Start("admission { max_n: 12 max_requests_per_client: 3 }",
                    /*fake=*/false);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext context;
  v1::ServerInfo info;
  ASSERT_TRUE(client.rollout()
                  .GetServerInfo(&context, v1::GetServerInfoRequest(), &info)
                  .ok());
  EXPECT_EQ(info.config_generation(), 1u);
  EXPECT_EQ(info.limits().max_n(), 12);
  EXPECT_EQ(info.limits().max_requests_per_client(), 3);
  EXPECT_EQ(info.model().model_type(), "qwen3_5");
  EXPECT_EQ(info.model().vocab_size(), 1031);
  EXPECT_EQ(info.ready_workers(), 0);
  EXPECT_EQ(info.replay_ssm().default_mode(), v1::REPLAY_SSM_MODE_AUTO);
  EXPECT_EQ(info.default_sampling().max_tokens(), 1024);
  EXPECT_FALSE(info.version().empty());
}

TEST(RolloutServerTest, GenerateIsRoutedResolvedThroughTheDispatcher) {
  Started s = Start("", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext context;
  v1::GenerateResponse response;
  ASSERT_TRUE(
      client.rollout().Generate(&context, ValidRequest(), &response).ok());
  ASSERT_EQ(response.completions_size(), 1);
  EXPECT_EQ(response.completions(0).token_ids_size(), 3);
  ASSERT_EQ(s.fake->seen().size(), 1u);
  const v1::GenerateRequest seen = s.fake->seen()[0];
  // The dispatcher gets a complete request.
  EXPECT_FALSE(seen.request_id().empty());
  EXPECT_TRUE(seen.sampling().has_seed());
  EXPECT_TRUE(seen.sampling().has_temperature());
  EXPECT_EQ(seen.replay_ssm(), v1::REPLAY_SSM_MODE_AUTO);
  EXPECT_EQ(response.request_id(), seen.request_id());
  EXPECT_EQ(response.seed(), seen.sampling().seed());
}

TEST(RolloutServerTest, StreamDeliversChunksInOrder) {
  Started s = Start("", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext context;
  auto reader = client.rollout().GenerateStream(&context, ValidRequest("s1"));
  std::vector<v1::GenerateStreamChunk> chunks;
  v1::GenerateStreamChunk chunk;
  while (reader->Read(&chunk)) chunks.push_back(chunk);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].deltas(0).token_ids(0), 100);
  EXPECT_EQ(chunks[1].deltas(0).token_ids(0), 101);
  EXPECT_TRUE(chunks[1].done());
  EXPECT_EQ(chunks[0].request_id(), "s1");
}

TEST(RolloutServerTest, DeadlineCancelsTheWorkInTheDispatcher) {
  Started s = Start("", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(200));
  v1::GenerateResponse response;
  const grpc::Status status =
      client.rollout().Generate(&context, ValidRequest("hold"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The held call only finishes when its handle is cancelled; shutting the
  // server down would hang otherwise (the fake joins its threads).
}

TEST(RolloutServerTest, AdmissionQueueBoundIsEnforced) {
  Started s = Start("admission { max_queued_requests: 1 }", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  grpc::ClientContext held_context;
  v1::GenerateResponse held_response;
  rollout::Notification held_done;
  grpc::Status held_status;
  // The callback API does not take ownership of the request: it must outlive
  // the call, which ends (held_done) before this scope does.
  const v1::GenerateRequest held_request = ValidRequest("hold");
  client.rollout().async()->Generate(&held_context, &held_request,
                                     &held_response, [&](grpc::Status status) {
                                       held_status = status;
                                       held_done.Notify();
                                     });
  // Wait until the held call is admitted.
  for (int i = 0; i < 500 && s.fake->seen().empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  grpc::ClientContext context;
  v1::GenerateResponse response;
  const grpc::Status status =
      client.rollout().Generate(&context, ValidRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("max_queued_requests"));
  held_context.TryCancel();
  held_done.WaitForNotification();
  EXPECT_EQ(held_status.error_code(), grpc::StatusCode::CANCELLED);
  // Its budget comes back once the server side has finished the call (the
  // client saw CANCELLED at once; the server finishes right after).
  grpc::Status again_status;
  for (int i = 0; i < 500; ++i) {
    grpc::ClientContext again;
    again_status = client.rollout().Generate(&again, ValidRequest(), &response);
    if (again_status.ok()) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(again_status.ok()) << again_status.error_message();
}

// A unary Generate that the fake dispatcher holds until it is cancelled.
class HeldCall {
 public:
  HeldCall(Client& client, v1::GenerateRequest request,
           const std::string& client_id = "")
      : request_(std::move(request)) {
    if (!client_id.empty()) context_.AddMetadata(kClientIdKey, client_id);
    client.rollout().async()->Generate(&context_, &request_, &response_,
                                       [this](grpc::Status status) {
                                         status_ = std::move(status);
                                         done_.Notify();
                                       });
  }
  ~HeldCall() {
    context_.TryCancel();
    done_.WaitForNotification();
  }

 private:
  grpc::ClientContext context_;
  const v1::GenerateRequest request_;  // outlives the call
  v1::GenerateResponse response_;
  grpc::Status status_;
  rollout::Notification done_;
};

// Polls (with a generous deadline for a loaded machine) until the fake has
// seen `n` Generate calls.
bool WaitForSeen(FakeDispatcher* fake, size_t n) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (fake->seen().size() < n) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

grpc::Status CallGenerate(Client& client, const v1::GenerateRequest& request) {
  grpc::ClientContext context;
  v1::GenerateResponse response;
  return client.rollout().Generate(&context, request, &response);
}

grpc::Status CallStream(Client& client, const v1::GenerateRequest& request) {
  grpc::ClientContext context;
  auto reader = client.rollout().GenerateStream(&context, request);
  v1::GenerateStreamChunk chunk;
  while (reader->Read(&chunk)) {
  }
  return reader->Finish();
}

grpc::Status CallScore(Client& client, const v1::ScoreRequest& request) {
  grpc::ClientContext context;
  v1::ScoreResponse response;
  return client.rollout().Score(&context, request, &response);
}

v1::GenerateRequest Request(int prompt_tokens, int n, int max_tokens) {
  v1::GenerateRequest request;
  for (int i = 0; i < prompt_tokens; ++i) request.add_prompt_token_ids(5);
  request.set_n(n);
  request.mutable_sampling()->set_max_tokens(max_tokens);
  return request;
}

v1::ScoreRequest Score(int prompt_tokens, int completions, int tokens) {
  v1::ScoreRequest request;
  for (int i = 0; i < prompt_tokens; ++i) request.add_prompt_token_ids(5);
  for (int c = 0; c < completions; ++c) {
    auto* completion = request.add_completions();
    for (int i = 0; i < tokens; ++i) completion->add_token_ids(6);
  }
  return request;
}

// The code, and that the message names the config field of the limit.
void ExpectRejected(const grpc::Status& status, grpc::StatusCode code,
                    const std::string& config_field) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(config_field));
}

void ExpectOk(const grpc::Status& status) {
  EXPECT_TRUE(status.ok()) << status.error_code() << ": "
                           << status.error_message();
}

// The limits audit: for every configurable limit on a request (each
// AdmissionConfig field, transport.max_receive_message_bytes), a request just
// over it is refused with the documented code and a message naming the config
// field, and a request just at it is accepted.
TEST(RolloutServerTest, EveryConfigurableLimitIsEnforcedAndNamed) {
  // Per-request limits. The response-size estimate of n = 4, max_tokens = T,
  // sampled logprobs and top_k = 3 is 4 x (T x 36 + 64) + 256 bytes: 2672 for
  // T = 15, 2816 for T = 16.
  Started s = Start(
      "admission { max_n: 4 max_prompt_tokens: 8 max_tokens: 16 "
      "max_top_logprobs: 3 max_stop_token_ids: 2 max_response_bytes: 2672 "
      "max_queued_tokens: 100 }\n"
      "default_sampling { max_tokens: 1 }",
      /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  constexpr auto kInvalid = grpc::StatusCode::INVALID_ARGUMENT;
  {
    SCOPED_TRACE("admission.max_n");
    ExpectOk(CallGenerate(client, Request(1, 4, 1)));
    ExpectRejected(CallGenerate(client, Request(1, 5, 1)), kInvalid,
                   "admission.max_n");
    ExpectOk(CallScore(client, Score(1, 4, 1)));
    ExpectRejected(CallScore(client, Score(1, 5, 1)), kInvalid,
                   "admission.max_n");
  }
  {
    SCOPED_TRACE("admission.max_prompt_tokens");
    ExpectOk(CallGenerate(client, Request(8, 1, 1)));
    ExpectRejected(CallGenerate(client, Request(9, 1, 1)), kInvalid,
                   "admission.max_prompt_tokens");
    ExpectOk(CallScore(client, Score(8, 1, 1)));
    ExpectRejected(CallScore(client, Score(9, 1, 1)), kInvalid,
                   "admission.max_prompt_tokens");
  }
  {
    SCOPED_TRACE("admission.max_tokens");
    ExpectOk(CallGenerate(client, Request(1, 1, 16)));
    ExpectRejected(CallGenerate(client, Request(1, 1, 17)), kInvalid,
                   "admission.max_tokens");
    ExpectOk(CallScore(client, Score(1, 1, 16)));
    ExpectRejected(CallScore(client, Score(1, 1, 17)), kInvalid,
                   "admission.max_tokens");
  }
  {
    SCOPED_TRACE("admission.max_top_logprobs");
    v1::GenerateRequest at = Request(1, 1, 1);
    at.mutable_logprobs()->set_top_k(3);
    ExpectOk(CallGenerate(client, at));
    v1::GenerateRequest over = at;
    over.mutable_logprobs()->set_top_k(4);
    ExpectRejected(CallGenerate(client, over), kInvalid,
                   "admission.max_top_logprobs");
    v1::ScoreRequest score_at = Score(1, 1, 1);
    score_at.set_top_logprobs(3);
    ExpectOk(CallScore(client, score_at));
    v1::ScoreRequest score_over = score_at;
    score_over.set_top_logprobs(4);
    ExpectRejected(CallScore(client, score_over), kInvalid,
                   "admission.max_top_logprobs");
  }
  {
    SCOPED_TRACE("admission.max_stop_token_ids");
    v1::GenerateRequest at = Request(1, 1, 1);
    at.mutable_sampling()->add_stop_token_ids(7);
    at.mutable_sampling()->add_stop_token_ids(8);
    ExpectOk(CallGenerate(client, at));
    v1::GenerateRequest over = at;
    over.mutable_sampling()->add_stop_token_ids(9);
    ExpectRejected(CallGenerate(client, over), kInvalid,
                   "admission.max_stop_token_ids");
  }
  {
    SCOPED_TRACE("admission.max_response_bytes");
    v1::GenerateRequest at = Request(1, 4, 15);
    at.mutable_logprobs()->set_sampled(true);
    at.mutable_logprobs()->set_top_k(3);
    ExpectOk(CallGenerate(client, at));
    v1::GenerateRequest over = at;
    over.mutable_sampling()->set_max_tokens(16);
    ExpectRejected(CallGenerate(client, over), kInvalid,
                   "admission.max_response_bytes");
    // The bound is on unary responses only: a stream may ask for more.
    ExpectOk(CallStream(client, over));
  }
  // Queue limits, on a server whose per-request limits do not get in the way.
  Started q = Start(
      "admission { max_queued_requests: 2 max_queued_tokens: 100 "
      "max_n: 64 max_tokens: 64 }\n"
      "default_sampling { max_tokens: 1 }",
      /*fake=*/true);
  ASSERT_NE(q.server, nullptr);
  Client qclient(q.server->grpc_address());
  {
    SCOPED_TRACE("admission.max_queued_tokens, one request");
    // A group costs prompt + n x max_tokens: 4 + 6 x 16 = 100 is the whole
    // budget; a group one token larger could never be admitted.
    ExpectOk(CallGenerate(qclient, Request(4, 6, 16)));  // costs 100
    ExpectRejected(CallGenerate(qclient, Request(5, 6, 16)), kInvalid,
                   "admission.max_queued_tokens");
  }
  {
    SCOPED_TRACE("admission.max_queued_tokens, the queue");
    const size_t seen = q.fake->seen().size();
    v1::GenerateRequest held = Request(4, 6, 10);  // costs 64
    held.set_request_id("hold-tokens");
    auto call = std::make_unique<HeldCall>(qclient, held);
    ASSERT_TRUE(WaitForSeen(q.fake, seen + 1));
    ExpectOk(CallGenerate(qclient, Request(4, 2, 16)));  // 64 + 36 = 100
    const grpc::Status over = CallGenerate(qclient, Request(5, 2, 16));
    ExpectRejected(over, grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "admission.max_queued_tokens");
    call.reset();  // cancels the held call
  }
  {
    SCOPED_TRACE("admission.max_queued_requests");
    // The held call's budget comes back once the server has finished it
    // (the client saw CANCELLED at once): wait until the whole budget can be
    // admitted again.
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    grpc::Status empty;
    do {
      empty = CallGenerate(qclient, Request(4, 6, 16));
    } while (!empty.ok() && absl::Now() < deadline);
    ExpectOk(empty);
    const size_t seen = q.fake->seen().size();
    v1::GenerateRequest held = Request(1, 1, 1);
    held.set_request_id("hold-1");
    auto first = std::make_unique<HeldCall>(qclient, held);
    held.set_request_id("hold-2");
    auto second = std::make_unique<HeldCall>(qclient, held);  // 2 = the limit
    ASSERT_TRUE(WaitForSeen(q.fake, seen + 2));
    grpc::ClientContext context;
    v1::GenerateResponse response;
    const grpc::Status over =
        qclient.rollout().Generate(&context, Request(1, 1, 1), &response);
    ExpectRejected(over, grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "admission.max_queued_requests");
    // Admission rejections carry the retry hint.
    const auto& trailers = context.GetServerTrailingMetadata();
    EXPECT_NE(trailers.find(kRetryPushbackKey), trailers.end());
    ExpectRejected(CallScore(qclient, Score(1, 1, 1)),
                   grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "admission.max_queued_requests");
  }

  // The transport's request size.
  Started t = Start(
      "admission { max_prompt_tokens: 100000 }\n"
      "transport { max_receive_message_bytes: 4096 }",
      /*fake=*/true);
  ASSERT_NE(t.server, nullptr);
  Client tclient(t.server->grpc_address());
  {
    SCOPED_TRACE("transport.max_receive_message_bytes");
    // A request of exactly 4096 bytes (each prompt token adds one byte), and
    // one of 4097. gRPC refuses the larger one before rolloutd sees it, with
    // its own message giving the sizes ("... larger than max (4097 vs.
    // 4096)"): it names the limit's value, not the config field.
    v1::GenerateRequest at = Request(1, 1, 1);
    while (at.ByteSizeLong() < 4096) at.add_prompt_token_ids(5);
    ASSERT_EQ(at.ByteSizeLong(), 4096u);
    ExpectOk(CallGenerate(tclient, at));
    v1::GenerateRequest over = at;
    over.add_prompt_token_ids(5);
    ASSERT_EQ(over.ByteSizeLong(), 4097u);
    ExpectRejected(CallGenerate(tclient, over),
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "4096");
  }
}

// transport.keepalive reaches the gRPC server: a client that pings more often
// than min_client_ping_interval_seconds while its call sends no data is sent
// GOAWAY (too_many_pings) and the call fails; one that keeps to the interval
// is left alone. gRPC's own default interval is 5 minutes, so the second call
// also shows that the configured 2 s is the one in effect.
TEST(RolloutServerTest, KeepalivePingIntervalIsEnforced) {
  Started s =
      Start("transport { keepalive { min_client_ping_interval_seconds: 2 } }",
            /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  // A held Generate (the fake answers it only when cancelled) on a channel of
  // its own that pings every `ping_ms` (gRPC's client sends at most one ping
  // per second whatever is asked).
  auto held_call = [&](int ping_ms, absl::Duration deadline) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, ping_ms);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);  // keep pinging
    auto stub = v1::Rollout::NewStub(grpc::CreateCustomChannel(
        s.server->grpc_address(), grpc::InsecureChannelCredentials(), args));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    v1::GenerateResponse response;
    return stub->Generate(&context, ValidRequest("hold-keepalive"), &response);
  };
  // Pings every second: the third ping that comes too early (max_ping_strikes
  // is 2) closes the connection, a few seconds in.
  const absl::Time start = absl::Now();
  const grpc::Status eager = held_call(1000, absl::Seconds(60));
  EXPECT_EQ(eager.error_code(), grpc::StatusCode::UNAVAILABLE)
      << eager.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  // Pings every 3 s: four pings, which gRPC's default interval would count
  // as three strikes and cut off; under the configured 2 s none is a strike
  // and the call runs to its deadline.
  const grpc::Status polite = held_call(3000, absl::Seconds(13));
  EXPECT_EQ(polite.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << polite.error_message();
}

TEST(RolloutServerTest, UnreadStreamIsCutOffAndGivesItsBudgetBack) {
  Started s =
      Start("admission { max_queued_requests: 1 max_response_bytes: 4096 }",
            /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  // Without BDP probing the client's stream window stays at 64 KiB, so the
  // unread stream backs up into the server quickly.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  auto channel = grpc::CreateCustomChannel(
      s.server->grpc_address(), grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Rollout::NewStub(channel);
  grpc::ClientContext flood_context;
  auto flood = stub->GenerateStream(&flood_context, ValidRequest("flood"));
  for (int i = 0; i < 1000 && s.fake->seen().empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(s.fake->seen().size(), 1u);  // admitted
  // Not read yet. Once more than max_response_bytes wait, the server cancels
  // the work and gives its admission budget back: with max_queued_requests 1
  // another request is admitted while the flood is still unread.
  Client client(s.server->grpc_address());
  grpc::Status status;
  for (int i = 0; i < 1000; ++i) {
    grpc::ClientContext context;
    v1::GenerateResponse response;
    status = client.rollout().Generate(&context, ValidRequest(), &response);
    if (status.ok()) break;
    ASSERT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << status.error_message();
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(status.ok()) << status.error_message();
  // The reader then gets what was buffered and a status naming the limit.
  v1::GenerateStreamChunk chunk;
  int64_t bytes = 0;
  while (flood->Read(&chunk)) bytes += chunk.ByteSizeLong();
  const grpc::Status flood_status = flood->Finish();
  EXPECT_EQ(flood_status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(flood_status.error_message(),
              HasSubstr("admission.max_response_bytes (4096)"));
  EXPECT_GT(bytes, 0);
  EXPECT_LT(bytes, 16 << 20);  // cut off, far from the 64 MiB it would send
}

TEST(RolloutServerTest, PerClientCapByClientIdOrPeerHost) {
  Started s = Start("admission { max_requests_per_client: 1 }", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  Client other_connection(s.server->grpc_address());
  auto generate = [](Client& c, const std::string& client_id,
                     grpc::ClientContext* context) {
    if (!client_id.empty()) context->AddMetadata(kClientIdKey, client_id);
    v1::GenerateResponse response;
    return c.rollout().Generate(context, ValidRequest(), &response);
  };
  v1::GenerateRequest held = ValidRequest("hold-a");
  auto held_a = std::make_unique<HeldCall>(client, held, "trainer-a");
  held.set_request_id("hold-peer");
  auto held_peer = std::make_unique<HeldCall>(client, held);  // no header
  ASSERT_TRUE(WaitForSeen(s.fake, 2));
  {
    // trainer-a is at its cap, also on another connection.
    grpc::ClientContext context;
    const grpc::Status status =
        generate(other_connection, "trainer-a", &context);
    ExpectRejected(status, grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "admission.max_requests_per_client");
    EXPECT_THAT(status.error_message(), HasSubstr("trainer-a"));
    const auto& trailers = context.GetServerTrailingMetadata();
    EXPECT_NE(trailers.find(kRetryPushbackKey), trailers.end());
  }
  {
    // Without a header the peer's host counts, whatever the port: the other
    // connection is the same client as the held call without a header.
    grpc::ClientContext context;
    ExpectRejected(generate(other_connection, "", &context),
                   grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "admission.max_requests_per_client");
  }
  {
    grpc::ClientContext context;
    ExpectOk(generate(client, "trainer-b", &context));
  }
  {
    grpc::ClientContext context;
    ExpectRejected(generate(client, std::string(257, 'x'), &context),
                   grpc::StatusCode::INVALID_ARGUMENT, "x-client-id");
  }
  // Once trainer-a's call has ended, trainer-a is admitted again.
  held_a.reset();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  grpc::Status again;
  do {
    grpc::ClientContext context;
    again = generate(client, "trainer-a", &context);
  } while (!again.ok() && absl::Now() < deadline);
  ExpectOk(again);
}

TEST(RolloutServerTest, PauseRefusesNewWorkUntilResume) {
  Started s = Start("", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  {
    grpc::ClientContext context;
    v1::PauseRequest request;
    request.set_mode(v1::PAUSE_MODE_KEEP);
    v1::PauseResponse response;
    ASSERT_TRUE(client.admin().Pause(&context, request, &response).ok());
    EXPECT_EQ(response.requests_kept(), 1);
  }
  {
    grpc::ClientContext context;
    v1::GenerateResponse response;
    const grpc::Status status =
        client.rollout().Generate(&context, ValidRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(status.error_message(), HasSubstr("paused"));
  }
  {
    grpc::ClientContext context;
    v1::ServerInfo info;
    ASSERT_TRUE(client.rollout()
                    .GetServerInfo(&context, v1::GetServerInfoRequest(), &info)
                    .ok());
    EXPECT_TRUE(info.paused());
  }
  {
    grpc::ClientContext context;
    v1::ResumeResponse response;
    ASSERT_TRUE(
        client.admin().Resume(&context, v1::ResumeRequest(), &response).ok());
  }
  grpc::ClientContext context;
  v1::GenerateResponse response;
  EXPECT_TRUE(
      client.rollout().Generate(&context, ValidRequest(), &response).ok());
}

TEST(RolloutServerTest, AdminNeedsTheTokenAndReloadReportsPerField) {
  const std::string token = TempFile("admin_token", "tok-123\n");
  const std::string base = "security { admin_token_file: \"" + token + "\" }\n";
  Started s = Start(base + "admission { max_n: 4 }", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  const std::string config_path = s.server->config().Current()->source;
  Client client(s.server->grpc_address());

  v1::ReloadConfigResponse response;
  {
    grpc::ClientContext context;  // no token
    const grpc::Status status = client.admin().ReloadConfig(
        &context, v1::ReloadConfigRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr("tok-123")));
  }
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer wrong");
    EXPECT_EQ(client.admin()
                  .ReloadConfig(&context, v1::ReloadConfigRequest(), &response)
                  .error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  // A broken value: rejected, report in the trailing metadata.
  TempFile(config_path.substr(config_path.rfind('/') + 1),
           base + "admission { max_n: -1 }");
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer tok-123");
    const grpc::Status status = client.admin().ReloadConfig(
        &context, v1::ReloadConfigRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("admission.max_n"));
    const auto& trailers = context.GetServerTrailingMetadata();
    auto it = trailers.find(kReloadReportMetadata);
    ASSERT_NE(it, trailers.end());
    v1::ReloadConfigResponse report;
    ASSERT_TRUE(report.ParseFromArray(it->second.data(), it->second.size()));
    ASSERT_EQ(report.changes_size(), 1);
    EXPECT_EQ(report.changes(0).field(), "admission.max_n");
    EXPECT_EQ(report.changes(0).outcome(),
              v1::ConfigFieldChange::OUTCOME_REJECTED);
  }
  EXPECT_EQ(s.server->config().Current()->generation, 1u);
  // A valid change: applied, and the dispatcher hears about it.
  TempFile(config_path.substr(config_path.rfind('/') + 1),
           base + "admission { max_n: 8 }");
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer tok-123");
    ASSERT_TRUE(
        client.admin()
            .ReloadConfig(&context, v1::ReloadConfigRequest(), &response)
            .ok());
    EXPECT_TRUE(response.applied());
    EXPECT_EQ(response.generation(), 2u);
  }
  EXPECT_EQ(s.fake->applied_generations(), std::vector<uint64_t>{2});
}

TEST(RolloutServerTest, UpdateWeightsIsConfinedToModelRoots) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string root = tmp + "/weights";
  mkdir(root.c_str(), 0755);
  mkdir((root + "/step-1").c_str(), 0755);
  Started s = Start("model { roots: \"" + root + "\" }", /*fake=*/true);
  ASSERT_NE(s.server, nullptr);
  Client client(s.server->grpc_address());
  v1::UpdateWeightsRequest request;
  v1::UpdateWeightsResponse response;
  request.set_path(tmp);  // outside
  {
    grpc::ClientContext context;
    EXPECT_EQ(
        client.admin().UpdateWeights(&context, request, &response).error_code(),
        grpc::StatusCode::PERMISSION_DENIED);
  }
  request.set_path(root + "/step-1");
  {
    grpc::ClientContext context;
    ASSERT_TRUE(
        client.admin().UpdateWeights(&context, request, &response).ok());
    EXPECT_EQ(response.weight_version(), 2u);
  }
  EXPECT_EQ(s.fake->weight_paths(), std::vector<std::string>{root + "/step-1"});
}

}  // namespace
}  // namespace rollout::server
