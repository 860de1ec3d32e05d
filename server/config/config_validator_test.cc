#include "server/config/config_validator.h"

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_defaults.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

struct BadCase {
  std::string name;
  std::function<void(v1::ServerConfig*)> mutate;
  std::string field;      // the error's field
  std::string substring;  // part of its message (the allowed range)
};

std::vector<BadCase> BadCases() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {
      {"listen_no_port", [](auto* c) { c->set_listen("localhost"); }, "listen",
       "host:port"},
      {"listen_port_range", [](auto* c) { c->set_listen("a:70000"); }, "listen",
       "[0, 65535]"},
      {"listen_unix_empty", [](auto* c) { c->set_listen("unix:"); }, "listen",
       "path"},
      {"metrics_unix", [](auto* c) { c->set_metrics_listen("unix:/x"); },
       "metrics_listen", "port"},
      {"health_unix", [](auto* c) { c->set_health_listen("unix:/x"); },
       "health_listen", "port"},
      {"health_same_as_listen",
       [](auto* c) {
         c->set_listen("0.0.0.0:50051");
         c->set_health_listen("0.0.0.0:50051");
       },
       "health_listen", "must differ from listen"},
      {"grace", [](auto* c) { c->set_shutdown_grace_seconds(-1); },
       "shutdown_grace_seconds", "[0, 3600]"},
      {"model_path", [](auto* c) { c->mutable_model()->set_path(""); },
       "model.path", "must not be empty"},
      {"model_roots", [](auto* c) { c->mutable_model()->add_roots("rel"); },
       "model.roots", "absolute"},
      {"workers_count", [](auto* c) { c->mutable_workers()->set_count(65); },
       "workers.count", "[1, 64]"},
      {"workers_devices_size",
       [](auto* c) {
         c->mutable_workers()->add_devices("cpu");
         c->mutable_workers()->add_devices("cpu");
       },
       "workers.devices", "workers.count = 1"},
      {"workers_device_name",
       [](auto* c) { c->mutable_workers()->add_devices("gpu0"); },
       "workers.devices", "cuda:<index>"},
      {"startup_timeout",
       [](auto* c) { c->mutable_workers()->set_startup_timeout_seconds(-5); },
       "workers.startup_timeout_seconds", "[1, 86400]"},
      {"max_num_seqs_range",
       [](auto* c) { c->mutable_workers()->set_max_num_seqs(70000); },
       "workers.max_num_seqs", "[1, 65536]"},
      {"max_num_seqs_below_max_n",
       [](auto* c) {
         c->mutable_admission()->set_max_n(64);
         c->mutable_workers()->set_max_num_seqs(32);
       },
       "workers.max_num_seqs", ">= admission.max_n = 64"},
      {"memory_budget",
       [](auto* c) { c->mutable_workers()->set_memory_budget_bytes(1000); },
       "workers.memory_budget_bytes", "[1048576,"},
      {"max_batch_tokens",
       [](auto* c) { c->mutable_workers()->set_max_batch_tokens(-1); },
       "workers.max_batch_tokens", "[1, 1048576]"},
      {"backoff",
       [](auto* c) {
         c->mutable_workers()->set_restart_backoff_max_seconds(9999);
       },
       "workers.restart_backoff_max_seconds", "[1, 3600]"},
      {"queued_requests",
       [](auto* c) { c->mutable_admission()->set_max_queued_requests(-1); },
       "admission.max_queued_requests", "[1, 1000000]"},
      {"queued_tokens",
       [](auto* c) { c->mutable_admission()->set_max_queued_tokens(-1); },
       "admission.max_queued_tokens", "[1, 1000000000000]"},
      {"max_n", [](auto* c) { c->mutable_admission()->set_max_n(5000); },
       "admission.max_n", "[1, 4096]"},
      {"per_client",
       [](auto* c) { c->mutable_admission()->set_max_requests_per_client(-1); },
       "admission.max_requests_per_client", "[0, 1000000]"},
      {"max_prompt",
       [](auto* c) { c->mutable_admission()->set_max_prompt_tokens(-3); },
       "admission.max_prompt_tokens", "[1, 16777216]"},
      {"max_tokens",
       [](auto* c) { c->mutable_admission()->set_max_tokens(-3); },
       "admission.max_tokens", "[1, 16777216]"},
      {"top_logprobs",
       [](auto* c) { c->mutable_admission()->set_max_top_logprobs(1025); },
       "admission.max_top_logprobs", "[0, 1024]"},
      {"stop_ids",
       [](auto* c) { c->mutable_admission()->set_max_stop_token_ids(-1); },
       "admission.max_stop_token_ids", "[0, 4096]"},
      {"response_bytes_small",
       [](auto* c) { c->mutable_admission()->set_max_response_bytes(10); },
       "admission.max_response_bytes",
       "[1024, transport.max_send_message_bytes"},
      {"response_bytes_over_send",
       [](auto* c) {
         c->mutable_admission()->set_max_response_bytes(
             c->transport().max_send_message_bytes() + 1);
       },
       "admission.max_response_bytes", "transport.max_send_message_bytes"},
      {"temperature_negative",
       [](auto* c) { c->mutable_default_sampling()->set_temperature(-1); },
       "default_sampling.temperature", "[0,"},
      {"temperature_nan",
       [nan](auto* c) { c->mutable_default_sampling()->set_temperature(nan); },
       "default_sampling.temperature", "got nan"},
      {"top_p_zero",
       [](auto* c) { c->mutable_default_sampling()->set_top_p(0); },
       "default_sampling.top_p", "(0, 1]"},
      {"top_k", [](auto* c) { c->mutable_default_sampling()->set_top_k(-1); },
       "default_sampling.top_k", "[0,"},
      {"min_p", [](auto* c) { c->mutable_default_sampling()->set_min_p(1.5); },
       "default_sampling.min_p", "[0, 1]"},
      {"default_max_tokens_over_limit",
       [](auto* c) {
         c->mutable_default_sampling()->set_max_tokens(
             c->admission().max_tokens() + 1);
       },
       "default_sampling.max_tokens", "admission.max_tokens"},
      {"default_mode_unknown",
       [](auto* c) {
         c->mutable_replay_ssm()->set_default_mode(
             static_cast<v1::ReplaySsmMode>(9));
       },
       "replay_ssm.default_mode", "ON, OFF or AUTO"},
      {"ring_length",
       [](auto* c) { c->mutable_replay_ssm()->set_ring_length(257); },
       "replay_ssm.ring_length", "[1, 256]"},
      {"auto_min_batch",
       [](auto* c) { c->mutable_replay_ssm()->set_auto_min_batch_size(-1); },
       "replay_ssm.auto_min_batch_size", "[1, 65536]"},
      {"ring_share",
       [](auto* c) { c->mutable_replay_ssm()->set_ring_pool_share(1.5); },
       "replay_ssm.ring_pool_share", "[0, 1]"},
      {"ring_dtype",
       [](auto* c) {
         c->mutable_replay_ssm()->set_ring_dtype(static_cast<v1::RingDtype>(7));
       },
       "replay_ssm.ring_dtype", "FP32 or BF16"},
      {"watchdog",
       [](auto* c) { c->mutable_health()->set_watchdog_seconds(-1); },
       "health.watchdog_seconds", "[0, 86400]"},
      {"tls_half",
       [](auto* c) {
         c->mutable_security()->mutable_tls()->set_cert_file("/c");
       },
       "security.tls", "together"},
      {"tls_ca_without_cert",
       [](auto* c) {
         c->mutable_security()->mutable_tls()->set_client_ca_file("/ca");
       },
       "security.tls.client_ca_file", "needs cert_file"},
      {"tls_require_without_ca",
       [](auto* c) {
         c->mutable_security()->mutable_tls()->set_require_client_cert(true);
       },
       "security.tls.require_client_cert", "needs client_ca_file"},
      {"max_receive",
       [](auto* c) {
         c->mutable_transport()->set_max_receive_message_bytes(100);
       },
       "transport.max_receive_message_bytes", "[1024, 2147483647]"},
      {"keepalive_time",
       [](auto* c) {
         c->mutable_transport()->mutable_keepalive()->set_time_seconds(-1);
       },
       "transport.keepalive.time_seconds", "[1, 86400]"},
      {"keepalive_min_ping",
       [](auto* c) {
         c->mutable_transport()
             ->mutable_keepalive()
             ->set_min_client_ping_interval_seconds(4000);
       },
       "transport.keepalive.min_client_ping_interval_seconds", "[1, 3600]"},
  };
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class ConfigValidatorBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigValidatorBadTest, NamesTheFieldAndTheAllowedValues) {
  v1::ServerConfig config = DefaultServerConfig();
  GetParam().mutate(&config);
  const std::vector<ConfigError> errors = ValidateServerConfig(config);
  // The first error is the field the case breaks (a case may break a rule
  // that depends on it too, e.g. default_sampling.max_tokens <= max_tokens).
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, GetParam().field);
  EXPECT_THAT(errors[0].message, HasSubstr(GetParam().substring));
  const absl::Status status = ConfigErrorsToStatus(errors);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().field));
}

