#include "worker/engine/stats.h"

#include <algorithm>

namespace rollout::worker {

Histogram Histogram::Latency() {
  Histogram h;
  for (double b = 0.001; b < 200.0; b *= 2) h.bounds.push_back(b);
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

Histogram Histogram::BatchSize() {
  Histogram h;
  for (double b = 1; b <= 1024; b *= 2) h.bounds.push_back(b);
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

void Histogram::Observe(double value) {
  const size_t i =
      std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[i];
  sum += value;
  ++count;
}

}  // namespace rollout::worker
