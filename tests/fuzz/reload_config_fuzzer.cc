// libFuzzer entry point for rolloutd's configuration path: config files
// (text format and JSON, server/config/config_io) and Admin.ReloadConfig
// payloads (ReloadConfigRequest through ConfigManager::Reload: defaults,
// validation, field diff, hot/restart policy, atomic swap).
//
// Input: byte 0 selects what the rest is:
//   byte0 % 3 == 0  a serialized ReloadConfigRequest (inline config)
//   byte0 % 3 == 1  a config file in protobuf text format
//   byte0 % 3 == 2  a config file in proto3 JSON
// A config file that parses is also sent as an inline ReloadConfigRequest
// (dry run when byte0 & 4), so every input exercises the reload too.
//
// Properties checked besides "no crash, no sanitizer report":
//  - a parsed config prints and re-parses to the same config;
//  - a reload is OK, INVALID_ARGUMENT or FAILED_PRECONDITION, never another
//    code; a rejected or dry-run reload leaves the config in effect
//    untouched; an applied one leaves a valid config in effect;
//  - a reload's report (REJECTED entries too) is sorted by field path;
//  - the admin token never appears in the report or the status message.
//
// The fuzzer never reads files it does not own: security.admin_token_file is
// replaced by this process's own token file or a missing path (a fuzzed path
// could name /dev/stdin or a FIFO and block; see docs/TESTING.md, findings).
// Seeds: tests/fuzz/corpus/reload_config (made by tests/fuzz/make_seeds.py).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "rollout/v1/admin.pb.h"
#include "rollout/v1/config.pb.h"
#include "server/config/config_io.h"
#include "server/config/config_manager.h"
#include "server/config/config_validator.h"

namespace rollout::server {
namespace {

#define FUZZ_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr,                                                \
                   "reload_config_fuzzer: property failed: %s (%s:%d)\n", \
                   #cond, __FILE__, __LINE__);                            \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

// A secret no input can contain by chance (it has 32 random-looking chars).
constexpr char kToken[] = "fz-3c1b9e07d4a85f26b0e1c7d39a4f8e52";

// This process's admin token file, made once.
const std::string& TokenFile() {
  static const std::string* path = [] {
    const char* dir = std::getenv("TEST_TMPDIR");
    std::string p = std::string(dir != nullptr ? dir : "/tmp") +
                    "/reload_config_fuzzer_token." + std::to_string(getpid());
    std::ofstream(p) << kToken << "\n";
    return new std::string(p);
  }();
  return *path;
}

void SanitizeFiles(v1::ServerConfig* config) {
  if (!config->has_security() ||
      config->security().admin_token_file().empty()) {
    return;
  }
  // Keep the shape of the input (a token file was named) but never open a
  // path that came from the fuzzer.
  const bool readable = config->security().admin_token_file()[0] % 2 == 0;
  config->mutable_security()->set_admin_token_file(
      readable ? TokenFile() : "/nonexistent/rollout-fuzz-token");
}

void FuzzReload(v1::ReloadConfigRequest request) {
  if (request.has_config()) SanitizeFiles(request.mutable_config());
  // libFuzzer learns kToken from the comparisons below and writes it into
  // inputs (e.g. as the listen address, which the report then echoes): the
  // leak check only means something when the input does not hold the token.
  const bool input_has_token = absl::StrContains(request.DebugString(), kToken);
  absl::StatusOr<std::unique_ptr<ConfigManager>> manager =
      ConfigManager::Create({});  // built-in defaults, generation 1
  FUZZ_CHECK(manager.ok());
  const std::shared_ptr<const ConfigSnapshot> before = (*manager)->Current();

  const ConfigManager::ReloadOutcome out = (*manager)->Reload(request);
  const absl::StatusCode code = out.status.code();
  FUZZ_CHECK(code == absl::StatusCode::kOk ||
             code == absl::StatusCode::kInvalidArgument ||
             code == absl::StatusCode::kFailedPrecondition);

  const std::shared_ptr<const ConfigSnapshot> after = (*manager)->Current();
  if (!out.status.ok() || request.dry_run() || !out.report.applied()) {
    FUZZ_CHECK(after == before);  // the very same snapshot
  } else {
    FUZZ_CHECK(after->generation == before->generation + 1);
    FUZZ_CHECK(ValidateServerConfig(after->config).empty());
    FUZZ_CHECK(out.report.generation() == after->generation);
  }

  // Sorted by path, as admin.proto promises, REJECTED entries included
  // (finding F1 in docs/TESTING.md).
  for (int i = 1; i < out.report.changes_size(); ++i) {
    FUZZ_CHECK(out.report.changes(i - 1).field() <=
               out.report.changes(i).field());
  }
  if (!input_has_token) {
    FUZZ_CHECK(!absl::StrContains(out.report.DebugString(), kToken));
    FUZZ_CHECK(!absl::StrContains(out.status.message(), kToken));
  }
}

void FuzzConfigText(absl::string_view text, ConfigFormat format, bool dry_run) {
  absl::StatusOr<v1::ServerConfig> config = ParseServerConfig(text, format);
  if (!config.ok()) {
    FUZZ_CHECK(config.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  // What --print_config writes must read back as the same config.
  const std::string printed = ServerConfigToText(*config);
  absl::StatusOr<v1::ServerConfig> again =
      ParseServerConfig(printed, ConfigFormat::kTextProto);
  FUZZ_CHECK(again.ok());
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);  // NaN prints and parses as nan
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  FUZZ_CHECK(differencer.Compare(*config, *again));

  v1::ReloadConfigRequest request;
  *request.mutable_config() = *std::move(config);
  request.set_dry_run(dry_run);
  FuzzReload(std::move(request));
}

}  // namespace
}  // namespace rollout::server

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Parse errors of invalid UTF-8 strings are expected by the thousand.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rollout::server::ConfigFormat;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  ++data;
  --size;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  switch (selector % 3) {
    case 0: {
      rollout::v1::ReloadConfigRequest request;
      if (request.ParseFromArray(data, static_cast<int>(size))) {
        rollout::server::FuzzReload(std::move(request));
      }
      break;
    }
    case 1:
      rollout::server::FuzzConfigText(text, ConfigFormat::kTextProto,
                                      (selector & 4) != 0);
      break;
    default:
      rollout::server::FuzzConfigText(text, ConfigFormat::kJson,
                                      (selector & 4) != 0);
      break;
  }
  return 0;
}
