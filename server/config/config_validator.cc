#include "server/config/config_validator.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "rollout/v1/rollout.pb.h"

namespace rollout::server {
namespace {

using rollout::v1::ServerConfig;

constexpr int64_t kMaxMessageBytes = 2147483647;  // gRPC takes an int

class Errors {
 public:
  void Add(std::string field, std::string message) {
    errors_.push_back({std::move(field), std::move(message)});
  }
  void IntRange(const std::string& field, int64_t value, int64_t lo,
                int64_t hi) {
    if (value < lo || value > hi) {
      Add(field, absl::StrCat("must be in [", lo, ", ", hi, "], got ", value));
    }
  }
  // [lo, hi] or, with lo_open, (lo, hi]; NaN and infinities fail.
  void FloatRange(const std::string& field, float value, float lo, float hi,
                  bool lo_open = false) {
    const bool ok = std::isfinite(value) &&
                    (lo_open ? value > lo : value >= lo) && value <= hi;
    if (!ok) {
      Add(field, absl::StrCat("must be in ", lo_open ? "(" : "[", lo, ", ", hi,
                              "], got ", value));
    }
  }
  std::vector<ConfigError> Take() { return std::move(errors_); }

 private:
  std::vector<ConfigError> errors_;
};

// "host:port" with an optional [v6] host; port in [0, 65535].
std::string CheckHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return absl::StrCat("must be host:port, got \"", address, "\"");
  }
  absl::string_view host = address.substr(0, colon);
  if (absl::StartsWith(host, "[") != absl::EndsWith(host, "]")) {
    return absl::StrCat("unbalanced [ ] in \"", address, "\"");
  }
  int port = -1;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::StrCat("port must be in [0, 65535], got \"",
                        address.substr(colon + 1), "\"");
  }
  return "";
}

bool ValidDevice(absl::string_view device) {
  if (device == "auto" || device == "cpu") return true;
  if (!absl::ConsumePrefix(&device, "cuda:") || device.empty()) return false;
  for (char c : device) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return device.size() <= 4;
}

void ValidateSamplingDefaults(const rollout::v1::SamplingDefaults& s,
                              int32_t max_tokens_limit, Errors* e) {
  e->FloatRange("default_sampling.temperature", s.temperature(), 0.0f,
                std::numeric_limits<float>::max());
  e->FloatRange("default_sampling.top_p", s.top_p(), 0.0f, 1.0f,
                /*lo_open=*/true);
  e->IntRange("default_sampling.top_k", s.top_k(), 0, INT32_MAX);
  e->FloatRange("default_sampling.min_p", s.min_p(), 0.0f, 1.0f);
  if (s.max_tokens() < 1 || s.max_tokens() > max_tokens_limit) {
    e->Add("default_sampling.max_tokens",
           absl::StrCat("must be in [1, admission.max_tokens = ",
                        max_tokens_limit, "], got ", s.max_tokens()));
  }
}

}  // namespace

std::string CheckGrpcAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) {
    return address.size() > 5 ? "" : "unix: address needs a path";
  }
  return CheckHostPort(address);
}

std::string CheckHttpAddress(absl::string_view address) {
  return CheckHostPort(address);
}

