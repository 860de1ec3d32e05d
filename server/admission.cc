#include "server/admission.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/field_error.h"

namespace rollout::server {

Admission::Ticket& Admission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    tokens_ = std::exchange(other.tokens_, 0);
    client_ = std::exchange(other.client_, std::string());
  }
  return *this;
}

void Admission::Ticket::Release() {
  if (owner_ != nullptr) {
    std::exchange(owner_, nullptr)->Release(tokens_, client_);
  }
}

int64_t Admission::GroupCost(int64_t prompt_tokens, int64_t n,
                             int64_t max_tokens) {
  return prompt_tokens + n * max_tokens;
}

absl::StatusOr<std::string> Admission::ClientKey(absl::string_view client_id,
                                                 absl::string_view peer) {
  if (!client_id.empty()) {
    if (client_id.size() > kMaxClientIdLength) {
      return InvalidFieldError(
          "x-client-id",
          absl::StrCat("metadata must be at most ", kMaxClientIdLength,
                       " characters, got ", client_id.size()));
    }
    return std::string(client_id);
  }
  // Strip the port: every connection of one host is one client.
  if (absl::StartsWith(peer, "ipv4:") || absl::StartsWith(peer, "ipv6:")) {
    const size_t colon = peer.rfind(':');
    if (colon > 5) return std::string(peer.substr(0, colon));
  }
  return std::string(peer);
}

absl::StatusOr<Admission::Ticket> Admission::Admit(
    int64_t tokens, const rollout::v1::AdmissionConfig& limits,
    absl::string_view client) {
  if (tokens > limits.max_queued_tokens()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request needs ", tokens,
        " tokens of admission budget (prompt + n x max_tokens), more than "
        "admission.max_queued_tokens = ",
        limits.max_queued_tokens(), "; lower n or sampling.max_tokens"));
  }
  rollout::MutexLock lock(&mu_);
  const char* reason = nullptr;
  std::string message;
  // Counted only when the cap is on: with it off no table is kept at all.
  const bool per_client =
      !client.empty() && limits.max_requests_per_client() > 0;
  int64_t client_count = 0;
  if (per_client) {
    auto it = per_client_.find(client);
    if (it != per_client_.end()) client_count = it->second;
  }
  if (per_client && client_count >= limits.max_requests_per_client()) {
    reason = "client_concurrency";
    message =
        absl::StrCat("client \"", client, "\" has ", client_count,
                     " groups admitted (admission.max_requests_per_client = ",
                     limits.max_requests_per_client(), "); retry later");
  } else if (requests_ >= limits.max_queued_requests()) {
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
  std::string key;
  if (per_client) {
    key = std::string(client);
    ++per_client_[key];
  }
  PublishLocked();
  return Ticket(this, tokens, std::move(key));
}

void Admission::Release(int64_t tokens, const std::string& client) {
  rollout::MutexLock lock(&mu_);
  --requests_;
  tokens_ -= tokens;
  if (!client.empty()) {
    auto it = per_client_.find(client);
    if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
  }
  PublishLocked();
}

void Admission::PublishLocked() {
  if (metrics_ != nullptr) metrics_->SetQueueTokens(tokens_);
}

int64_t Admission::queued_requests() const {
  rollout::MutexLock lock(&mu_);
  return requests_;
}

int64_t Admission::queued_tokens() const {
  rollout::MutexLock lock(&mu_);
  return tokens_;
}

int64_t Admission::client_requests(absl::string_view client) const {
  rollout::MutexLock lock(&mu_);
  auto it = per_client_.find(client);
  return it == per_client_.end() ? 0 : it->second;
}

int64_t Admission::clients() const {
  rollout::MutexLock lock(&mu_);
  return static_cast<int64_t>(per_client_.size());
}

}  // namespace rollout::server
