// The client side of rolloutd's calls to one worker process.
//
// WorkerConnection: the channel to one process (a restarted worker gets a new
// one, so no reconnect back-off carries over). WorkerGenerateCall: one
// Generate stream (callback API); its events and its end arrive on gRPC
// threads, one at a time and in order. UnaryCall: what an async unary call
// keeps alive until its callback. InFlight: counts outstanding async calls so
// that their owner can wait for them before it goes away.
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_CLIENT_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "rollout/worker/v1/worker.grpc.pb.h"

namespace rollout::server::workers {

class WorkerConnection {
 public:
  explicit WorkerConnection(const std::string& socket_path);
  const std::string& socket_path() const { return socket_path_; }
  rollout::worker::v1::Worker::Stub* stub() const { return stub_.get(); }

 private:
  const std::string socket_path_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<rollout::worker::v1::Worker::Stub> stub_;
};

// Outstanding async calls of an owner that must outlive their callbacks.
class InFlight {
 public:
  void Begin() ABSL_LOCKS_EXCLUDED(mu_);
  void End() ABSL_LOCKS_EXCLUDED(mu_);
  // True when none is left before `deadline`.
  bool WaitIdle(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  rollout::Mutex mu_;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

template <typename Request, typename Response>
struct UnaryCall {
  grpc::ClientContext context;
  Request request;
  Response response;
};

class WorkerGenerateCall final
    : public grpc::ClientReadReactor<rollout::worker::v1::GenerateEvent> {
 public:
  using OnEvent =
      absl::AnyInvocable<void(const rollout::worker::v1::GenerateEvent&)>;
  using OnEnd = absl::AnyInvocable<void(const grpc::Status&)>;

  // Starts the call. `on_end` runs exactly once, last; the call object lives
  // at least until then. `in_flight` (may be null) counts it.
  static std::shared_ptr<WorkerGenerateCall> Start(
      const WorkerConnection& connection,
      rollout::worker::v1::GenerateRequest request, OnEvent on_event,
      OnEnd on_end, InFlight* in_flight);

  // Cancels the call (the worker cancels the request). Any thread, any time;
  // the end still arrives through on_end.
  void Cancel() { context_.TryCancel(); }

  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  WorkerGenerateCall(OnEvent on_event, OnEnd on_end, InFlight* in_flight)
      : on_event_(std::move(on_event)),
        on_end_(std::move(on_end)),
        in_flight_(in_flight) {}

  grpc::ClientContext context_;
  rollout::worker::v1::GenerateRequest request_;
  rollout::worker::v1::GenerateEvent event_;
  OnEvent on_event_;
  OnEnd on_end_;
  InFlight* const in_flight_;
  std::shared_ptr<WorkerGenerateCall> self_;  // until OnDone
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_CLIENT_H_
