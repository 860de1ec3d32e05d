// Reading and writing ServerConfig files (proto/rollout/v1/config.proto).
//
// Two formats: protobuf text format (the default, any extension) and proto3
// JSON (files ending in ".json"). Unknown fields are errors in both, so a typo
// never silently becomes a default.
//
//   ASSIGN_OR_RETURN(v1::ServerConfig config, LoadServerConfigFile(path));
#ifndef ROLLOUT_SERVER_CONFIG_CONFIG_IO_H_
#define ROLLOUT_SERVER_CONFIG_CONFIG_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rollout/v1/config.pb.h"

namespace rollout::server {

enum class ConfigFormat { kTextProto, kJson };

// ".json" -> kJson, anything else -> kTextProto.
ConfigFormat ConfigFormatForPath(absl::string_view path);

// INVALID_ARGUMENT with the parser's message ("line 3:7: ...") on bad input.
absl::StatusOr<rollout::v1::ServerConfig> ParseServerConfig(
    absl::string_view text, ConfigFormat format);

// FAILED_PRECONDITION when the file cannot be read; INVALID_ARGUMENT when it
// does not parse. Messages start with the path.
absl::StatusOr<rollout::v1::ServerConfig> LoadServerConfigFile(
    const std::string& path);

// Text format of `config` (what --print_config prints).
std::string ServerConfigToText(const rollout::v1::ServerConfig& config);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_CONFIG_IO_H_
