// Small helpers shared by the callback-API reactors of server/.
#ifndef ROLLOUT_SERVER_REACTOR_UTIL_H_
#define ROLLOUT_SERVER_REACTOR_UTIL_H_

#include <atomic>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "grpcpp/server_context.h"
#include "server/dispatcher.h"
#include "server/service_env.h"

namespace rollout::server {

// A reactor that deletes itself when both gRPC (OnDone) and the handler that
// created it (Unref at the end of its set-up) are done with it. Without the
// second reference, a call finished during set-up (e.g. an immediate
// dispatcher error) could be deleted by OnDone on another thread while the
// constructor is still running.
template <typename Base>
class SelfDeletingReactor : public Base {
 public:
  void OnDone() override { Unref(); }

 protected:
  virtual ~SelfDeletingReactor() = default;
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::atomic<int> refs_{2};
};

// Holds a call's CallHandle, and cancels it whenever the cancellation comes
// (before or after the handle is set).
class CancelSlot {
 public:
  void Set(std::unique_ptr<CallHandle> handle) ABSL_LOCKS_EXCLUDED(mu_);
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  rollout::Mutex mu_;
  std::unique_ptr<CallHandle> handle_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// The call's deadline (InfiniteFuture when the client set none).
absl::Time DeadlineOf(const grpc::CallbackServerContext* context);

// Trailing metadata of a RESOURCE_EXHAUSTED answer (admission queue full):
// "grpc-retry-pushback-ms" (gRPC's retry pushback, gRFC A6), how long the
// client should wait before retrying. Other statuses: nothing. Call before
// Finish.
inline constexpr char kRetryPushbackKey[] = "grpc-retry-pushback-ms";
inline constexpr int kRetryPushbackMs = 1000;

// Request metadata naming the client for admission.max_requests_per_client
// (else the peer's host is used).
inline constexpr char kClientIdKey[] = "x-client-id";
void AddRetryHint(grpc::CallbackServerContext* context,
                  const absl::Status& status);

// Counts a finished RPC (rollout_requests_total) and, for INVALID_ARGUMENT
// with a field, the validation failure.
void RecordFinish(const ServiceEnv& env, absl::string_view rpc,
                  const absl::Status& status);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_REACTOR_UTIL_H_
