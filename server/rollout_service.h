// The rollout.v1.Rollout gRPC service (callback API: every handler validates,
// admits and hands the work to the Dispatcher, and returns without blocking).
//
// Per call: resolve defaults -> validate (INVALID_ARGUMENT naming the field)
// -> refuse while paused (FAILED_PRECONDITION) -> admission (RESOURCE_EXHAUSTED
// when the queue is full) -> Dispatcher. Client cancellation and deadlines
// reach the dispatcher through CallHandle::Cancel. Every finished call is
// counted in rollout_requests_total{rpc, code}.
#ifndef ROLLOUT_SERVER_ROLLOUT_SERVICE_H_
#define ROLLOUT_SERVER_ROLLOUT_SERVICE_H_

#include "rollout/v1/rollout.grpc.pb.h"
#include "server/service_env.h"

namespace rollout::server {

class RolloutService final : public rollout::v1::Rollout::CallbackService {
 public:
  explicit RolloutService(const ServiceEnv& env) : env_(env) {}

  grpc::ServerUnaryReactor* Generate(
      grpc::CallbackServerContext* context,
      const rollout::v1::GenerateRequest* request,
      rollout::v1::GenerateResponse* response) override;

  grpc::ServerWriteReactor<rollout::v1::GenerateStreamChunk>* GenerateStream(
      grpc::CallbackServerContext* context,
      const rollout::v1::GenerateRequest* request) override;

  grpc::ServerUnaryReactor* Score(
      grpc::CallbackServerContext* context,
      const rollout::v1::ScoreRequest* request,
      rollout::v1::ScoreResponse* response) override;

  grpc::ServerUnaryReactor* Abort(
      grpc::CallbackServerContext* context,
      const rollout::v1::AbortRequest* request,
      rollout::v1::AbortResponse* response) override;

  grpc::ServerUnaryReactor* GetServerInfo(
      grpc::CallbackServerContext* context,
      const rollout::v1::GetServerInfoRequest* request,
      rollout::v1::ServerInfo* response) override;

 private:
  const ServiceEnv env_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ROLLOUT_SERVICE_H_
