#include "server/config/config_defaults.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_diff.h"
#include "server/config/config_io.h"
#include "server/config/config_validator.h"

namespace rollout::server {
namespace {

TEST(ConfigDefaultsTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateServerConfig(DefaultServerConfig()).empty());
}

TEST(ConfigDefaultsTest, DefaultTextprotoIsExactlyTheBuiltInDefaults) {
  // server/config/default.textproto documents the defaults; it must not drift.
  auto file = LoadServerConfigFile("server/config/default.textproto");
  ASSERT_TRUE(file.ok()) << file.status();
  v1::ServerConfig with_defaults = *file;
  ApplyConfigDefaults(&with_defaults);
  for (const FieldDiff& d :
       DiffServerConfigs(DefaultServerConfig(), with_defaults)) {
    ADD_FAILURE() << d.path << ": built-in " << d.old_value << ", file "
                  << d.new_value;
  }
  // Every field the file sets already has its default value: applying the
  // defaults changes nothing it wrote.
  for (const FieldDiff& d : DiffServerConfigs(*file, with_defaults)) {
    EXPECT_TRUE(d.old_value.empty())
        << d.path << " is written in the file but changed by the defaults";
  }
}

TEST(ConfigDefaultsTest, KeyValues) {
  const v1::ServerConfig c = DefaultServerConfig();
  EXPECT_EQ(c.model().path(), "tests/data/tiny_qwen3_5");
  EXPECT_EQ(c.workers().count(), 1);
  EXPECT_EQ(c.replay_ssm().default_mode(), v1::REPLAY_SSM_MODE_AUTO);
  EXPECT_TRUE(c.replay_ssm().enabled());
  EXPECT_EQ(c.health().watchdog_seconds(), 60);
  EXPECT_TRUE(c.security().admin_token_file().empty());
}

TEST(ConfigDefaultsTest, SetValuesAreKeptIncludingMeaningfulZeros) {
  v1::ServerConfig c;
  c.mutable_admission()->set_max_n(5);
  c.mutable_health()->set_watchdog_seconds(0);       // disables the watchdog
  c.mutable_default_sampling()->set_temperature(0);  // greedy by default
  c.mutable_replay_ssm()->set_enabled(false);
  c.mutable_admission()->set_max_top_logprobs(0);
  ApplyConfigDefaults(&c);
  EXPECT_EQ(c.admission().max_n(), 5);
  EXPECT_EQ(c.health().watchdog_seconds(), 0);
  EXPECT_EQ(c.default_sampling().temperature(), 0);
  EXPECT_FALSE(c.replay_ssm().enabled());
  EXPECT_EQ(c.admission().max_top_logprobs(), 0);
}

TEST(ConfigDefaultsTest, OverridesWinWhenSet) {
  v1::ServerConfig c = DefaultServerConfig();
  ApplyConfigOverrides({"127.0.0.1:0", ""}, &c);
  EXPECT_EQ(c.listen(), "127.0.0.1:0");
  EXPECT_EQ(c.metrics_listen(), "127.0.0.1:9464");
  ApplyConfigOverrides({"", "0.0.0.0:1"}, &c);
  EXPECT_EQ(c.listen(), "127.0.0.1:0");
  EXPECT_EQ(c.metrics_listen(), "0.0.0.0:1");
}

}  // namespace
}  // namespace rollout::server
