// Options of one rollout-worker process (its command-line flags, set by
// rolloutd from the server config; see server/workers/worker_args.h).
#ifndef ROLLOUT_WORKER_SERVICE_WORKER_OPTIONS_H_
#define ROLLOUT_WORKER_SERVICE_WORKER_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "worker/engine/engine_options.h"

namespace rollout::worker::service {

struct WorkerOptions {
  // Index among rolloutd's workers (metrics label, logs, "auto" device).
  int index = 0;
  // Unix socket path the internal API is served on. Its directory must
  // exist; rolloutd makes it private (0700).
  std::string socket_path;
  // Hugging Face checkpoint directory (config.json + *.safetensors).
  std::string model_dir;
  // "auto", "cpu" or "cuda:<i>" (device_choice.h).
  std::string device = "auto";
  // CPU backend threads for intra-row loops; 0 = hardware concurrency.
  int threads = 0;
  // Weights to serve instead of model_dir's (a restart after UpdateWeights),
  // with their version (> 0). Empty: model_dir's weights, version 0.
  std::string weights_dir;
  int64_t weight_version = 0;
  // On SIGTERM: seconds to let running requests finish before aborting them.
  int drain_seconds = 30;
  EngineOptions engine;

  absl::Status Validate() const;
  // Groups the worker accepts at once: running (at most one per state slot)
  // plus waiting in the engine. rolloutd keeps what is beyond.
  int Capacity() const {
    return engine.max_num_seqs + engine.max_waiting_groups;
  }
};

}  // namespace rollout::worker::service

#endif  // ROLLOUT_WORKER_SERVICE_WORKER_OPTIONS_H_