INSTANTIATE_TEST_SUITE_P(All, ConfigValidatorBadTest,
                         ::testing::ValuesIn(BadCases()),
                         [](const auto& info) { return info.param.name; });

TEST(ConfigValidatorTest, GoodVariantsPass) {
  v1::ServerConfig c = DefaultServerConfig();
  c.set_listen("unix:/tmp/rollout.sock");
  c.set_metrics_listen("[::]:0");
  c.mutable_workers()->set_count(3);
  c.mutable_workers()->add_devices("auto");
  c.mutable_workers()->add_devices("cpu");
  c.mutable_workers()->add_devices("cuda:7");
  c.mutable_model()->add_roots("/models");
  c.mutable_health()->set_watchdog_seconds(0);
  c.mutable_replay_ssm()->set_ring_pool_share(0);
  c.mutable_replay_ssm()->set_ring_length(1);
  auto* tls = c.mutable_security()->mutable_tls();
  tls->set_cert_file("/c.pem");
  tls->set_key_file("/k.pem");
  tls->set_client_ca_file("/ca.pem");
  tls->set_require_client_cert(true);
  const auto errors = ValidateServerConfig(c);
  EXPECT_TRUE(errors.empty()) << ConfigErrorsToStatus(errors);
}

TEST(ConfigValidatorTest, ReportsEveryErrorAtOnce) {
  v1::ServerConfig c = DefaultServerConfig();
  c.mutable_admission()->set_max_n(-1);
  c.mutable_replay_ssm()->set_ring_length(0);
  c.set_listen("bad");
  EXPECT_EQ(ValidateServerConfig(c).size(), 3u);
}

}  // namespace
}  // namespace rollout::server
