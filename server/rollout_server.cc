#include "server/rollout_server.h"

#include <iostream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/mutex.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "metrics/metrics_exposer.h"
#include "prometheus/registry.h"
#include "server/admin_service.h"
#include "server/admission.h"
#include "server/build_info.h"
#include "server/config/model_path.h"
#include "server/health_fanout.h"
#include "server/health_monitor.h"
#include "server/model_info.h"
#include "server/no_worker_dispatcher.h"
#include "server/pause_state.h"
#include "server/rollout_service.h"
#include "server/serial_executor.h"
#include "server/server_credentials.h"

namespace rollout::server {
namespace {

// "host:0" + bound port -> "host:<port>"; unix addresses stay as they are.
std::string BoundAddress(const std::string& listen, int port) {
  if (absl::StartsWith(listen, "unix:")) return listen;
  return absl::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
}

void ApplyTransport(const rollout::v1::TransportConfig& t,
                    grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(
      static_cast<int>(t.max_receive_message_bytes()));
  builder->SetMaxSendMessageSize(static_cast<int>(t.max_send_message_bytes()));
  const auto& k = t.keepalive();
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                              k.time_seconds() * 1000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                              k.timeout_seconds() * 1000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
                              k.permit_without_calls() ? 1 : 0);
  builder->AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      k.min_client_ping_interval_seconds() * 1000);
}

void Warn(absl::string_view message) {
  std::cerr << "rolloutd: warning: " << message << std::endl;
}

// Lets the dispatcher trigger a health evaluation; the monitor is attached
// after the dispatcher exists and detached before it stops.
class HealthKick {
 public:
  void Attach(HealthMonitor* monitor) ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    monitor_ = monitor;
  }
  void Kick() ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    if (monitor_ != nullptr) monitor_->Evaluate();
  }

 private:
  rollout::Mutex mu_;
  HealthMonitor* monitor_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace

// Members are destroyed in reverse order: the gRPC server (which references
// the services) first, the config last.
struct RolloutServer::State {
  std::unique_ptr<ConfigManager> config;
  std::shared_ptr<prometheus::Registry> registry;
  std::unique_ptr<metrics::RolloutMetrics> metrics;
  std::shared_ptr<HealthKick> health_kick = std::make_shared<HealthKick>();
  std::unique_ptr<Dispatcher> dispatcher;
  std::unique_ptr<Admission> admission;
  std::unique_ptr<PauseState> pause;
  std::unique_ptr<SerialExecutor> admin_executor;
  std::unique_ptr<RolloutService> rollout_service;
  std::unique_ptr<AdminService> admin_service;
  std::unique_ptr<metrics::MetricsExposer> exposer;
  std::unique_ptr<grpc::Server> grpc_server;
  // Plaintext grpc.health.v1-only server (health_listen); null when unset.
  std::unique_ptr<grpc::Server> health_server;
  std::unique_ptr<HealthFanout> health_fanout;  // both servers' health
  std::unique_ptr<HealthMonitor> health;
  std::string grpc_address;
  std::string health_address;
  bool shut_down = false;
};

