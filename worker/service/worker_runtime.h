// What a worker process serves: the model loaded on its backend, the engine
// (Executor) running over it, and the description rolloutd asks for
// (rollout.worker.v1.WorkerInfo).
//
//   ASSIGN_OR_RETURN(DeviceChoice device, ChooseDevice(...));
//   ASSIGN_OR_RETURN(WorkerRuntime runtime, StartRuntime(options, device));
//   WorkerService service(runtime.executor.get(), runtime.info);
#ifndef ROLLOUT_WORKER_SERVICE_WORKER_RUNTIME_H_
#define ROLLOUT_WORKER_SERVICE_WORKER_RUNTIME_H_

#include <memory>

#include "absl/status/statusor.h"
#include "rollout/worker/v1/worker.pb.h"
#include "worker/engine/executor.h"
#include "worker/service/device_choice.h"
#include "worker/service/worker_options.h"

namespace rollout::worker::service {

struct WorkerRuntime {
  std::unique_ptr<Executor> executor;
  rollout::worker::v1::WorkerInfo info;
};

// Loads the checkpoint (blocking: as long as reading it takes), sizes the
// pools, starts the engine thread and, when options.weights_dir is set, loads
// those weights at their version. Errors name what failed.
absl::StatusOr<WorkerRuntime> StartRuntime(const WorkerOptions& options,
                                           const DeviceChoice& device);

}  // namespace rollout::worker::service

#endif  // ROLLOUT_WORKER_SERVICE_WORKER_RUNTIME_H_
