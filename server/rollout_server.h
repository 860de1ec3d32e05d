// RolloutServer: all of rolloutd in one object (config, metrics registry and
// /metrics, dispatcher, admission, gRPC services with health and reflection,
// health monitor). main.cc parses flags and calls Start; tests start it
// in-process on port 0.
//
//   RolloutServerOptions options;
//   options.config_path = "...";                      // optional
//   options.overrides.listen = "127.0.0.1:0";
//   ASSIGN_OR_RETURN(auto server, RolloutServer::Start(std::move(options)));
//   std::cout << "listening on " << server->grpc_address() << "\n";
//   ...
//   server->Shutdown(absl::Seconds(30));
#ifndef ROLLOUT_SERVER_ROLLOUT_SERVER_H_
#define ROLLOUT_SERVER_ROLLOUT_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "metrics/rollout_metrics.h"
#include "server/config/config_manager.h"
#include "server/dispatcher.h"

namespace rollout::server {

// What a dispatcher factory gets to build the dispatcher.
struct DispatcherEnv {
  std::shared_ptr<const ConfigSnapshot> config;  // the start-up config
  metrics::RolloutMetrics* metrics = nullptr;    // outlives the dispatcher
  std::string model_dir;  // resolved model.path ("" if not found)
  // The dispatcher calls this (any thread, holding none of its locks) when
  // its State() changed in a way health cares about (a worker became ready
  // or was lost): health is re-evaluated at once instead of at the next
  // period. Set by RolloutServer; may be empty.
  std::function<void()> state_changed;
};

using DispatcherFactory =
    std::function<absl::StatusOr<std::unique_ptr<Dispatcher>>(
        const DispatcherEnv&)>;

struct RolloutServerOptions {
  // Config file; empty: built-in defaults.
  std::string config_path;
  // Command-line values that win over the file.
  ConfigOverrides overrides;
  // Builds the dispatcher; unset: NoWorkerDispatcher (no workers).
  DispatcherFactory dispatcher_factory;
  // How often health is re-evaluated.
  absl::Duration health_period = absl::Milliseconds(500);
};

class RolloutServer {
 public:
  // Loads the config, binds both listeners and starts serving. Errors:
  // INVALID_ARGUMENT / FAILED_PRECONDITION for the config, UNAVAILABLE when
  // an address cannot be bound.
  static absl::StatusOr<std::unique_ptr<RolloutServer>> Start(
      RolloutServerOptions options);

  ~RolloutServer();  // Shutdown(0) if not done yet
  RolloutServer(const RolloutServer&) = delete;
  RolloutServer& operator=(const RolloutServer&) = delete;

  // Bound addresses, "host:port" with the real ports.
  const std::string& grpc_address() const;
  const std::string& metrics_address() const;
  // Bound health_listen address; empty when health_listen is unset.
  const std::string& health_address() const;

  ConfigManager& config();

  // Health goes NOT_SERVING, new calls are refused, running calls get up to
  // `grace` to finish, then are cancelled; the dispatcher stops. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  struct State;
  explicit RolloutServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ROLLOUT_SERVER_H_
