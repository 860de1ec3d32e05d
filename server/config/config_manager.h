// ConfigManager: the config in effect, as an immutable snapshot, and
// Admin.ReloadConfig semantics.
//
//   ASSIGN_OR_RETURN(auto manager,
//   ConfigManager::Create({"/etc/rollout.textproto"})); std::shared_ptr<const
//   ConfigSnapshot> config = manager->Current();
//   ... a request uses `config` from start to end, whatever reloads happen ...
//   ConfigManager::ReloadOutcome r = manager->Reload(request);  // blocking I/O
//
// A reload reads the file (or takes the inline config), applies the defaults
// and the command-line overrides, validates it, reads the admin token file,
// and compares it field by field with the config in effect:
//  - any invalid value: the whole reload is rejected, nothing changes;
//  - hot fields (config.proto annotations) are applied together: one new
//    snapshot, generation + 1, swapped in atomically;
//  - restart-only fields are reported as needs_restart and keep their value;
//  - dry_run reports the same and changes nothing.
// The generation increases only when a reload changed something in effect.
//
// Thread-safety: Current() may be called from any thread at any time (it
// copies a shared_ptr under a mutex). Reload() calls are serialised; they do
// file I/O, so call them off the gRPC callback threads.
#ifndef ROLLOUT_SERVER_CONFIG_CONFIG_MANAGER_H_
#define ROLLOUT_SERVER_CONFIG_CONFIG_MANAGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "rollout/v1/admin.pb.h"
#include "rollout/v1/config.pb.h"
#include "server/config/config_defaults.h"

namespace rollout::server {

// One config in effect. Immutable once published.
struct ConfigSnapshot {
  // Defaults and command-line overrides applied; valid.
  rollout::v1::ServerConfig config;
  // Contents of security.admin_token_file; empty = admin RPCs are open.
  // A secret: never log or print it.
  std::string admin_token;
  // 1 for the start-up config, +1 for every reload that changed something.
  uint64_t generation = 1;
  // Where it came from: a file path, "inline" or "built-in defaults".
  std::string source;
};

class ConfigManager {
 public:
  struct Options {
    // Config file (text format, or JSON when it ends in .json); empty: the
    // built-in defaults, and ReloadConfig then needs an inline config.
    std::string config_path;
    ConfigOverrides overrides;
  };

  // Loads and validates the start-up config. INVALID_ARGUMENT naming every
  // bad field, FAILED_PRECONDITION when a file cannot be read.
  static absl::StatusOr<std::unique_ptr<ConfigManager>> Create(
      const Options& options);

  ConfigManager(const ConfigManager&) = delete;
  ConfigManager& operator=(const ConfigManager&) = delete;

  std::shared_ptr<const ConfigSnapshot> Current() const
      ABSL_LOCKS_EXCLUDED(mu_);

  struct ReloadOutcome {
    // OK when the config was accepted (applied, or valid for a dry run).
    // INVALID_ARGUMENT (parse error, bad values) or FAILED_PRECONDITION (no
    // file, unreadable file) when rejected; the message names every field.
    absl::Status status;
    // Per-field report (also filled for a rejection, with REJECTED entries).
    rollout::v1::ReloadConfigResponse report;
  };
  ReloadOutcome Reload(const rollout::v1::ReloadConfigRequest& request)
      ABSL_LOCKS_EXCLUDED(reload_mu_, mu_);

  // Called with each new snapshot after a reload applied it (on the reloading
  // thread, no lock held). Register before the first reload.
  using Listener =
      std::function<void(const std::shared_ptr<const ConfigSnapshot>&)>;
  void AddListener(Listener listener) ABSL_LOCKS_EXCLUDED(reload_mu_);

 private:
  ConfigManager(Options options, std::shared_ptr<const ConfigSnapshot> first);

  const Options options_;
  // Serialises reloads (a reload is read-compare-swap).
  rollout::Mutex reload_mu_;
  std::vector<Listener> listeners_ ABSL_GUARDED_BY(reload_mu_);
  mutable rollout::Mutex mu_;
  std::shared_ptr<const ConfigSnapshot> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_CONFIG_CONFIG_MANAGER_H_
