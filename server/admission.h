// Admission: the bound on admitted, unfinished work (admission.max_queued_*
// in the config). Beyond it, RESOURCE_EXHAUSTED: the client backs off and
// retries, and rolloutd's memory stays bounded under any burst.
//
//   ASSIGN_OR_RETURN(Admission::Ticket ticket,
//                    admission.Admit(cost, config.admission()));
//   ... the group runs; destroying `ticket` gives its budget back ...
//
// A group costs len(prompt) + n x max_tokens tokens. The limits are read at
// each Admit, so a reload changes them at once (work already admitted stays).
// Thread-safe.
#ifndef ROLLOUT_SERVER_ADMISSION_H_
#define ROLLOUT_SERVER_ADMISSION_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "metrics/rollout_metrics.h"
#include "rollout/v1/config.pb.h"

namespace rollout::server {

class Admission {
 public:
  // Holds one group's share of the budget until destroyed. Move-only.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept { *this = std::move(other); }
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket() { Release(); }
    // Gives the budget back now (idempotent).
    void Release();

   private:
    friend class Admission;
    Ticket(Admission* owner, int64_t tokens) : owner_(owner), tokens_(tokens) {}
    Admission* owner_ = nullptr;
    int64_t tokens_ = 0;
  };

  // `metrics` may be null; else queue gauges and rejections are recorded.
  explicit Admission(metrics::RolloutMetrics* metrics) : metrics_(metrics) {}

  static int64_t GroupCost(int64_t prompt_tokens, int64_t n,
                           int64_t max_tokens);

  // RESOURCE_EXHAUSTED when the queue is full (retry later);
  // INVALID_ARGUMENT when `tokens` alone exceeds max_queued_tokens (it could
  // never be admitted).
  absl::StatusOr<Ticket> Admit(int64_t tokens,
                               const rollout::v1::AdmissionConfig& limits)
      ABSL_LOCKS_EXCLUDED(mu_);

  int64_t queued_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t queued_tokens() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Release(int64_t tokens) ABSL_LOCKS_EXCLUDED(mu_);
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  metrics::RolloutMetrics* const metrics_;
  mutable absl::Mutex mu_;
  int64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t tokens_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ADMISSION_H_
