#include "server/health_monitor.h"

namespace rollout::server {

HealthVerdict EvaluateHealth(const DispatcherState& state, int watchdog_seconds,
                             absl::Time now) {
  HealthVerdict verdict;
  verdict.stalled =
      watchdog_seconds > 0 && state.requests_running > 0 &&
      now - state.last_token_time > absl::Seconds(watchdog_seconds);
  verdict.serving = state.ready_workers > 0 && !verdict.stalled;
  return verdict;
}

HealthMonitor::HealthMonitor(grpc::HealthCheckServiceInterface* health,
                             const Dispatcher* dispatcher,
                             const ConfigManager* config,
                             metrics::RolloutMetrics* metrics,
                             absl::Duration period)
    : health_(health),
      dispatcher_(dispatcher),
      config_(config),
      metrics_(metrics),
      period_(period) {}

HealthMonitor::~HealthMonitor() { Stop(); }

void HealthMonitor::Start() {
  Evaluate();
  thread_ = std::thread([this] { Loop(); });
}

void HealthMonitor::Stop() {
  {
    rollout::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void HealthMonitor::Evaluate() {
  const HealthVerdict verdict = EvaluateHealth(
      dispatcher_->State(),
      config_->Current()->config.health().watchdog_seconds(), absl::Now());
  health_->SetServingStatus(kRolloutServiceName, verdict.serving);
  if (metrics_ != nullptr) metrics_->SetProgressStalled(verdict.stalled);
}

void HealthMonitor::Loop() {
  while (true) {
    {
      rollout::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), period_)) return;
    }
    Evaluate();
  }
}

}  // namespace rollout::server
