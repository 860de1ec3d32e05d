// rolloutd: the gRPC front end of the rollout service (DESIGN.md section 2).
//
//   rolloutd [--config=FILE] [--listen=HOST:PORT] [--metrics_listen=HOST:PORT]
//            [--worker_binary=PATH]
//
// Prints "listening on <addr>", then "metrics on <addr>" and, with
// health_listen set, "health on <addr>" (real ports, so
// scripts can pass port 0), starts the rollout-worker processes of the
// config (workers.*; by default one, on the embedded tiny model), serves
// until SIGTERM or SIGINT, then drains for shutdown_grace_seconds and stops
// the workers. Generate answers UNAVAILABLE until a worker is ready (health
// of "rollout.v1.Rollout" turns SERVING then).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "server/config/config_io.h"
#include "server/config/config_manager.h"
#include "server/rollout_server.h"
#include "server/workers/worker_binary.h"
#include "server/workers/worker_pool.h"

ABSL_FLAG(std::string, config, "",
          "Server config file (rollout.v1.ServerConfig, text format or .json). "
          "Default: built-in defaults (server/config/default.textproto). "
          "Env: ROLLOUTD_CONFIG.");
ABSL_FLAG(std::string, listen, "",
          "gRPC listen address host:port (port 0 picks one) or unix:PATH; "
          "overrides the config's listen. Env: ROLLOUTD_LISTEN.");
ABSL_FLAG(
    std::string, metrics_listen, "",
    "Prometheus /metrics address host:port (port 0 picks one); "
    "overrides the config's metrics_listen. Env: ROLLOUTD_METRICS_LISTEN.");
ABSL_FLAG(std::string, worker_binary, "",
          "rollout-worker executable; overrides the config's workers.binary. "
          "Default: found next to rolloutd or in its Bazel runfiles. Env: "
          "ROLLOUTD_WORKER_BINARY.");
ABSL_FLAG(bool, check_config, false,
          "Validate the config, print it with every default filled in, and "
          "exit (0 valid, 1 invalid).");

namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int signal_number) {
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  // write() is async-signal-safe; nothing else happens in the handler.
  (void)!write(g_signal_pipe[1], &byte, 1);
}

// A flag left empty takes its environment variable (handy in containers).
std::string FlagOrEnv(const absl::Flag<std::string>& flag, const char* env) {
  std::string value = absl::GetFlag(flag);
  if (value.empty()) {
    const char* from_env = std::getenv(env);
    if (from_env != nullptr) value = from_env;
  }
  return value;
}

// The worker pool: rollout-worker processes behind the Dispatcher.
rollout::server::DispatcherFactory WorkerPoolFactory(std::string binary_flag) {
  return [binary_flag](const rollout::server::DispatcherEnv& env)
             -> absl::StatusOr<std::unique_ptr<rollout::server::Dispatcher>> {
    const std::string configured = binary_flag.empty()
                                       ? env.config->config.workers().binary()
                                       : binary_flag;
    auto binary = rollout::server::workers::FindWorkerBinary(
        configured, rollout::server::workers::WorkerBinaryCandidates());
    if (!binary.ok()) return binary.status();
    rollout::server::workers::WorkerPoolOptions options;
    options.binary = *binary;
    auto pool = rollout::server::workers::WorkerPool::Create(env, options);
    if (!pool.ok()) return pool.status();
    return std::unique_ptr<rollout::server::Dispatcher>(*std::move(pool));
  };
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "rolloutd: gRPC rollout service for GRPO training (rollout.v1).");
  absl::ParseCommandLine(argc, argv);

  rollout::server::RolloutServerOptions options;
  options.config_path = FlagOrEnv(FLAGS_config, "ROLLOUTD_CONFIG");
  options.overrides.listen = FlagOrEnv(FLAGS_listen, "ROLLOUTD_LISTEN");
  options.overrides.metrics_listen =
      FlagOrEnv(FLAGS_metrics_listen, "ROLLOUTD_METRICS_LISTEN");
  options.dispatcher_factory = WorkerPoolFactory(
      FlagOrEnv(FLAGS_worker_binary, "ROLLOUTD_WORKER_BINARY"));

  if (absl::GetFlag(FLAGS_check_config)) {
    auto manager = rollout::server::ConfigManager::Create(
        {options.config_path, options.overrides});
    if (!manager.ok()) {
      std::cerr << "rolloutd: " << manager.status().message() << std::endl;
      return 1;
    }
    std::cout << rollout::server::ServerConfigToText(
        (*manager)->Current()->config);
    return 0;
  }

  // SIGTERM/SIGINT end the server through a self-pipe: libraries start
  // threads before main, so blocking the signals here would not cover every
  // thread, while a handler works on whichever thread receives them. A broken
  // client pipe must not kill the server.
  if (pipe(g_signal_pipe) != 0) {
    std::cerr << "rolloutd: pipe: " << std::strerror(errno) << std::endl;
    return 1;
  }
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto server = rollout::server::RolloutServer::Start(std::move(options));
  if (!server.ok()) {
    std::cerr << "rolloutd: " << server.status() << std::endl;
    return 1;
  }
  std::cout << "listening on " << (*server)->grpc_address() << "\n"
            << "metrics on " << (*server)->metrics_address() << std::endl;
  if (!(*server)->health_address().empty()) {
    std::cout << "health on " << (*server)->health_address() << std::endl;
  }

  unsigned char signal_number = 0;
  while (read(g_signal_pipe[0], &signal_number, 1) < 0 && errno == EINTR) {
  }
  const int grace =
      (*server)->config().Current()->config.shutdown_grace_seconds();
  std::cerr << "rolloutd: signal " << static_cast<int>(signal_number)
            << ", draining for up to " << grace << " s" << std::endl;
  (*server)->Shutdown(absl::Seconds(grace));
  return 0;
}
