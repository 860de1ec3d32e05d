#include "server/config/config_manager.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Outcome = v1::ConfigFieldChange::Outcome;

std::string TestTmpDir() { return std::getenv("TEST_TMPDIR"); }

std::string TempPath(const std::string& name) {
  return TestTmpDir() + "/" + name;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

const v1::ConfigFieldChange* FindChange(const v1::ReloadConfigResponse& r,
                                        const std::string& field) {
  for (const auto& c : r.changes()) {
    if (c.field() == field) return &c;
  }
  return nullptr;
}

v1::ReloadConfigRequest FromFile(bool dry_run = false) {
  v1::ReloadConfigRequest request;
  request.set_dry_run(dry_run);
  return request;
}

class ConfigManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath(
        std::string(
            ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
        ".textproto");
    Write(path_, "admission { max_n: 16 }\n");
    auto manager = ConfigManager::Create({path_, {"127.0.0.1:0", ""}});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
  }

  std::string path_;
  std::unique_ptr<ConfigManager> manager_;
};

TEST_F(ConfigManagerTest, StartsAtGenerationOneWithDefaultsAndOverrides) {
  auto current = manager_->Current();
  EXPECT_EQ(current->generation, 1u);
  EXPECT_EQ(current->source, path_);
  EXPECT_EQ(current->config.admission().max_n(), 16);
  EXPECT_EQ(current->config.admission().max_tokens(), 32768);  // default
  EXPECT_EQ(current->config.listen(), "127.0.0.1:0");          // override
  EXPECT_TRUE(current->admin_token.empty());
}

TEST_F(ConfigManagerTest, BrokenFileIsRejectedAndNothingChanges) {
  auto before = manager_->Current();
  Write(path_, "admission { max_n: \n");  // syntax error
  auto outcome = manager_->Reload(FromFile());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outcome.status.message()),
              HasSubstr("generation 1 stays in effect"));
  EXPECT_FALSE(outcome.report.applied());
  EXPECT_EQ(outcome.report.generation(), 1u);
  EXPECT_EQ(manager_->Current(), before);  // the very same snapshot
}

TEST_F(ConfigManagerTest, InvalidValueIsRejectedPerField) {
  Write(path_,
        "admission { max_n: 0 max_tokens: -1 }\n"
        "health { watchdog_seconds: 5 }\n");
  auto outcome = manager_->Reload(FromFile());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(outcome.status.message()),
      HasSubstr("admission.max_tokens: must be in [1, 16777216], got -1"));
  const auto* change = FindChange(outcome.report, "admission.max_tokens");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->outcome(), v1::ConfigFieldChange::OUTCOME_REJECTED);
  EXPECT_EQ(change->new_value(), "-1");
  // The valid hot change in the same file is not applied either.
  EXPECT_EQ(manager_->Current()->config.health().watchdog_seconds(), 60);
  EXPECT_EQ(manager_->Current()->generation, 1u);
}

TEST_F(ConfigManagerTest, ValidChangeAppliesHotFieldsAndBumpsGeneration) {
  Write(path_,
        "admission { max_n: 32 }\n"
        "replay_ssm { auto_min_batch_size: 4 ring_length: 8 }\n"
        "metrics_listen: \"0.0.0.0:1\"\n");
  int notified = 0;
  manager_->AddListener([&](const auto& snapshot) {
    ++notified;
    EXPECT_EQ(snapshot->generation, 2u);
  });
  auto outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.report.applied());
  EXPECT_EQ(outcome.report.generation(), 2u);
  EXPECT_EQ(notified, 1);
  auto current = manager_->Current();
  EXPECT_EQ(current->generation, 2u);
  EXPECT_EQ(current->config.admission().max_n(), 32);
  EXPECT_EQ(current->config.replay_ssm().auto_min_batch_size(), 4);
  // Restart-only fields keep their value and are reported.
  EXPECT_EQ(current->config.replay_ssm().ring_length(), 16);
  EXPECT_EQ(current->config.metrics_listen(), "127.0.0.1:9464");
  EXPECT_EQ(FindChange(outcome.report, "admission.max_n")->outcome(),
            v1::ConfigFieldChange::OUTCOME_APPLIED);
  EXPECT_EQ(FindChange(outcome.report, "admission.max_n")->old_value(), "16");
  EXPECT_EQ(FindChange(outcome.report, "replay_ssm.ring_length")->outcome(),
            v1::ConfigFieldChange::OUTCOME_NEEDS_RESTART);
  EXPECT_EQ(FindChange(outcome.report, "metrics_listen")->outcome(),
            v1::ConfigFieldChange::OUTCOME_NEEDS_RESTART);
  // The override of --listen still wins: no change reported for it.
  EXPECT_EQ(FindChange(outcome.report, "listen"), nullptr);
  EXPECT_EQ(current->config.listen(), "127.0.0.1:0");
}

