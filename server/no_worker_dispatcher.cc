#include "server/no_worker_dispatcher.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace rollout::server {
namespace {

constexpr char kNoWorker[] = "no worker is serving";

class DoneHandle final : public CallHandle {
 public:
  void Cancel() override {}  // the call has already finished
};

}  // namespace

std::unique_ptr<CallHandle> NoWorkerDispatcher::Generate(
    std::shared_ptr<const rollout::v1::GenerateRequest> request, bool stream,
    const CallContext& context, GenerateSink* sink) {
  sink->Finish(absl::UnavailableError(kNoWorker));
  return std::make_unique<DoneHandle>();
}

std::unique_ptr<CallHandle> NoWorkerDispatcher::Score(
    std::shared_ptr<const rollout::v1::ScoreRequest> request,
    const CallContext& context, Callback<rollout::v1::ScoreResponse> done) {
  done(absl::UnavailableError(kNoWorker));
  return std::make_unique<DoneHandle>();
}

void NoWorkerDispatcher::Abort(const rollout::v1::AbortRequest& request,
                               Callback<rollout::v1::AbortResponse> done) {
  if (request.target_case() == rollout::v1::AbortRequest::kRequestId) {
    done(absl::NotFoundError(absl::StrCat("no running request has id \"",
                                          request.request_id(), "\"")));
    return;
  }
  done(rollout::v1::AbortResponse());  // all: nothing was running
}

void NoWorkerDispatcher::Pause(rollout::v1::PauseMode mode, absl::Time deadline,
                               Callback<rollout::v1::PauseResponse> done) {
  done(rollout::v1::PauseResponse());  // nothing to abort, wait for or keep
}

void NoWorkerDispatcher::Resume(Callback<rollout::v1::ResumeResponse> done) {
  done(rollout::v1::ResumeResponse());
}

void NoWorkerDispatcher::UpdateWeights(
    const rollout::v1::UpdateWeightsRequest& request, absl::Time deadline,
    Callback<rollout::v1::UpdateWeightsResponse> done) {
  done(absl::UnavailableError(
      absl::StrCat(kNoWorker, ": no worker to load the weights")));
}

}  // namespace rollout::server
