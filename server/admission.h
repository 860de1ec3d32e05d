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
//
// Optionally (admission.max_requests_per_client > 0) each client may hold at
// most that many admitted groups, so one client cannot fill the whole queue.
// A client is identified by a key the caller derives (see ClientKey in
// rollout_service.cc); only clients with admitted work have an entry, so the
// table is bounded by max_queued_requests.
// Thread-safe.
#ifndef ROLLOUT_SERVER_ADMISSION_H_
#define ROLLOUT_SERVER_ADMISSION_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/mutex.h"
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
    Ticket(Admission* owner, int64_t tokens, std::string client)
        : owner_(owner), tokens_(tokens), client_(std::move(client)) {}
    Admission* owner_ = nullptr;
    int64_t tokens_ = 0;
    std::string client_;  // empty: not counted per client
  };

  // `metrics` may be null; else queue gauges and rejections are recorded.
  explicit Admission(metrics::RolloutMetrics* metrics) : metrics_(metrics) {}

  static int64_t GroupCost(int64_t prompt_tokens, int64_t n,
                           int64_t max_tokens);

  // The per-client key of a call: `client_id` (request metadata
  // "x-client-id") when not empty, else the host part of gRPC's `peer`
  // ("ipv4:10.0.0.7:5123" -> "ipv4:10.0.0.7", "ipv6:[::1]:5123" ->
  // "ipv6:[::1]"; other peers, e.g. "unix:...", as they are).
  // INVALID_ARGUMENT naming x-client-id when it is longer than
  // kMaxClientIdLength.
  static constexpr size_t kMaxClientIdLength = 256;
  static absl::StatusOr<std::string> ClientKey(absl::string_view client_id,
                                               absl::string_view peer);

  // RESOURCE_EXHAUSTED when the queue is full or `client` already holds
  // limits.max_requests_per_client groups (retry later); INVALID_ARGUMENT
  // when `tokens` alone exceeds max_queued_tokens (it could never be
  // admitted). An empty `client` is not counted per client.
  absl::StatusOr<Ticket> Admit(int64_t tokens,
                               const rollout::v1::AdmissionConfig& limits,
                               absl::string_view client = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  int64_t queued_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t queued_tokens() const ABSL_LOCKS_EXCLUDED(mu_);
  // Admitted, unfinished groups of `client`; clients with none: 0.
  int64_t client_requests(absl::string_view client) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Clients with admitted, unfinished groups (the size of the table).
  int64_t clients() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Release(int64_t tokens, const std::string& client)
      ABSL_LOCKS_EXCLUDED(mu_);
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  metrics::RolloutMetrics* const metrics_;
  mutable rollout::Mutex mu_;
  int64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t tokens_ ABSL_GUARDED_BY(mu_) = 0;
  // Admitted groups per client; an entry is erased when it drops to 0.
  absl::flat_hash_map<std::string, int64_t> per_client_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ADMISSION_H_
