// MetricsExposer: serves a prometheus-cpp registry as GET /metrics over HTTP
// (prometheus-cpp's Exposer, civetweb underneath).
//
//   auto registry = std::make_shared<prometheus::Registry>();
//   ASSIGN_OR_RETURN(auto exposer,
//                    MetricsExposer::Start("127.0.0.1:0", registry));
//   std::cout << "metrics on " << exposer->address() << "\n";
//
// Keep CUDA libraries out of the process that runs it (docs/BUILD.md: cuBLAS's
// static TLS makes civetweb's small thread stacks fail at start).
#ifndef ROLLOUT_METRICS_METRICS_EXPOSER_H_
#define ROLLOUT_METRICS_METRICS_EXPOSER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace rollout::metrics {

class MetricsExposer {
 public:
  // Binds `listen` ("host:port", "[v6]:port"; port 0 picks a free port) and
  // serves `collectable` at /metrics (kept alive by the exposer: prometheus-cpp
  // itself holds only a weak reference). UNAVAILABLE if the address cannot be
  // bound; INVALID_ARGUMENT if it is malformed.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      const std::string& listen,
      const std::shared_ptr<prometheus::Collectable>& collectable);

  // The bound address, "host:port" with the real port.
  const std::string& address() const { return address_; }

 private:
  MetricsExposer(std::shared_ptr<prometheus::Collectable> collectable,
                 std::unique_ptr<prometheus::Exposer> exposer,
                 std::string address)
      : collectable_(std::move(collectable)),
        exposer_(std::move(exposer)),
        address_(std::move(address)) {}

  std::shared_ptr<prometheus::Collectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string address_;
};

}  // namespace rollout::metrics

#endif  // ROLLOUT_METRICS_METRICS_EXPOSER_H_
