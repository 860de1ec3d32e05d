#include "server/config/config_defaults.h"

#include <cstdint>

namespace rollout::server {
namespace {

using rollout::v1::ServerConfig;

constexpr int64_t kMiB = 1024 * 1024;

}  // namespace

// Plain proto3 scalars: zero means unset. `optional` fields (where zero is a
// meaningful value, e.g. watchdog_seconds = 0 disables the watchdog): absence
// means unset.
void ApplyConfigDefaults(ServerConfig* c) {
  if (c->listen().empty()) c->set_listen("127.0.0.1:50051");
  if (c->metrics_listen().empty()) c->set_metrics_listen("127.0.0.1:9464");
  if (!c->has_shutdown_grace_seconds()) c->set_shutdown_grace_seconds(30);

  auto* model = c->mutable_model();
  if (model->path().empty()) model->set_path(kDefaultModelPath);

  auto* workers = c->mutable_workers();
  if (workers->count() == 0) workers->set_count(1);
  if (workers->startup_timeout_seconds() == 0) {
    workers->set_startup_timeout_seconds(600);
  }
  if (workers->restart_backoff_max_seconds() == 0) {
    workers->set_restart_backoff_max_seconds(60);
  }
  // max_num_seqs stays 0 when unset: its default follows admission.max_n
  // (WorkerArgv), which a hot reload may change.
  if (workers->memory_budget_bytes() == 0) {
    workers->set_memory_budget_bytes(1024 * kMiB);
  }
  if (workers->max_batch_tokens() == 0) workers->set_max_batch_tokens(2048);

  auto* admission = c->mutable_admission();
  if (admission->max_queued_requests() == 0) {
    admission->set_max_queued_requests(4096);
  }
  if (admission->max_queued_tokens() == 0) {
    admission->set_max_queued_tokens(16777216);
  }
  if (admission->max_n() == 0) admission->set_max_n(64);
  if (admission->max_prompt_tokens() == 0) {
    admission->set_max_prompt_tokens(32768);
  }
  if (admission->max_tokens() == 0) admission->set_max_tokens(32768);
  if (!admission->has_max_top_logprobs()) admission->set_max_top_logprobs(20);
  if (!admission->has_max_stop_token_ids()) {
    admission->set_max_stop_token_ids(64);
  }
  if (admission->max_response_bytes() == 0) {
    admission->set_max_response_bytes(256 * kMiB);
  }

  auto* sampling = c->mutable_default_sampling();
  if (!sampling->has_temperature()) sampling->set_temperature(1.0f);
  if (!sampling->has_top_p()) sampling->set_top_p(1.0f);
  if (!sampling->has_top_k()) sampling->set_top_k(0);
  if (!sampling->has_min_p()) sampling->set_min_p(0.0f);
  if (!sampling->has_max_tokens()) sampling->set_max_tokens(1024);

  auto* replay = c->mutable_replay_ssm();
  if (!replay->has_enabled()) replay->set_enabled(true);
  if (replay->default_mode() == rollout::v1::REPLAY_SSM_MODE_DEFAULT) {
    replay->set_default_mode(rollout::v1::REPLAY_SSM_MODE_AUTO);
  }
  if (replay->ring_length() == 0) replay->set_ring_length(16);
  if (replay->auto_min_batch_size() == 0) replay->set_auto_min_batch_size(8);
  if (!replay->has_ring_pool_share()) replay->set_ring_pool_share(1.0f);
  if (replay->ring_dtype() == rollout::v1::RING_DTYPE_UNSPECIFIED) {
    replay->set_ring_dtype(rollout::v1::RING_DTYPE_FP32);
  }

  auto* health = c->mutable_health();
  if (!health->has_watchdog_seconds()) health->set_watchdog_seconds(60);

  // Security defaults are the empty values: open admin RPCs, no TLS.
  c->mutable_security()->mutable_tls();

  auto* transport = c->mutable_transport();
  if (transport->max_receive_message_bytes() == 0) {
    transport->set_max_receive_message_bytes(64 * kMiB);
  }
  if (transport->max_send_message_bytes() == 0) {
    transport->set_max_send_message_bytes(512 * kMiB);
  }
  auto* keepalive = transport->mutable_keepalive();
  if (keepalive->time_seconds() == 0) keepalive->set_time_seconds(60);
  if (keepalive->timeout_seconds() == 0) keepalive->set_timeout_seconds(20);
  if (keepalive->min_client_ping_interval_seconds() == 0) {
    keepalive->set_min_client_ping_interval_seconds(10);
  }
  if (!keepalive->has_permit_without_calls()) {
    keepalive->set_permit_without_calls(true);
  }
}

ServerConfig DefaultServerConfig() {
  ServerConfig config;
  ApplyConfigDefaults(&config);
  return config;
}

void ApplyConfigOverrides(const ConfigOverrides& overrides,
                          ServerConfig* config) {
  if (!overrides.listen.empty()) config->set_listen(overrides.listen);
  if (!overrides.metrics_listen.empty()) {
    config->set_metrics_listen(overrides.metrics_listen);
  }
}

}  // namespace rollout::server
