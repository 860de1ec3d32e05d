#include "server/workers/worker_client.h"

#include <utility>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace rollout::server::workers {

WorkerConnection::WorkerConnection(const std::string& socket_path)
    : socket_path_(socket_path) {
  grpc::ChannelArguments args;
  // rolloutd bounds what it asks for; a Score of a big group is large.
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // A worker that is starting is probed every ~100 ms: keep reconnects fast.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A private channel per process: never shared with another connection to
  // the same path (a restarted worker).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = grpc::CreateCustomChannel(
      "unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
  stub_ = rollout::worker::v1::Worker::NewStub(channel_);
}

void InFlight::Begin() {
  rollout::MutexLock lock(&mu_);
  ++count_;
}

void InFlight::End() {
  rollout::MutexLock lock(&mu_);
  --count_;
}

bool InFlight::WaitIdle(absl::Time deadline) {
  rollout::MutexLock lock(&mu_);
  auto idle = [this]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&idle), deadline);
}

std::shared_ptr<WorkerGenerateCall> WorkerGenerateCall::Start(
    const WorkerConnection& connection,
    rollout::worker::v1::GenerateRequest request, OnEvent on_event,
    OnEnd on_end, InFlight* in_flight) {
  std::shared_ptr<WorkerGenerateCall> call(new WorkerGenerateCall(
      std::move(on_event), std::move(on_end), in_flight));
  call->request_ = std::move(request);
  call->self_ = call;
  if (in_flight != nullptr) in_flight->Begin();
  connection.stub()->async()->Generate(&call->context_, &call->request_,
                                       call.get());
  call->StartRead(&call->event_);
  call->StartCall();
  return call;
}

void WorkerGenerateCall::OnReadDone(bool ok) {
  if (!ok) return;  // the stream ended; OnDone follows
  on_event_(event_);
  StartRead(&event_);
}

void WorkerGenerateCall::OnDone(const grpc::Status& status) {
  std::shared_ptr<WorkerGenerateCall> keep = std::move(self_);
  on_end_(status);
  // Release what the callbacks captured before the owner may go away.
  on_event_ = nullptr;
  on_end_ = nullptr;
  if (in_flight_ != nullptr) in_flight_->End();
}

}  // namespace rollout::server::workers
