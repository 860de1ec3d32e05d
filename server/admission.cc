#include "server/admission.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::server {

Admission::Ticket& Admission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    tokens_ = std::exchange(other.tokens_, 0);
  }
  return *this;
}

void Admission::Ticket::Release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Release(tokens_);
}

int64_t Admission::GroupCost(int64_t prompt_tokens, int64_t n,
                             int64_t max_tokens) {
  return prompt_tokens + n * max_tokens;
}

absl::StatusOr<Admission::Ticket> Admission::Admit(
    int64_t tokens, const rollout::v1::AdmissionConfig& limits) {
  if (tokens > limits.max_queued_tokens()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request needs ", tokens,
        " tokens of admission budget (prompt + n x max_tokens), more than "
        "admission.max_queued_tokens = ",
        limits.max_queued_tokens(), "; lower n or sampling.max_tokens"));
  }
  absl::MutexLock lock(&mu_);
  const char* reason = nullptr;
  std::string message;
  if (requests_ >= limits.max_queued_requests()) {
    reason = "queue_requests";
    message = absl::StrCat("admission queue full: ", requests_,
                           " groups admitted (admission.max_queued_requests = ",
                           limits.max_queued_requests(), "); retry later");
  } else if (tokens_ + tokens > limits.max_queued_tokens()) {
    reason = "queue_tokens";
    message = absl::StrCat("admission queue full: ", tokens_, " + ", tokens,
                           " tokens over admission.max_queued_tokens = ",
                           limits.max_queued_tokens(), "; retry later");
  }
  if (reason != nullptr) {
    if (metrics_ != nullptr) metrics_->RecordAdmissionRejection(reason);
    return absl::ResourceExhaustedError(message);
  }
  ++requests_;
  tokens_ += tokens;
  PublishLocked();
  return Ticket(this, tokens);
}

void Admission::Release(int64_t tokens) {
  absl::MutexLock lock(&mu_);
  --requests_;
  tokens_ -= tokens;
  PublishLocked();
}

void Admission::PublishLocked() {
  if (metrics_ != nullptr) metrics_->SetQueueTokens(tokens_);
}

int64_t Admission::queued_requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int64_t Admission::queued_tokens() const {
  absl::MutexLock lock(&mu_);
  return tokens_;
}

}  // namespace rollout::server
