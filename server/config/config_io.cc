#include "server/config/config_io.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace rollout::server {
namespace {

// Collects every text-format error as "line L:C: message" (1-based).
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(
        absl::StrCat("line ", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    AddError(line, column, message);  // warnings are errors for configs
  }
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

}  // namespace

ConfigFormat ConfigFormatForPath(absl::string_view path) {
  return absl::EndsWithIgnoreCase(path, ".json") ? ConfigFormat::kJson
                                                 : ConfigFormat::kTextProto;
}

absl::StatusOr<rollout::v1::ServerConfig> ParseServerConfig(
    absl::string_view text, ConfigFormat format) {
  rollout::v1::ServerConfig config;
  if (format == ConfigFormat::kJson) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto status = google::protobuf::util::JsonStringToMessage(
        std::string(text), &config, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("JSON config: ", std::string(status.message())));
    }
    return config;
  }
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(
        absl::StrCat("text-format config: ", errors.Joined()));
  }
  return config;
}

absl::StatusOr<rollout::v1::ServerConfig> LoadServerConfigFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read config file ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::FailedPreconditionError(
        absl::StrCat("error reading config file ", path));
  }
  auto config = ParseServerConfig(buffer.str(), ConfigFormatForPath(path));
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  return config;
}

std::string ServerConfigToText(const rollout::v1::ServerConfig& config) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(config, &text);
  return text;
}

}  // namespace rollout::server
