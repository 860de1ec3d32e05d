#include "server/health_fanout.h"

#include <utility>

namespace rollout::server {

HealthFanout::HealthFanout(
    std::vector<grpc::HealthCheckServiceInterface*> targets)
    : targets_(std::move(targets)) {}

void HealthFanout::SetServingStatus(const std::string& service_name,
                                    bool serving) {
  for (auto* t : targets_) {
    if (t != nullptr) t->SetServingStatus(service_name, serving);
  }
}

void HealthFanout::SetServingStatus(bool serving) {
  for (auto* t : targets_) {
    if (t != nullptr) t->SetServingStatus(serving);
  }
}

void HealthFanout::Shutdown() {
  for (auto* t : targets_) {
    if (t != nullptr) t->Shutdown();
  }
}

}  // namespace rollout::server
