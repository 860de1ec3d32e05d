// When a worker that exited is started again.
//
// The first restart after a healthy run is immediate: a one-off crash costs
// only the model load. Each further failure in a row doubles the wait
// (1 s, 2 s, 4 s, ...) up to workers.restart_backoff_max_seconds, and the
// worker counts as crash-looping (rollout_worker_crashloop = 1) while it
// waits. A worker that stayed ready for `healthy_after` starts afresh.
#ifndef ROLLOUT_SERVER_WORKERS_RESTART_POLICY_H_
#define ROLLOUT_SERVER_WORKERS_RESTART_POLICY_H_

#include "absl/time/time.h"

namespace rollout::server::workers {

struct RestartPolicy {
  absl::Duration first_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(60);
  // Ready this long: the failure count goes back to zero.
  absl::Duration healthy_after = absl::Seconds(30);

  // Wait before the next start after `failures` failures in a row (>= 1).
  absl::Duration Delay(int failures) const;
  // Crash-looping: more than one failure in a row.
  static bool CrashLooping(int failures) { return failures >= 2; }
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_RESTART_POLICY_H_
