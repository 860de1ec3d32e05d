// Validation of a ServerConfig (after ApplyConfigDefaults): every field's range
// and the rules between fields, as documented in config.proto.
//
//   std::vector<ConfigError> errors = ValidateServerConfig(config);
//   if (!errors.empty()) return ConfigErrorsToStatus(errors);
//
// Validation is pure: it reads no files (the admin token file and TLS files
// are read, and their errors reported, by the code that loads them).
#ifndef ROLLOUT_SERVER_CONFIG_CONFIG_VALIDATOR_H_
#define ROLLOUT_SERVER_CONFIG_CONFIG_VALIDATOR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rollout/v1/config.pb.h"

namespace rollout::server {

struct ConfigError {
  std::string field;    // path, e.g. "admission.max_n"
  std::string message;  // e.g. "must be in [1, 4096], got 0"
};

// Every violated rule, in field order; empty when the config is valid.
std::vector<ConfigError> ValidateServerConfig(
    const rollout::v1::ServerConfig& config);

// INVALID_ARGUMENT "invalid config: <field>: <message>; ..." (OK when empty).
absl::Status ConfigErrorsToStatus(const std::vector<ConfigError>& errors);

// Checks a gRPC listen address: "host:port" / "[v6]:port" with port in
// [0, 65535], or "unix:<path>". Returns "" when valid, else what is wrong.
std::string CheckGrpcAddress(absl::string_view address);

// Checks an HTTP listen address "host:port" / "[v6]:port" (no unix sockets).
std::string CheckHttpAddress(absl::string_view address);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_CONFIG_VALIDATOR_H_
