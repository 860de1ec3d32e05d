// The client pieces against an in-process fake worker on a unix socket:
// WorkerGenerateCall delivers events in order then exactly one end, Cancel
// ends it CANCELLED, InFlight waits for outstanding calls.
#include "server/workers/worker_client.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/mutex.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

namespace wv1 = ::rollout::worker::v1;

// Generate: writes `accepted`, then one delta per prompt token, then `done`;
// a request id "hang" writes `accepted` and waits to be cancelled.
class FakeWorker final : public wv1::Worker::CallbackService {
  grpc::ServerWriteReactor<wv1::GenerateEvent>* Generate(
      grpc::CallbackServerContext* context,
      const wv1::GenerateRequest* request) override {
    class Reactor : public grpc::ServerWriteReactor<wv1::GenerateEvent> {
     public:
      explicit Reactor(const wv1::GenerateRequest& r) {
        wv1::GenerateEvent accepted;
        accepted.set_accepted(true);
        events_.push_back(accepted);
        hang_ = r.request().request_id() == "hang";
        if (!hang_) {
          for (int t : r.request().prompt_token_ids()) {
            wv1::GenerateEvent e;
            auto* d = e.add_deltas();
            d->set_offset(static_cast<int>(events_.size()) - 1);
            d->add_token_ids(t);
            events_.push_back(e);
          }
          wv1::GenerateEvent done;
          done.mutable_done()->set_completion_tokens(
              r.request().prompt_token_ids_size());
          events_.push_back(done);
        }
        Next();
      }
      void OnWriteDone(bool ok) override {
        if (!ok) return Finish(grpc::Status::CANCELLED);
        Next();
      }
      void OnCancel() override {
        if (hang_) Finish(grpc::Status::CANCELLED);
      }
      void OnDone() override { delete this; }

     private:
      void Next() {
        if (next_ < events_.size()) {
          StartWrite(&events_[next_++]);
        } else if (!hang_) {
          Finish(grpc::Status::OK);
        }
      }
      std::vector<wv1::GenerateEvent> events_;
      size_t next_ = 0;
      bool hang_ = false;
    };
    return new Reactor(*request);
  }
};

class WorkerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/worker-client-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + dir_ + "/w.sock",
                             grpc::InsecureServerCredentials());
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    connection_ = std::make_unique<WorkerConnection>(dir_ + "/w.sock");
  }
  void TearDown() override {
    server_->Shutdown();
    unlink((dir_ + "/w.sock").c_str());
    rmdir(dir_.c_str());
  }

  struct Seen {
    rollout::Mutex mu;
    std::vector<wv1::GenerateEvent> events ABSL_GUARDED_BY(mu);
    grpc::Status status ABSL_GUARDED_BY(mu);
    int ends ABSL_GUARDED_BY(mu) = 0;
    rollout::Notification ended;
  };

  std::shared_ptr<WorkerGenerateCall> Start(const std::string& id, Seen* seen) {
    wv1::GenerateRequest request;
    request.mutable_request()->set_request_id(id);
    for (int t : {7, 8, 9}) request.mutable_request()->add_prompt_token_ids(t);
    return WorkerGenerateCall::Start(
        *connection_, request,
        [seen](const wv1::GenerateEvent& e) {
          rollout::MutexLock lock(&seen->mu);
          seen->events.push_back(e);
        },
        [seen](const grpc::Status& s) {
          {
            rollout::MutexLock lock(&seen->mu);
            seen->status = s;
            ++seen->ends;
          }
          seen->ended.Notify();
        },
        &in_flight_);
  }

  std::string dir_;
  FakeWorker fake_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<WorkerConnection> connection_;
  InFlight in_flight_;
};

TEST_F(WorkerClientTest, EventsInOrderThenOneEnd) {
  Seen seen;
  auto call = Start("ok", &seen);
  ASSERT_TRUE(seen.ended.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_TRUE(in_flight_.WaitIdle(absl::Now() + absl::Seconds(5)));
  rollout::MutexLock lock(&seen.mu);
  EXPECT_TRUE(seen.status.ok()) << seen.status.error_message();
  EXPECT_EQ(seen.ends, 1);
  ASSERT_EQ(seen.events.size(), 5u);
  EXPECT_TRUE(seen.events[0].accepted());
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(seen.events[i].deltas(0).offset(), i - 1);
    EXPECT_EQ(seen.events[i].deltas(0).token_ids(0), 6 + i);
  }
  EXPECT_TRUE(seen.events[4].has_done());
}

TEST_F(WorkerClientTest, CancelEndsTheCall) {
  Seen seen;
  auto call = Start("hang", &seen);
  // Wait for `accepted`, then cancel.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    {
      rollout::MutexLock lock(&seen.mu);
      if (!seen.events.empty()) break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  call->Cancel();
  ASSERT_TRUE(seen.ended.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_TRUE(in_flight_.WaitIdle(absl::Now() + absl::Seconds(5)));
  rollout::MutexLock lock(&seen.mu);
  EXPECT_EQ(seen.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(seen.ends, 1);
}

TEST(InFlightTest, WaitIdle) {
  InFlight f;
  EXPECT_TRUE(f.WaitIdle(absl::Now()));
  f.Begin();
  EXPECT_FALSE(f.WaitIdle(absl::Now() + absl::Milliseconds(10)));
  f.End();
  EXPECT_TRUE(f.WaitIdle(absl::Now()));
}

}  // namespace
}  // namespace rollout::server::workers
