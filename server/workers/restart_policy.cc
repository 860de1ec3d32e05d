#include "server/workers/restart_policy.h"

#include <algorithm>

namespace rollout::server::workers {

absl::Duration RestartPolicy::Delay(int failures) const {
  if (failures <= 1) return absl::ZeroDuration();
  absl::Duration delay = first_backoff;
  for (int i = 2; i < failures && delay < max_backoff; ++i) delay *= 2;
  return std::min(delay, max_backoff);
}

}  // namespace rollout::server::workers
