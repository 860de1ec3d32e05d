#include "server/config/config_diff.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_defaults.h"

namespace rollout::server {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

TEST(ConfigDiffTest, EveryLeafHasAReloadPolicy) {
  // config.proto documents hot vs restart per field; an unannotated new field
  // would silently be treated as restart-only.
  const auto paths = ServerConfigLeafPaths();
  EXPECT_GT(paths.size(), 30u);
  for (const std::string& path : paths) {
    EXPECT_NE(ReloadPolicyOf(path), v1::RELOAD_POLICY_UNSPECIFIED) << path;
  }
}

TEST(ConfigDiffTest, PoliciesAreInheritedAndOverridden) {
  EXPECT_EQ(ReloadPolicyOf("listen"), v1::RELOAD_POLICY_RESTART);
  EXPECT_EQ(ReloadPolicyOf("admission.max_n"), v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(ReloadPolicyOf("default_sampling.temperature"),
            v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(ReloadPolicyOf("replay_ssm.ring_length"),
            v1::RELOAD_POLICY_RESTART);
  EXPECT_EQ(ReloadPolicyOf("replay_ssm.auto_min_batch_size"),
            v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(ReloadPolicyOf("security.admin_token_file"), v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(ReloadPolicyOf("security.tls.cert_file"),
            v1::RELOAD_POLICY_RESTART);
  EXPECT_EQ(ReloadPolicyOf("transport.keepalive.time_seconds"),
            v1::RELOAD_POLICY_RESTART);
  EXPECT_EQ(ReloadPolicyOf("model.roots"), v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(ReloadPolicyOf("model.path"), v1::RELOAD_POLICY_RESTART);
  // Not leaves / unknown.
  EXPECT_EQ(ReloadPolicyOf("admission"), v1::RELOAD_POLICY_UNSPECIFIED);
  EXPECT_EQ(ReloadPolicyOf("nope"), v1::RELOAD_POLICY_UNSPECIFIED);
  EXPECT_EQ(ReloadPolicyOf("listen.x"), v1::RELOAD_POLICY_UNSPECIFIED);
}

TEST(ConfigDiffTest, SameConfigHasNoDiff) {
  EXPECT_THAT(DiffServerConfigs(DefaultServerConfig(), DefaultServerConfig()),
              IsEmpty());
}

TEST(ConfigDiffTest, ReportsChangedLeavesWithValuesAndPolicy) {
  v1::ServerConfig a = DefaultServerConfig();
  v1::ServerConfig b = a;
  b.mutable_admission()->set_max_n(8);
  b.set_listen("0.0.0.0:1");
  b.mutable_model()->add_roots("/m");
  b.mutable_replay_ssm()->set_default_mode(v1::REPLAY_SSM_MODE_OFF);
  const auto diffs = DiffServerConfigs(a, b);
  ASSERT_EQ(diffs.size(), 4u);
  EXPECT_EQ(diffs[0].path, "listen");
  EXPECT_EQ(diffs[0].old_value, "\"127.0.0.1:50051\"");
  EXPECT_EQ(diffs[0].new_value, "\"0.0.0.0:1\"");
  EXPECT_EQ(diffs[0].policy, v1::RELOAD_POLICY_RESTART);
  EXPECT_EQ(diffs[1].path, "model.roots");
  EXPECT_EQ(diffs[1].old_value, "[]");
  EXPECT_EQ(diffs[1].new_value, "[\"/m\"]");
  EXPECT_EQ(diffs[2].path, "admission.max_n");
  EXPECT_EQ(diffs[2].old_value, "64");
  EXPECT_EQ(diffs[2].new_value, "8");
  EXPECT_EQ(diffs[2].policy, v1::RELOAD_POLICY_HOT);
  EXPECT_EQ(diffs[3].path, "replay_ssm.default_mode");
  EXPECT_EQ(diffs[3].new_value, "REPLAY_SSM_MODE_OFF");
}

TEST(ConfigDiffTest, PresenceOfOptionalFieldsCounts) {
  v1::ServerConfig a;
  v1::ServerConfig b;
  b.mutable_health()->set_watchdog_seconds(0);  // set to zero != unset
  EXPECT_THAT(DiffServerConfigs(a, b),
              ElementsAre(Field(&FieldDiff::path, "health.watchdog_seconds")));
}

TEST(ConfigDiffTest, CopyFieldCopiesOnlyThatLeaf) {
  v1::ServerConfig from = DefaultServerConfig();
  from.mutable_admission()->set_max_n(3);
  from.mutable_admission()->set_max_tokens(5);
  from.mutable_model()->add_roots("/a");
  from.mutable_model()->add_roots("/b");
  v1::ServerConfig to = DefaultServerConfig();
  to.mutable_model()->add_roots("/old");
  ASSERT_TRUE(CopyConfigField(from, "admission.max_n", &to).ok());
  ASSERT_TRUE(CopyConfigField(from, "model.roots", &to).ok());
  EXPECT_EQ(to.admission().max_n(), 3);
  EXPECT_EQ(to.admission().max_tokens(), 32768);  // not copied
  ASSERT_EQ(to.model().roots_size(), 2);
  EXPECT_EQ(to.model().roots(1), "/b");
}

TEST(ConfigDiffTest, CopyFieldCopiesAbsence) {
  v1::ServerConfig from;
  v1::ServerConfig to;
  to.mutable_health()->set_watchdog_seconds(5);
  ASSERT_TRUE(CopyConfigField(from, "health.watchdog_seconds", &to).ok());
  EXPECT_FALSE(to.health().has_watchdog_seconds());
}

TEST(ConfigDiffTest, CopyFieldRejectsNonLeaves) {
  v1::ServerConfig c;
  EXPECT_EQ(CopyConfigField(c, "admission", &c).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CopyConfigField(c, "bogus.path", &c).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rollout::server
