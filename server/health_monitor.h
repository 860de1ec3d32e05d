// HealthMonitor: drives grpc.health.v1 for service "rollout.v1.Rollout" and
// the watchdog gauges.
//
// "rollout.v1.Rollout" is SERVING when at least one worker is ready and the
// progress watchdog is fine: NOT_SERVING when requests are running but no
// token came out for health.watchdog_seconds (a hung engine that still
// answers RPCs). Service "" is the process itself (SERVING until shutdown).
// A pause does not change health: it is short and trainer-initiated, and
// taking the replica out of load balancing would fail the trainer's calls.
//
// A background thread re-evaluates every `period`; Stop() (or the destructor)
// ends it.
#ifndef ROLLOUT_SERVER_HEALTH_MONITOR_H_
#define ROLLOUT_SERVER_HEALTH_MONITOR_H_

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "grpcpp/health_check_service_interface.h"
#include "metrics/rollout_metrics.h"
#include "server/config/config_manager.h"
#include "server/dispatcher.h"

namespace rollout::server {

inline constexpr char kRolloutServiceName[] = "rollout.v1.Rollout";

struct HealthVerdict {
  bool serving = false;  // of "rollout.v1.Rollout"
  bool stalled = false;  // the watchdog fired
};

// Pure: the verdict for a dispatcher state. watchdog_seconds 0 disables the
// watchdog.
HealthVerdict EvaluateHealth(const DispatcherState& state, int watchdog_seconds,
                             absl::Time now);

class HealthMonitor {
 public:
  // Nothing is owned; all must outlive the monitor. `metrics` may be null.
  HealthMonitor(grpc::HealthCheckServiceInterface* health,
                const Dispatcher* dispatcher, const ConfigManager* config,
                metrics::RolloutMetrics* metrics, absl::Duration period);
  ~HealthMonitor();

  // Evaluates once now, then every period on a background thread.
  void Start();
  // Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // One evaluation (also used by Start and the thread).
  void Evaluate();

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  grpc::HealthCheckServiceInterface* const health_;
  const Dispatcher* const dispatcher_;
  const ConfigManager* const config_;
  metrics::RolloutMetrics* const metrics_;
  const absl::Duration period_;
  rollout::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_HEALTH_MONITOR_H_
