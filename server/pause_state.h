// PauseState: whether Admin.Pause is in effect. While paused, the front end
// answers new Generate and Score calls with FAILED_PRECONDITION. Thread-safe.
#ifndef ROLLOUT_SERVER_PAUSE_STATE_H_
#define ROLLOUT_SERVER_PAUSE_STATE_H_

#include <atomic>

#include "absl/status/status.h"
#include "metrics/rollout_metrics.h"

namespace rollout::server {

class PauseState {
 public:
  // `metrics` may be null; else rollout_paused follows the state.
  explicit PauseState(metrics::RolloutMetrics* metrics) : metrics_(metrics) {}

  bool paused() const { return paused_.load(std::memory_order_acquire); }
  void Set(bool paused) {
    paused_.store(paused, std::memory_order_release);
    if (metrics_ != nullptr) metrics_->SetPaused(paused);
  }
  // FAILED_PRECONDITION while paused, else OK.
  absl::Status CheckNotPaused() const {
    return paused() ? absl::FailedPreconditionError(
                          "server is paused (Admin.Pause); retry after "
                          "Admin.Resume")
                    : absl::OkStatus();
  }

 private:
  metrics::RolloutMetrics* const metrics_;
  std::atomic<bool> paused_{false};
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_PAUSE_STATE_H_