std::vector<ConfigError> ValidateServerConfig(const ServerConfig& c) {
  Errors e;
  if (std::string why = CheckGrpcAddress(c.listen()); !why.empty()) {
    e.Add("listen", why);
  }
  if (std::string why = CheckHttpAddress(c.metrics_listen()); !why.empty()) {
    e.Add("metrics_listen", why);
  }
  if (!c.health_listen().empty()) {
    if (std::string why = CheckHostPort(c.health_listen()); !why.empty()) {
      e.Add("health_listen", why);
    } else if (c.health_listen() == c.listen() &&
               !absl::EndsWith(c.listen(), ":0")) {
      e.Add("health_listen", "must differ from listen");
    }
  }
  e.IntRange("shutdown_grace_seconds", c.shutdown_grace_seconds(), 0, 3600);

  // model
  if (c.model().path().empty()) e.Add("model.path", "must not be empty");
  for (int i = 0; i < c.model().roots_size(); ++i) {
    if (!absl::StartsWith(c.model().roots(i), "/")) {
      e.Add("model.roots",
            absl::StrCat("entry ", i, " must be an absolute path, got \"",
                         c.model().roots(i), "\""));
    }
  }

  // workers
  const auto& w = c.workers();
  e.IntRange("workers.count", w.count(), 1, 64);
  if (w.devices_size() != 0 && w.devices_size() != w.count()) {
    e.Add("workers.devices",
          absl::StrCat("must be empty or have workers.count = ", w.count(),
                       " entries, got ", w.devices_size()));
  }
  for (int i = 0; i < w.devices_size(); ++i) {
    if (!ValidDevice(w.devices(i))) {
      e.Add(
          "workers.devices",
          absl::StrCat("entry ", i,
                       " must be \"auto\", \"cpu\" or \"cuda:<index>\", got \"",
                       w.devices(i), "\""));
    }
  }
  e.IntRange("workers.startup_timeout_seconds", w.startup_timeout_seconds(), 1,
             86400);
  e.IntRange("workers.restart_backoff_max_seconds",
             w.restart_backoff_max_seconds(), 1, 3600);
  if (w.max_num_seqs() != 0) {
    e.IntRange("workers.max_num_seqs", w.max_num_seqs(), 1, 65536);
    if (w.max_num_seqs() > 0 && w.max_num_seqs() < c.admission().max_n()) {
      e.Add("workers.max_num_seqs",
            absl::StrCat("must be >= admission.max_n = ", c.admission().max_n(),
                         " (a group runs on one worker), got ",
                         w.max_num_seqs()));
    }
  }
  e.IntRange("workers.memory_budget_bytes", w.memory_budget_bytes(),
             int64_t{1} << 20, int64_t{1} << 50);
  e.IntRange("workers.max_batch_tokens", w.max_batch_tokens(), 1, 1048576);

  // admission
  const auto& a = c.admission();
  e.IntRange("admission.max_queued_requests", a.max_queued_requests(), 1,
             1000000);
  e.IntRange("admission.max_queued_tokens", a.max_queued_tokens(), 1,
             int64_t{1000000000000});
  e.IntRange("admission.max_n", a.max_n(), 1, 4096);
  e.IntRange("admission.max_prompt_tokens", a.max_prompt_tokens(), 1, 16777216);
  e.IntRange("admission.max_tokens", a.max_tokens(), 1, 16777216);
  e.IntRange("admission.max_top_logprobs", a.max_top_logprobs(), 0, 1024);
  e.IntRange("admission.max_stop_token_ids", a.max_stop_token_ids(), 0, 4096);
  e.IntRange("admission.max_requests_per_client", a.max_requests_per_client(),
             0, 1000000);
  if (a.max_response_bytes() < 1024 ||
      a.max_response_bytes() > c.transport().max_send_message_bytes()) {
    e.Add("admission.max_response_bytes",
          absl::StrCat("must be in [1024, transport.max_send_message_bytes = ",
                       c.transport().max_send_message_bytes(), "], got ",
                       a.max_response_bytes()));
  }

  ValidateSamplingDefaults(c.default_sampling(), a.max_tokens(), &e);

  // replay_ssm
  const auto& r = c.replay_ssm();
  if (!rollout::v1::ReplaySsmMode_IsValid(r.default_mode())) {
    e.Add("replay_ssm.default_mode",
          absl::StrCat("must be ON, OFF or AUTO, got ", r.default_mode()));
  }
  e.IntRange("replay_ssm.ring_length", r.ring_length(), 1, 256);
  e.IntRange("replay_ssm.auto_min_batch_size", r.auto_min_batch_size(), 1,
             65536);
  e.FloatRange("replay_ssm.ring_pool_share", r.ring_pool_share(), 0.0f, 1.0f);
  if (!rollout::v1::RingDtype_IsValid(r.ring_dtype())) {
    e.Add("replay_ssm.ring_dtype",
          absl::StrCat("must be FP32 or BF16, got ", r.ring_dtype()));
  }

  // health
  e.IntRange("health.watchdog_seconds", c.health().watchdog_seconds(), 0,
             86400);

  // security
  const auto& tls = c.security().tls();
  if (tls.cert_file().empty() != tls.key_file().empty()) {
    e.Add("security.tls",
          "cert_file and key_file must be set together (or neither)");
  }
  if (!tls.client_ca_file().empty() && tls.cert_file().empty()) {
    e.Add("security.tls.client_ca_file", "needs cert_file and key_file");
  }
  if (tls.require_client_cert() && tls.client_ca_file().empty()) {
    e.Add("security.tls.require_client_cert", "needs client_ca_file");
  }

  // transport
  const auto& t = c.transport();
  e.IntRange("transport.max_receive_message_bytes",
             t.max_receive_message_bytes(), 1024, kMaxMessageBytes);
  e.IntRange("transport.max_send_message_bytes", t.max_send_message_bytes(),
             1024, kMaxMessageBytes);
  e.IntRange("transport.keepalive.time_seconds", t.keepalive().time_seconds(),
             1, 86400);
  e.IntRange("transport.keepalive.timeout_seconds",
             t.keepalive().timeout_seconds(), 1, 3600);
  e.IntRange("transport.keepalive.min_client_ping_interval_seconds",
             t.keepalive().min_client_ping_interval_seconds(), 1, 3600);
  return e.Take();
}

absl::Status ConfigErrorsToStatus(const std::vector<ConfigError>& errors) {
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid config: ",
      absl::StrJoin(errors, "; ", [](std::string* out, const ConfigError& e) {
        absl::StrAppend(out, e.field, ": ", e.message);
      })));
}

}  // namespace rollout::server