absl::StatusOr<std::unique_ptr<RolloutServer>> RolloutServer::Start(
    RolloutServerOptions options) {
  auto s = std::make_unique<State>();
  auto config = ConfigManager::Create(
      {options.config_path, std::move(options.overrides)});
  if (!config.ok()) return config.status();
  s->config = *std::move(config);
  const std::shared_ptr<const ConfigSnapshot> snapshot = s->config->Current();
  const rollout::v1::ServerConfig& c = snapshot->config;

  s->registry = std::make_shared<prometheus::Registry>();
  auto metrics = metrics::RolloutMetrics::Create(*s->registry,
                                                 {kVersion, kCommit, "none"});
  if (!metrics.ok()) return metrics.status();
  s->metrics = *std::move(metrics);
  s->metrics->SetConfigGeneration(snapshot->generation);

  // The model's description, for validation and GetServerInfo before any
  // worker is ready. Missing is not fatal here: workers report the model too.
  ServiceEnv env;
  auto model_dir =
      ResolveModelPath(c.model().path(), PathSearch::FromEnvironment());
  if (model_dir.ok()) {
    env.model_dir = *model_dir;
    auto info = ReadModelInfo(*model_dir);
    if (info.ok()) {
      env.startup_model =
          std::make_shared<const rollout::v1::ModelInfo>(*std::move(info));
    } else {
      Warn(absl::StrCat("cannot read the model's config.json: ",
                        info.status().message()));
    }
  } else {
    Warn(absl::StrCat(model_dir.status().message(),
                      "; token ids are not checked against a vocabulary until "
                      "a worker reports the model"));
  }

  DispatcherEnv dispatcher_env{snapshot, s->metrics.get(), env.model_dir,
                               [kick = s->health_kick] { kick->Kick(); }};
  if (options.dispatcher_factory) {
    auto dispatcher = options.dispatcher_factory(dispatcher_env);
    if (!dispatcher.ok()) return dispatcher.status();
    s->dispatcher = *std::move(dispatcher);
  } else {
    s->dispatcher = std::make_unique<NoWorkerDispatcher>();
  }
  s->metrics->SetBuildInfo({kVersion, kCommit, s->dispatcher->State().backend});

  s->admission = std::make_unique<Admission>(s->metrics.get());
  s->pause = std::make_unique<PauseState>(s->metrics.get());
  s->admin_executor = std::make_unique<SerialExecutor>();
  env.config = s->config.get();
  env.dispatcher = s->dispatcher.get();
  env.admission = s->admission.get();
  env.pause = s->pause.get();
  env.metrics = s->metrics.get();
  env.admin_executor = s->admin_executor.get();
  s->rollout_service = std::make_unique<RolloutService>(env);
  s->admin_service = std::make_unique<AdminService>(env);

  Dispatcher* dispatcher = s->dispatcher.get();
  metrics::RolloutMetrics* m = s->metrics.get();
  s->config->AddListener(
      [dispatcher, m](const std::shared_ptr<const ConfigSnapshot>& next) {
        m->SetConfigGeneration(next->generation);
        dispatcher->ApplyConfig(next);
      });

  auto exposer = metrics::MetricsExposer::Start(
      c.metrics_listen(), s->metrics->Exposition(s->registry));
  if (!exposer.ok()) return exposer.status();
  s->exposer = *std::move(exposer);

  auto credentials = MakeServerCredentials(c.security().tls());
  if (!credentials.ok()) return credentials.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(c.listen(), *credentials, &port);
  builder.RegisterService(s->rollout_service.get());
  builder.RegisterService(s->admin_service.get());
  ApplyTransport(c.transport(), &builder);
  s->grpc_server = builder.BuildAndStart();
  if (s->grpc_server == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve gRPC on ", c.listen()));
  }
  s->grpc_address = BoundAddress(c.listen(), port);

  if (!c.health_listen().empty()) {
    // Registers no service of its own: the default health service (enabled
    // above) is all it serves. Reflection, a global builder plugin, comes
    // along and lists only that.
    grpc::ServerBuilder health_builder;
    int health_port = 0;
    health_builder.AddListeningPort(
        c.health_listen(), grpc::InsecureServerCredentials(), &health_port);
    s->health_server = health_builder.BuildAndStart();
    if (s->health_server == nullptr || health_port == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot serve health_listen on ", c.health_listen()));
    }
    s->health_address = BoundAddress(c.health_listen(), health_port);
  }

  s->health_fanout = std::make_unique<HealthFanout>(
      std::vector<grpc::HealthCheckServiceInterface*>{
          s->grpc_server->GetHealthCheckService(),
          s->health_server != nullptr
              ? s->health_server->GetHealthCheckService()
              : nullptr});
  grpc::HealthCheckServiceInterface* health = s->health_fanout.get();
  health->SetServingStatus("", true);
  s->health = std::make_unique<HealthMonitor>(health, s->dispatcher.get(),
                                              s->config.get(), s->metrics.get(),
                                              options.health_period);
  s->health->Start();
  s->health_kick->Attach(s->health.get());

  if (snapshot->admin_token.empty() && !absl::StartsWith(c.listen(), "127.") &&
      !absl::StartsWith(c.listen(), "localhost:") &&
      !absl::StartsWith(c.listen(), "[::1]:") &&
      !absl::StartsWith(c.listen(), "unix:")) {
    Warn(absl::StrCat("Admin RPCs are open to anyone who reaches ", c.listen(),
                      "; set security.admin_token_file"));
  }
  return std::unique_ptr<RolloutServer>(new RolloutServer(std::move(s)));
}

RolloutServer::RolloutServer(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

RolloutServer::~RolloutServer() { Shutdown(absl::ZeroDuration()); }

const std::string& RolloutServer::grpc_address() const {
  return state_->grpc_address;
}

const std::string& RolloutServer::metrics_address() const {
  return state_->exposer->address();
}

const std::string& RolloutServer::health_address() const {
  return state_->health_address;
}

ConfigManager& RolloutServer::config() { return *state_->config; }

void RolloutServer::Shutdown(absl::Duration grace) {
  if (state_->shut_down) return;
  state_->shut_down = true;
  state_->health_kick->Attach(nullptr);
  state_->health->Stop();
  // NOT_SERVING for every service first (on both listeners), so balancers
  // and probes stop sending work.
  state_->health_fanout->Shutdown();
  const absl::Time deadline = absl::Now() + grace;
  // Refuses new calls; running calls get until the deadline, then are
  // cancelled (which reaches the dispatcher through CallHandle::Cancel).
  state_->grpc_server->Shutdown(absl::ToChronoTime(deadline));
  state_->dispatcher->Shutdown(deadline);
  // Last: probes keep getting answers (NOT_SERVING) while the drain runs.
  if (state_->health_server != nullptr) {
    state_->health_server->Shutdown(absl::ToChronoTime(absl::Now()));
  }
}

}  // namespace rollout::server
