// Prints the /metrics text that rolloutd's metrics registry serves right after start-up (every
// catalog family with its HELP and TYPE lines, before any worker reported a value). The deploy tests
// check the metric names of the Grafana dashboard and the Prometheus rules against it
// (deploy/tests/metric_names_test.py); a live rolloutd is checked the same way through its URL.
#include <iostream>
#include <memory>

#include "metrics/rollout_metrics.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

int main() {
  auto registry = std::make_shared<prometheus::Registry>();
  auto metrics = rollout::metrics::RolloutMetrics::Create(
      *registry, rollout::metrics::BuildInfo{"0.0.0", "test", "none"});
  if (!metrics.ok()) {
    std::cerr << "dump_exposition: " << metrics.status() << "\n";
    return 1;
  }
  prometheus::TextSerializer serializer;
  std::cout << serializer.Serialize((*metrics)->Exposition(registry)->Collect());
  return 0;
}