TEST_F(ConfigManagerTest, DryRunReportsButChangesNothing) {
  auto before = manager_->Current();
  Write(path_, "admission { max_n: 8 }\n");
  auto outcome = manager_->Reload(FromFile(/*dry_run=*/true));
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.report.dry_run());
  EXPECT_FALSE(outcome.report.applied());
  EXPECT_EQ(outcome.report.generation(), 1u);
  EXPECT_EQ(FindChange(outcome.report, "admission.max_n")->outcome(),
            v1::ConfigFieldChange::OUTCOME_WOULD_APPLY);
  EXPECT_EQ(manager_->Current(), before);
}

TEST_F(ConfigManagerTest, UnchangedOrRestartOnlyReloadKeepsTheGeneration) {
  auto outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok());
  EXPECT_FALSE(outcome.report.applied());
  EXPECT_EQ(outcome.report.changes_size(), 0);
  Write(path_, "admission { max_n: 16 }\nworkers { count: 2 }\n");
  outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok());
  EXPECT_FALSE(outcome.report.applied());
  EXPECT_EQ(outcome.report.changes_size(), 1);
  EXPECT_EQ(manager_->Current()->generation, 1u);
}

TEST_F(ConfigManagerTest, InlineConfigReplacesTheFileContents) {
  v1::ReloadConfigRequest request;
  request.mutable_config()->mutable_admission()->set_max_n(2);
  auto outcome = manager_->Reload(request);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.report.source(), "inline");
  EXPECT_EQ(manager_->Current()->config.admission().max_n(), 2);
  EXPECT_EQ(manager_->Current()->source, "inline");
}

TEST_F(ConfigManagerTest,
       HotFieldInvalidAgainstRestartFieldInEffectIsRejected) {
  // max_response_bytes (hot) must fit max_send_message_bytes (restart): a file
  // raising both cannot take effect, since only the first would apply.
  Write(path_,
        "admission { max_n: 16 max_response_bytes: 1000000000 }\n"
        "transport { max_send_message_bytes: 2000000000 }\n");
  auto outcome = manager_->Reload(FromFile());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outcome.status.message()),
              HasSubstr("admission.max_response_bytes"));
  EXPECT_EQ(manager_->Current()->generation, 1u);
}

TEST_F(ConfigManagerTest, AdminTokenIsReadRedactedAndHotReloaded) {
  const std::string token_path = TempPath("token");
  Write(token_path, "  s3cret-token\n");
  Write(path_, "admission { max_n: 16 }\nsecurity { admin_token_file: \"" +
                   token_path + "\" }\n");
  auto outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(manager_->Current()->admin_token, "s3cret-token");
  const auto* change = FindChange(outcome.report, "security.admin_token");
  ASSERT_NE(change, nullptr);
  EXPECT_EQ(change->new_value(), "<redacted>");
  EXPECT_THAT(outcome.report.DebugString(), Not(HasSubstr("s3cret")));

  // Same file path, new contents: still picked up.
  Write(token_path, "other-token");
  outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok());
  EXPECT_TRUE(outcome.report.applied());
  EXPECT_EQ(manager_->Current()->admin_token, "other-token");

  // An empty token file is an error that names the field, not the token.
  Write(token_path, "\n");
  outcome = manager_->Reload(FromFile());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outcome.status.message()),
              HasSubstr("security.admin_token_file"));
  EXPECT_EQ(manager_->Current()->admin_token, "other-token");
}

