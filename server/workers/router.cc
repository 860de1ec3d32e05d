#include "server/workers/router.h"

#include <algorithm>
#include <tuple>

namespace rollout::server::workers {

Route PickWorker(absl::Span<const WorkerLoad> workers,
                 uint64_t min_weight_version) {
  Route route;
  bool any_ready = false;
  bool any_recent = false;
  for (int i = 0; i < static_cast<int>(workers.size()); ++i) {
    const WorkerLoad& w = workers[i];
    if (!w.ready) continue;
    any_ready = true;
    route.newest_version = std::max(route.newest_version, w.weight_version);
    if (w.weight_version < min_weight_version) continue;
    any_recent = true;
    if (w.outstanding_requests >= w.capacity) continue;
    if (route.worker < 0 ||
        std::make_tuple(w.outstanding_tokens, w.outstanding_requests) <
            std::make_tuple(workers[route.worker].outstanding_tokens,
                            workers[route.worker].outstanding_requests)) {
      route.worker = i;
    }
  }
  if (route.worker >= 0) {
    route.outcome = Route::kRouted;
  } else if (any_recent) {
    route.outcome = Route::kQueue;
  } else if (any_ready) {
    route.outcome = Route::kVersionTooOld;
  } else {
    route.outcome = Route::kNoWorker;
  }
  return route;
}

}  // namespace rollout::server::workers
