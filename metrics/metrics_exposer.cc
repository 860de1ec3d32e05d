#include "metrics/metrics_exposer.h"

#include <exception>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rollout::metrics {

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    const std::string& listen,
    const std::shared_ptr<prometheus::Collectable>& collectable) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(absl::string_view(listen).substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics listen address must be host:port, got \"", listen, "\""));
  }
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // civetweb throws when it cannot bind; that must not escape as an
    // exception.
    exposer = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve /metrics on ", listen, ": ", e.what()));
  }
  exposer->RegisterCollectable(collectable);
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve /metrics on ", listen, ": no port bound"));
  }
  std::string address = absl::StrCat(listen.substr(0, colon), ":", ports[0]);
  return std::unique_ptr<MetricsExposer>(
      new MetricsExposer(collectable, std::move(exposer), std::move(address)));
}

}  // namespace rollout::metrics
