#include "server/config/config_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/config/config_diff.h"
#include "server/config/config_io.h"
#include "server/config/config_validator.h"

namespace rollout::server {
namespace {

using rollout::v1::ConfigFieldChange;
using rollout::v1::ServerConfig;

constexpr char kRedacted[] = "<redacted>";
constexpr char kTokenField[] = "security.admin_token";
constexpr char kTokenFileField[] = "security.admin_token_file";

// A config ready to be compared with the one in effect.
struct Candidate {
  ServerConfig config;
  std::string admin_token;
  std::vector<ConfigError> errors;
};

// Largest admin token file read (a token is one word; 4 KiB is plenty).
constexpr int64_t kMaxTokenFileBytes = 4096;

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { close(fd_); }

 private:
  const int fd_;
};

// Reads the token file: one line; surrounding whitespace is ignored. Error
// messages never contain the token.
//
// The path comes from a config that an admin can reload at any time, so the
// read must neither block nor grow without bound: O_NONBLOCK makes opening a
// FIFO return at once (instead of waiting for a writer), and only a regular
// file of at most kMaxTokenFileBytes is read (not /dev/zero, /dev/stdin, a
// FIFO or a directory). The size is checked again while reading, in case the
// file grows after fstat.
absl::StatusOr<std::string> ReadAdminToken(const std::string& path) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open the file: ", std::strerror(errno)));
  }
  FdCloser closer(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot stat the file: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        "must be a regular file (not a FIFO, device, socket or directory)");
  }
  const std::string too_large =
      absl::StrCat("the file is larger than ", kMaxTokenFileBytes, " bytes");
  if (st.st_size > kMaxTokenFileBytes) {
    return absl::FailedPreconditionError(too_large);
  }
  // One byte more than allowed, to notice a file that grew since fstat.
  std::string contents(kMaxTokenFileBytes + 1, '\0');
  size_t size = 0;
  while (size < contents.size()) {
    const ssize_t n = read(fd, contents.data() + size, contents.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read the file: ", std::strerror(errno)));
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  if (size > static_cast<size_t>(kMaxTokenFileBytes)) {
    return absl::FailedPreconditionError(too_large);
  }
  contents.resize(size);
  std::string token(absl::StripAsciiWhitespace(contents));
  if (token.empty()) return absl::FailedPreconditionError("the file is empty");
  for (char c : token) {
    if (c <= ' ' || c > '~') {
      return absl::FailedPreconditionError(
          "the token must be one word of printable ASCII (no spaces or line "
          "breaks inside)");
    }
  }
  return token;
}

Candidate Prepare(ServerConfig raw, const ConfigOverrides& overrides) {
  Candidate c;
  c.config = std::move(raw);
  ApplyConfigDefaults(&c.config);
  ApplyConfigOverrides(overrides, &c.config);
  c.errors = ValidateServerConfig(c.config);
  const std::string& token_file = c.config.security().admin_token_file();
  if (!token_file.empty()) {
    auto token = ReadAdminToken(token_file);
    if (token.ok()) {
      c.admin_token = *std::move(token);
    } else {
      c.errors.push_back(
          {kTokenFileField,
           absl::StrCat(token_file, ": ", token.status().message())});
    }
  }
  return c;
}

ConfigFieldChange Change(const FieldDiff& diff,
                         ConfigFieldChange::Outcome outcome,
                         std::string message) {
  ConfigFieldChange change;
  change.set_field(diff.path);
  change.set_old_value(diff.old_value);
  change.set_new_value(diff.new_value);
  change.set_outcome(outcome);
  change.set_message(std::move(message));
  return change;
}

// REJECTED entries for `errors` (with old/new values when the field changed),
// sorted by field path like every report (admin.proto). The validator finds
// errors in its own order; a stable sort keeps several errors of one field in
// that order.
void AddRejections(const std::vector<ConfigError>& errors,
                   const std::vector<FieldDiff>& diffs, const char* note,
                   rollout::v1::ReloadConfigResponse* report) {
  std::vector<ConfigFieldChange> rejected;
  rejected.reserve(errors.size());
  for (const ConfigError& error : errors) {
    FieldDiff diff{error.field, "", "", rollout::v1::RELOAD_POLICY_UNSPECIFIED};
    for (const FieldDiff& d : diffs) {
      if (d.path == error.field) diff = d;
    }
    rejected.push_back(Change(diff, ConfigFieldChange::OUTCOME_REJECTED,
                              absl::StrCat(error.message, note)));
  }
  std::stable_sort(rejected.begin(), rejected.end(),
                   [](const ConfigFieldChange& a, const ConfigFieldChange& b) {
                     return a.field() < b.field();
                   });
  for (ConfigFieldChange& change : rejected) {
    *report->add_changes() = std::move(change);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConfigManager>> ConfigManager::Create(
    const Options& options) {
  ServerConfig raw;
  std::string source = "built-in defaults";
  if (!options.config_path.empty()) {
    auto loaded = LoadServerConfigFile(options.config_path);
    if (!loaded.ok()) return loaded.status();
    raw = *std::move(loaded);
    source = options.config_path;
  }
  Candidate candidate = Prepare(std::move(raw), options.overrides);
  if (!candidate.errors.empty()) {
    return ConfigErrorsToStatus(candidate.errors);
  }
  auto first = std::make_shared<ConfigSnapshot>();
  first->config = std::move(candidate.config);
  first->admin_token = std::move(candidate.admin_token);
  first->generation = 1;
  first->source = std::move(source);
  return std::unique_ptr<ConfigManager>(
      new ConfigManager(options, std::move(first)));
}

ConfigManager::ConfigManager(Options options,
                             std::shared_ptr<const ConfigSnapshot> first)
    : options_(std::move(options)), current_(std::move(first)) {}

std::shared_ptr<const ConfigSnapshot> ConfigManager::Current() const {
  rollout::MutexLock lock(&mu_);
  return current_;
}

void ConfigManager::AddListener(Listener listener) {
  rollout::MutexLock lock(&reload_mu_);
  listeners_.push_back(std::move(listener));
}

ConfigManager::ReloadOutcome ConfigManager::Reload(
    const rollout::v1::ReloadConfigRequest& request) {
  rollout::MutexLock reload_lock(&reload_mu_);
  const std::shared_ptr<const ConfigSnapshot> current = Current();
  ReloadOutcome out;
  out.report.set_dry_run(request.dry_run());
  out.report.set_generation(current->generation);
  const std::string kept = absl::StrCat(
      " (config generation ", current->generation, " stays in effect)");

  ServerConfig raw;
  if (request.has_config()) {
    raw = request.config();
    out.report.set_source("inline");
  } else if (options_.config_path.empty()) {
    out.status = absl::FailedPreconditionError(
        "rolloutd was started without --config: there is no file to re-read; "
        "send the config inline (ReloadConfigRequest.config)");
    return out;
  } else {
    out.report.set_source(options_.config_path);
    auto loaded = LoadServerConfigFile(options_.config_path);
    if (!loaded.ok()) {
      out.status = absl::Status(
          loaded.status().code(),
          absl::StrCat("config rejected: ", loaded.status().message(), kept));
      return out;
    }
    raw = *std::move(loaded);
  }

  Candidate candidate = Prepare(std::move(raw), options_.overrides);
  std::vector<FieldDiff> diffs =
      DiffServerConfigs(current->config, candidate.config);
  if (candidate.errors.empty() &&
      candidate.admin_token != current->admin_token) {
    diffs.push_back(
        {kTokenField, kRedacted, kRedacted, rollout::v1::RELOAD_POLICY_HOT});
  }
  std::sort(
      diffs.begin(), diffs.end(),
      [](const FieldDiff& a, const FieldDiff& b) { return a.path < b.path; });

  if (!candidate.errors.empty()) {
    AddRejections(candidate.errors, diffs, "", &out.report);
    out.status = absl::InvalidArgumentError(absl::StrCat(
        "config rejected: ", ConfigErrorsToStatus(candidate.errors).message(),
        kept));
    return out;
  }

  // The config that would be in effect: hot fields from the candidate, the
  // rest kept. It must be valid on its own too (a hot limit may depend on a
  // restart-only one).
  ServerConfig next = current->config;
  bool any_hot = false;
  for (const FieldDiff& diff : diffs) {
    if (diff.policy != rollout::v1::RELOAD_POLICY_HOT) continue;
    any_hot = true;
    if (diff.path == kTokenField) continue;  // not a config field
    const absl::Status copied =
        CopyConfigField(candidate.config, diff.path, &next);
    if (!copied.ok()) {
      out.status = absl::InternalError(copied.message());
      return out;
    }
  }
  const std::vector<ConfigError> merged_errors = ValidateServerConfig(next);
  if (!merged_errors.empty()) {
    AddRejections(merged_errors, diffs,
                  " (with the restart-only fields kept at their current "
                  "values)",
                  &out.report);
    out.status = absl::InvalidArgumentError(absl::StrCat(
        "config rejected: the hot-reloadable fields are not valid together "
        "with the restart-only fields in effect: ",
        ConfigErrorsToStatus(merged_errors).message(), kept));
    return out;
  }

  for (const FieldDiff& diff : diffs) {
    if (diff.policy == rollout::v1::RELOAD_POLICY_HOT) {
      *out.report.add_changes() =
          Change(diff,
                 request.dry_run() ? ConfigFieldChange::OUTCOME_WOULD_APPLY
                                   : ConfigFieldChange::OUTCOME_APPLIED,
                 "");
    } else {
      // Unannotated fields are treated as restart-only: the safe choice.
      *out.report.add_changes() =
          Change(diff, ConfigFieldChange::OUTCOME_NEEDS_RESTART,
                 "read only at start-up; takes effect after a restart");
    }
  }
  if (request.dry_run() || !any_hot) return out;

  auto snapshot = std::make_shared<ConfigSnapshot>();
  snapshot->config = std::move(next);
  snapshot->admin_token = std::move(candidate.admin_token);
  snapshot->generation = current->generation + 1;
  snapshot->source = out.report.source();
  {
    rollout::MutexLock lock(&mu_);
    current_ = snapshot;
  }
  out.report.set_applied(true);
  out.report.set_generation(snapshot->generation);
  for (const Listener& listener : listeners_) listener(snapshot);
  return out;
}

}  // namespace rollout::server
