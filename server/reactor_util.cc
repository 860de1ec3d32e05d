#include "server/reactor_util.h"

#include <chrono>
#include <string>
#include <utility>

#include "server/field_error.h"
#include "server/grpc_status.h"

namespace rollout::server {

void CancelSlot::Set(std::unique_ptr<CallHandle> handle) {
  rollout::MutexLock lock(&mu_);
  handle_ = std::move(handle);
  // Cancel() does not block and never calls back into the sink inline
  // (CallHandle contract), so calling it under the lock is safe.
  if (cancelled_ && handle_ != nullptr) handle_->Cancel();
}

void CancelSlot::Cancel() {
  rollout::MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  if (handle_ != nullptr) handle_->Cancel();
}

absl::Time DeadlineOf(const grpc::CallbackServerContext* context) {
  const auto deadline = context->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

void AddRetryHint(grpc::CallbackServerContext* context,
                  const absl::Status& status) {
  if (status.code() != absl::StatusCode::kResourceExhausted) return;
  context->AddTrailingMetadata(kRetryPushbackKey,
                               std::to_string(kRetryPushbackMs));
}

void RecordFinish(const ServiceEnv& env, absl::string_view rpc,
                  const absl::Status& status) {
  if (env.metrics == nullptr) return;
  env.metrics->RecordRequest(
      rpc, StatusCodeName(static_cast<grpc::StatusCode>(status.code())));
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    const std::string field = FieldOf(status);
    if (!field.empty()) env.metrics->RecordValidationFailure(field);
  }
}

}  // namespace rollout::server
