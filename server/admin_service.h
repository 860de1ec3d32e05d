// The rollout.v1.Admin gRPC service: ReloadConfig, UpdateWeights, Pause,
// Resume (callback API; blocking steps run on the admin executor).
//
// Every call first checks the bearer token when security.admin_token_file is
// configured (UNAUTHENTICATED otherwise; the token never appears in errors).
// ReloadConfig: ConfigManager::Reload; a rejected reload answers its error
// and sends the per-field report as trailing metadata
// "rollout-reload-report-bin". Outcomes are counted in
// rollout_config_reloads_total{result}; the generation gauge follows.
#ifndef ROLLOUT_SERVER_ADMIN_SERVICE_H_
#define ROLLOUT_SERVER_ADMIN_SERVICE_H_

#include "rollout/v1/admin.grpc.pb.h"
#include "server/service_env.h"

namespace rollout::server {

inline constexpr char kReloadReportMetadata[] = "rollout-reload-report-bin";

class AdminService final : public rollout::v1::Admin::CallbackService {
 public:
  explicit AdminService(const ServiceEnv& env) : env_(env) {}

  grpc::ServerUnaryReactor* ReloadConfig(
      grpc::CallbackServerContext* context,
      const rollout::v1::ReloadConfigRequest* request,
      rollout::v1::ReloadConfigResponse* response) override;

  grpc::ServerUnaryReactor* UpdateWeights(
      grpc::CallbackServerContext* context,
      const rollout::v1::UpdateWeightsRequest* request,
      rollout::v1::UpdateWeightsResponse* response) override;

  grpc::ServerUnaryReactor* Pause(
      grpc::CallbackServerContext* context,
      const rollout::v1::PauseRequest* request,
      rollout::v1::PauseResponse* response) override;

  grpc::ServerUnaryReactor* Resume(
      grpc::CallbackServerContext* context,
      const rollout::v1::ResumeRequest* request,
      rollout::v1::ResumeResponse* response) override;

 private:
  const ServiceEnv env_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ADMIN_SERVICE_H_
