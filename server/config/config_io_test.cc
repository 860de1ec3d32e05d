#include "server/config/config_io.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigIoTest, FormatFollowsTheExtension) {
  EXPECT_EQ(ConfigFormatForPath("a/b.json"), ConfigFormat::kJson);
  EXPECT_EQ(ConfigFormatForPath("a/b.JSON"), ConfigFormat::kJson);
  EXPECT_EQ(ConfigFormatForPath("a/b.textproto"), ConfigFormat::kTextProto);
  EXPECT_EQ(ConfigFormatForPath("rollout.conf"), ConfigFormat::kTextProto);
}

TEST(ConfigIoTest, ParsesTextFormat) {
  auto config = ParseServerConfig(
      "listen: \"0.0.0.0:1\"\nadmission { max_n: 8 }\n"
      "replay_ssm { default_mode: REPLAY_SSM_MODE_ON }",
      ConfigFormat::kTextProto);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen(), "0.0.0.0:1");
  EXPECT_EQ(config->admission().max_n(), 8);
  EXPECT_EQ(config->replay_ssm().default_mode(), v1::REPLAY_SSM_MODE_ON);
}

TEST(ConfigIoTest, ParsesJson) {
  auto config = ParseServerConfig(
      R"({"listen": "[::]:5", "admission": {"maxN": 3},
          "health": {"watchdogSeconds": 0}})",
      ConfigFormat::kJson);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->listen(), "[::]:5");
  EXPECT_EQ(config->admission().max_n(), 3);
  EXPECT_TRUE(config->health().has_watchdog_seconds());
  EXPECT_EQ(config->health().watchdog_seconds(), 0);
}

TEST(ConfigIoTest, UnknownFieldsAreErrorsInBothFormats) {
  auto text =
      ParseServerConfig("admission { max_nn: 8 }", ConfigFormat::kTextProto);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("max_nn"));
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("line 1:"));
  auto json =
      ParseServerConfig(R"({"admission": {"maxNn": 8}})", ConfigFormat::kJson);
  EXPECT_EQ(json.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigIoTest, SyntaxErrorNamesTheLine) {
  auto config = ParseServerConfig("listen: \"a:1\"\nadmission {\n  max_n: x\n}",
                                  ConfigFormat::kTextProto);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("line 3:"));
}

TEST(ConfigIoTest, LoadsAFileAndNamesItInErrors) {
  const std::string good =
      WriteTemp("good.textproto", "admission { max_n: 9 }");
  auto config = LoadServerConfigFile(good);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->admission().max_n(), 9);

  const std::string bad = WriteTemp("bad.json", "{not json");
  auto broken = LoadServerConfigFile(bad);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr(bad));

  auto missing = LoadServerConfigFile("/nonexistent/rollout.textproto");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("/nonexistent/rollout.textproto"));
}

TEST(ConfigIoTest, TextRoundTrip) {
  v1::ServerConfig config;
  config.set_listen("127.0.0.1:7");
  config.mutable_model()->add_roots("/models");
  auto parsed =
      ParseServerConfig(ServerConfigToText(config), ConfigFormat::kTextProto);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->SerializeAsString(), config.SerializeAsString());
}

}  // namespace
}  // namespace rollout::server
