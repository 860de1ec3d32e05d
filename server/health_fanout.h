// HealthFanout: one grpc::HealthCheckServiceInterface that forwards every
// status change to several others.
//
// rolloutd can serve grpc.health.v1 on two servers: the main one (maybe TLS)
// and an optional plaintext health-only one (ServerConfig.health_listen, for
// kubelet's gRPC probes, which cannot speak TLS). Each grpc::Server has its
// own default health service; HealthMonitor drives this fan-out so both always
// report the same statuses.
#ifndef ROLLOUT_SERVER_HEALTH_FANOUT_H_
#define ROLLOUT_SERVER_HEALTH_FANOUT_H_

#include <string>
#include <vector>

#include "grpcpp/health_check_service_interface.h"

namespace rollout::server {

class HealthFanout final : public grpc::HealthCheckServiceInterface {
 public:
  // Targets are not owned and must outlive the fan-out; null entries are
  // skipped. The set is fixed at construction (no locking needed).
  explicit HealthFanout(
      std::vector<grpc::HealthCheckServiceInterface*> targets);

  void SetServingStatus(const std::string& service_name, bool serving) override;
  void SetServingStatus(bool serving) override;
  void Shutdown() override;

 private:
  const std::vector<grpc::HealthCheckServiceInterface*> targets_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_HEALTH_FANOUT_H_
