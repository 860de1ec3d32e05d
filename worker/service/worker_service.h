// WorkerService: rollout.worker.v1.Worker (the internal API rolloutd calls)
// over one Executor, with the gRPC callback API: no handler blocks.
//
// Generate streams the engine's result stream: an `accepted` event once the
// request is queued, then batches of token deltas and completion ends, then
// `done`. Events are taken from the result stream only when the previous
// write finished, so a slow reader makes the engine merge deltas instead of
// buffering without bound. Cancelling a call cancels its request (the engine
// frees its slots within one step).
//
// Threading: the result-stream listeners run on the engine thread and only
// schedule writes; every other entry point is a gRPC callback thread.
//
//   WorkerService service(runtime.executor.get(), runtime.info);
//   ASSIGN_OR_RETURN(auto server, StartWorkerServer(&service, socket_path));
//   ... SIGTERM: service.StartDraining(); executor->Shutdown(kDrain); ...
#ifndef ROLLOUT_WORKER_SERVICE_WORKER_SERVICE_H_
#define ROLLOUT_WORKER_SERVICE_WORKER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "grpcpp/server.h"
#include "rollout/worker/v1/worker.grpc.pb.h"
#include "worker/engine/executor.h"

namespace rollout::worker::service {

class WorkerService final
    : public rollout::worker::v1::Worker::CallbackService {
 public:
  // `executor` must outlive the service and every call it serves.
  WorkerService(Executor* executor, rollout::worker::v1::WorkerInfo info);

  // New Generate and Score calls answer UNAVAILABLE from now on (the worker
  // is shutting down); running ones continue.
  void StartDraining() { draining_.store(true); }

  grpc::ServerUnaryReactor* GetInfo(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::GetInfoRequest* request,
      rollout::worker::v1::WorkerInfo* response) override;
  grpc::ServerWriteReactor<rollout::worker::v1::GenerateEvent>* Generate(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::GenerateRequest* request) override;
  grpc::ServerUnaryReactor* Score(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::ScoreRequest* request,
      rollout::worker::v1::ScoreResult* response) override;
  grpc::ServerUnaryReactor* Cancel(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::CancelRequest* request,
      rollout::worker::v1::CancelResponse* response) override;
  grpc::ServerUnaryReactor* Pause(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::PauseRequest* request,
      rollout::worker::v1::PauseResponse* response) override;
  grpc::ServerUnaryReactor* Resume(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::ResumeRequest* request,
      rollout::worker::v1::ResumeResponse* response) override;
  grpc::ServerUnaryReactor* UpdateWeights(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::UpdateWeightsRequest* request,
      rollout::worker::v1::UpdateWeightsResponse* response) override;
  grpc::ServerUnaryReactor* Reconfigure(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::ReconfigureRequest* request,
      rollout::worker::v1::ReconfigureResponse* response) override;
  grpc::ServerUnaryReactor* GetStats(
      grpc::CallbackServerContext* context,
      const rollout::worker::v1::GetStatsRequest* request,
      rollout::worker::v1::WorkerStats* response) override;

  // Weight version serving now (updated when an UpdateWeights succeeds).
  int64_t weight_version() const { return weight_version_->load(); }

 private:
  Executor* const executor_;
  const rollout::worker::v1::WorkerInfo info_;
  std::atomic<bool> draining_{false};
  // Shared with the callbacks of UpdateWeights, which run on the engine
  // thread.
  std::shared_ptr<std::atomic<int64_t>> weight_version_;
  // Orders Reconfigure calls: checked and queued to the engine together, so
  // the engine applies generations in increasing order.
  rollout::Mutex reconfig_mu_;
  int64_t reconfig_generation_ ABSL_GUARDED_BY(reconfig_mu_) = 0;
};

// Serves `service` on the unix socket `socket_path` (created by gRPC; the
// caller's umask decides its mode). No message size limits: rolloutd is the
// only client and bounds what it asks for.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartWorkerServer(
    WorkerService* service, const std::string& socket_path);

}  // namespace rollout::worker::service

#endif  // ROLLOUT_WORKER_SERVICE_WORKER_SERVICE_H_
