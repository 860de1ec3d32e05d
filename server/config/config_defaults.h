// Built-in defaults of ServerConfig (the values documented in config.proto and
// listed in server/config/default.textproto).
//
//   v1::ServerConfig config = ...;  // as parsed; unset fields are zero
//   ApplyConfigDefaults(&config);   // every field now has its value
//
// Applied before validation and before two configs are compared, so "unset"
// and "set to the default" are the same config.
#ifndef ROLLOUT_SERVER_CONFIG_CONFIG_DEFAULTS_H_
#define ROLLOUT_SERVER_CONFIG_CONFIG_DEFAULTS_H_

#include <string>

#include "rollout/v1/config.pb.h"

namespace rollout::server {

// The embedded tiny model, relative to the workspace root (see
// ResolveModelPath).
inline constexpr char kDefaultModelPath[] = "tests/data/tiny_qwen3_5";

// Fills every unset (zero, empty, or absent optional) field with its default.
// Values that are set, even invalid ones, are kept for validation to report.
void ApplyConfigDefaults(rollout::v1::ServerConfig* config);

// ApplyConfigDefaults of an empty config.
rollout::v1::ServerConfig DefaultServerConfig();

// Command-line values that win over the config file (at start and on every
// reload). Empty: no override.
struct ConfigOverrides {
  std::string listen;
  std::string metrics_listen;
};
void ApplyConfigOverrides(const ConfigOverrides& overrides,
                          rollout::v1::ServerConfig* config);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_CONFIG_DEFAULTS_H_
