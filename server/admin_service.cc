#include "server/admin_service.h"

#include <string>
#include <utility>
#include <vector>

#include "server/admin_auth.h"
#include "server/grpc_status.h"
#include "server/model_roots.h"
#include "server/reactor_util.h"
#include "server/request_validator.h"

namespace rollout::server {
namespace {

using metrics::ReloadResult;

absl::Status Authenticate(const ServiceEnv& env,
                          const grpc::CallbackServerContext* context) {
  return CheckAdminToken(context->client_metadata(),
                         env.config->Current()->admin_token);
}

void FinishCall(const ServiceEnv& env, grpc::ServerUnaryReactor* reactor,
                absl::string_view rpc, const absl::Status& status) {
  RecordFinish(env, rpc, status);
  reactor->Finish(ToGrpcStatus(status));
}

}  // namespace

grpc::ServerUnaryReactor* AdminService::ReloadConfig(
    grpc::CallbackServerContext* context,
    const rollout::v1::ReloadConfigRequest* request,
    rollout::v1::ReloadConfigResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status auth = Authenticate(env_, context); !auth.ok()) {
    if (env_.metrics != nullptr) {
      env_.metrics->RecordReload(ReloadResult::kUnauthenticated);
    }
    FinishCall(env_, reactor, "ReloadConfig", auth);
    return reactor;
  }
  const ServiceEnv* env = &env_;
  // Reading the file blocks: not on a gRPC thread.
  env_.admin_executor->Schedule([env, context, request, response, reactor] {
    ConfigManager::ReloadOutcome outcome = env->config->Reload(*request);
    if (env->metrics != nullptr) {
      env->metrics->RecordReload(!outcome.status.ok() ? ReloadResult::kRejected
                                 : request->dry_run() ? ReloadResult::kDryRun
                                                      : ReloadResult::kApplied);
    }
    if (outcome.status.ok()) {
      *response = std::move(outcome.report);
    } else {
      context->AddTrailingMetadata(kReloadReportMetadata,
                                   outcome.report.SerializeAsString());
    }
    FinishCall(*env, reactor, "ReloadConfig", outcome.status);
  });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::UpdateWeights(
    grpc::CallbackServerContext* context,
    const rollout::v1::UpdateWeightsRequest* request,
    rollout::v1::UpdateWeightsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const ServiceEnv* env = &env_;
  auto finish = [env, reactor](const absl::Status& status) {
    if (env->metrics != nullptr) {
      env->metrics->families()
          .weight_updates.Add({{"result", status.ok() ? "ok" : "rejected"}})
          .Increment();
    }
    FinishCall(*env, reactor, "UpdateWeights", status);
  };
  absl::Status status = Authenticate(env_, context);
  if (status.ok()) status = ValidateUpdateWeightsRequest(*request);
  if (!status.ok()) {
    finish(status);
    return reactor;
  }
  const absl::Time deadline = DeadlineOf(context);
  // Resolving the path touches the file system: not on a gRPC thread.
  env_.admin_executor->Schedule([env, request, response, deadline, finish] {
    const auto& configured = env->config->Current()->config.model().roots();
    const std::vector<std::string> roots = EffectiveModelRoots(
        {configured.begin(), configured.end()}, env->model_dir);
    auto confined = ConfineToModelRoots(request->path(), roots);
    if (!confined.ok()) {
      finish(confined.status());
      return;
    }
    rollout::v1::UpdateWeightsRequest resolved = *request;
    resolved.set_path(*confined);
    env->dispatcher->UpdateWeights(
        resolved, deadline,
        [response,
         finish](absl::StatusOr<rollout::v1::UpdateWeightsResponse> result) {
          if (result.ok()) *response = *std::move(result);
          finish(result.status());
        });
  });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::Pause(
    grpc::CallbackServerContext* context,
    const rollout::v1::PauseRequest* request,
    rollout::v1::PauseResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status status = Authenticate(env_, context);
  if (status.ok()) status = ValidatePauseRequest(*request);
  if (!status.ok()) {
    FinishCall(env_, reactor, "Pause", status);
    return reactor;
  }
  // Stop admitting first, so nothing new starts while the workers pause.
  env_.pause->Set(true);
  const rollout::v1::PauseMode mode =
      request->mode() == rollout::v1::PAUSE_MODE_UNSPECIFIED
          ? rollout::v1::PAUSE_MODE_WAIT
          : request->mode();
  const ServiceEnv* env = &env_;
  env_.dispatcher->Pause(
      mode, DeadlineOf(context),
      [env, reactor,
       response](absl::StatusOr<rollout::v1::PauseResponse> result) {
        if (result.ok()) *response = *std::move(result);
        FinishCall(*env, reactor, "Pause", result.status());
      });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::Resume(
    grpc::CallbackServerContext* context,
    const rollout::v1::ResumeRequest* request,
    rollout::v1::ResumeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status auth = Authenticate(env_, context); !auth.ok()) {
    FinishCall(env_, reactor, "Resume", auth);
    return reactor;
  }
  const ServiceEnv* env = &env_;
  env_.dispatcher->Resume(
      [env, reactor,
       response](absl::StatusOr<rollout::v1::ResumeResponse> result) {
        if (result.ok()) {
          *response = *std::move(result);
          env->pause->Set(false);
        }
        FinishCall(*env, reactor, "Resume", result.status());
      });
  return reactor;
}

}  // namespace rollout::server
