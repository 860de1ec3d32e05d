// ServiceEnv: what the gRPC services share (none of it owned by them).
// RolloutServer builds one and keeps everything alive until the services are
// gone.
#ifndef ROLLOUT_SERVER_SERVICE_ENV_H_
#define ROLLOUT_SERVER_SERVICE_ENV_H_

#include <memory>
#include <string>

#include "metrics/rollout_metrics.h"
#include "rollout/v1/rollout.pb.h"
#include "server/admission.h"
#include "server/config/config_manager.h"
#include "server/dispatcher.h"
#include "server/pause_state.h"
#include "server/serial_executor.h"

namespace rollout::server {

struct ServiceEnv {
  ConfigManager* config = nullptr;
  Dispatcher* dispatcher = nullptr;
  Admission* admission = nullptr;
  PauseState* pause = nullptr;
  metrics::RolloutMetrics* metrics = nullptr;
  // Runs the blocking parts of Admin RPCs (file reads), one at a time.
  SerialExecutor* admin_executor = nullptr;
  // The model as read from model.path's config.json at start-up (null if it
  // could not be read); the dispatcher's model wins once it has one.
  std::shared_ptr<const rollout::v1::ModelInfo> startup_model;
  // The resolved model directory ("" if not found), for the default model
  // roots of UpdateWeights.
  std::string model_dir;

  // The model to validate against and to report: the workers' once known.
  std::shared_ptr<const rollout::v1::ModelInfo> CurrentModel() const {
    auto model = dispatcher->Model();
    return model != nullptr ? model : startup_model;
  }
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_SERVICE_ENV_H_