TEST_F(ConfigManagerTest, AdminTokenFileMustBeASmallRegularFile) {
  // Each of these would hang a reload (FIFO without a writer) or grow memory
  // without bound (/dev/zero) if read like a file; each is refused at once
  // with an error naming the field and never the token.
  const std::string fifo = TempPath("token_fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string large = TempPath("token_large");
  Write(large, "big-secret-" + std::string(4096, 'x'));
  const std::string at_limit = TempPath("token_at_limit");
  const std::string token_at_limit = "edge-secret-" + std::string(4084, 'y');
  ASSERT_EQ(token_at_limit.size(), 4096u);
  Write(at_limit, token_at_limit);
  struct Case {
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases = {
      {fifo, "must be a regular file"},
      {"/dev/zero", "must be a regular file"},
      {TestTmpDir(), "must be a regular file"},
      {large, "the file is larger than 4096 bytes"},
      {TempPath("missing_token"), "cannot open the file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    Write(path_, "security { admin_token_file: \"" + c.path + "\" }\n");
    const auto outcome = manager_->Reload(FromFile());
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        std::string(outcome.status.message()),
        HasSubstr("security.admin_token_file: " + c.path + ": " + c.message));
    EXPECT_THAT(std::string(outcome.status.message()),
                Not(HasSubstr("secret")));
    EXPECT_THAT(outcome.report.DebugString(), Not(HasSubstr("secret")));
    EXPECT_EQ(manager_->Current()->generation, 1u);
  }
  // Exactly 4096 bytes is still accepted.
  Write(path_, "security { admin_token_file: \"" + at_limit + "\" }\n");
  const auto outcome = manager_->Reload(FromFile());
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(manager_->Current()->admin_token, token_at_limit);
}

TEST_F(ConfigManagerTest, RejectedEntriesAreSortedByFieldPath) {
  // The validator finds these errors in another order (top-level fields,
  // workers, admission, health, then the token file); the report lists them
  // sorted by path, like an accepted reload's.
  Write(path_,
        "shutdown_grace_seconds: -1\n"
        "workers { count: 100 }\n"
        "admission { max_n: 5000 max_tokens: 20000000 }\n"
        "health { watchdog_seconds: -1 }\n"
        "security { admin_token_file: \"/nonexistent/token\" }\n");
  auto outcome = manager_->Reload(FromFile());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::string> fields;
  for (const auto& change : outcome.report.changes()) {
    EXPECT_EQ(change.outcome(), v1::ConfigFieldChange::OUTCOME_REJECTED)
        << change.field();
    fields.push_back(change.field());
  }
  EXPECT_THAT(fields,
              ::testing::ElementsAre(
                  "admission.max_n", "admission.max_tokens",
                  "health.watchdog_seconds", "security.admin_token_file",
                  "shutdown_grace_seconds", "workers.count"));
  // The same input gives the same report, byte for byte.
  EXPECT_EQ(manager_->Reload(FromFile()).report.SerializeAsString(),
            outcome.report.SerializeAsString());
}

TEST(ConfigManagerStartTest, WithoutFileUsesDefaultsAndNeedsInlineReload) {
  auto manager = ConfigManager::Create({});
  ASSERT_TRUE(manager.ok());
  EXPECT_EQ((*manager)->Current()->source, "built-in defaults");
  auto outcome = (*manager)->Reload(v1::ReloadConfigRequest());
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(outcome.status.message()), HasSubstr("inline"));
}

TEST(ConfigManagerStartTest, InvalidStartupConfigNamesTheField) {
  const std::string path = TempPath("bad_start.textproto");
  Write(path, "replay_ssm { ring_length: 1000 }\n");
  auto manager = ConfigManager::Create({path});
  EXPECT_EQ(manager.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(manager.status().message()),
              HasSubstr("replay_ssm.ring_length"));
  EXPECT_EQ(ConfigManager::Create({"/nonexistent.textproto"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace rollout::server
