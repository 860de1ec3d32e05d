// NoWorkerDispatcher: the Dispatcher of a rolloutd without workers. It is
// honest about it: Generate and Score answer UNAVAILABLE "no worker is
// serving" (clients retry UNAVAILABLE, possibly on another replica), health
// of "rollout.v1.Rollout" stays NOT_SERVING (ready_workers == 0).
#ifndef ROLLOUT_SERVER_NO_WORKER_DISPATCHER_H_
#define ROLLOUT_SERVER_NO_WORKER_DISPATCHER_H_

#include <memory>

#include "server/dispatcher.h"

namespace rollout::server {

class NoWorkerDispatcher final : public Dispatcher {
 public:
  std::unique_ptr<CallHandle> Generate(
      std::shared_ptr<const rollout::v1::GenerateRequest> request, bool stream,
      const CallContext& context, GenerateSink* sink) override;
  std::unique_ptr<CallHandle> Score(
      std::shared_ptr<const rollout::v1::ScoreRequest> request,
      const CallContext& context,
      Callback<rollout::v1::ScoreResponse> done) override;
  void Abort(const rollout::v1::AbortRequest& request,
             Callback<rollout::v1::AbortResponse> done) override;
  void Pause(rollout::v1::PauseMode mode, absl::Time deadline,
             Callback<rollout::v1::PauseResponse> done) override;
  void Resume(Callback<rollout::v1::ResumeResponse> done) override;
  void UpdateWeights(
      const rollout::v1::UpdateWeightsRequest& request, absl::Time deadline,
      Callback<rollout::v1::UpdateWeightsResponse> done) override;
  void ApplyConfig(std::shared_ptr<const ConfigSnapshot> config) override {}
  DispatcherState State() const override { return DispatcherState(); }
  std::shared_ptr<const rollout::v1::ModelInfo> Model() const override {
    return nullptr;
  }
  void Shutdown(absl::Time deadline) override {}
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_NO_WORKER_DISPATCHER_H_
