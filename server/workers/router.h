// Which worker gets the next group: among ready workers whose weights are
// recent enough (min_weight_version) and that have room (capacity), the one
// with the least outstanding work (tokens still to produce, then groups,
// then the lowest index). Pure.
#ifndef ROLLOUT_SERVER_WORKERS_ROUTER_H_
#define ROLLOUT_SERVER_WORKERS_ROUTER_H_

#include <cstdint>

#include "absl/types/span.h"

namespace rollout::server::workers {

struct WorkerLoad {
  bool ready = false;
  int outstanding_requests = 0;
  int capacity = 0;
  int64_t outstanding_tokens = 0;
  uint64_t weight_version = 0;
};

struct Route {
  enum Outcome {
    kRouted,         // `worker` takes it
    kQueue,          // a suitable worker exists but is full: wait
    kNoWorker,       // no worker is ready
    kVersionTooOld,  // ready workers serve older weights than asked
  };
  Outcome outcome = kNoWorker;
  int worker = -1;
  uint64_t newest_version = 0;  // over ready workers (for messages)
};

Route PickWorker(absl::Span<const WorkerLoad> workers,
                 uint64_t min_weight_version);

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_ROUTER_H_
