#include "model/json_util.h"

#include <string>

#include "gtest/gtest.h"

namespace rollout::model {
namespace {

TEST(ParseJsonTest, ParsesObjects) {
  absl::StatusOr<nlohmann::json> j = ParseJson(R"({"a": 1, "b": [2, 3]})", "t");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["a"].get<int>(), 1);
}

TEST(ParseJsonTest, MalformedTextIsAnErrorNamingTheDocument) {
  for (const char* text : {"", "{", "{\"a\": }", "[1, 2", "\"\\xff\"", "nul"}) {
    absl::StatusOr<nlohmann::json> j = ParseJson(text, "my.json");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_NE(j.status().message().find("my.json"), absl::string_view::npos);
  }
}

TEST(ParseJsonTest, DeepNestingIsRejectedBeforeParsing) {
  std::string deep(100000, '[');
  absl::StatusOr<nlohmann::json> j = ParseJson(deep, "deep");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("nested deeper"),
            absl::string_view::npos);
  // Brackets inside strings do not count.
  std::string in_string = "[\"" + std::string(1000, '[') + "\"]";
  EXPECT_TRUE(ParseJson(in_string, "s").ok());
}

TEST(GettersTest, RequiredAndOptionalFields) {
  nlohmann::json j = nlohmann::json::parse(
      R"({"i": 7, "f": 4096.0, "s": "x", "b": true, "l": [1, 2], "n": null,
          "neg": -3, "big": 18446744073709551615})");
  EXPECT_EQ(*GetInt(j, "i", "w"), 7);
  EXPECT_EQ(*GetInt(j, "f", "w"), 4096);  // integral float accepted
  EXPECT_EQ(*GetInt(j, "neg", "w"), -3);
  EXPECT_FALSE(GetInt(j, "big", "w").ok());
  absl::Status missing = GetInt(j, "nope", "cfg").status();
  EXPECT_NE(missing.message().find("missing required field 'nope'"),
            absl::string_view::npos);
  EXPECT_NE(missing.message().find("cfg"), absl::string_view::npos);
  EXPECT_FALSE(GetInt(j, "s", "w").ok());
  EXPECT_FALSE(GetOptionalInt(j, "n", "w")->has_value());  // null = missing
  EXPECT_EQ(**GetOptionalString(j, "s", "w"), "x");
  EXPECT_FALSE(GetOptionalString(j, "i", "w").ok());
  EXPECT_TRUE(**GetOptionalBool(j, "b", "w"));
  EXPECT_EQ(**GetOptionalDouble(j, "f", "w"), 4096.0);
  EXPECT_EQ(GetOptionalIntOrIntList(j, "l", "w")->value(),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(GetOptionalIntOrIntList(j, "i", "w")->value(),
            (std::vector<int64_t>{7}));
  EXPECT_FALSE(GetOptionalIntOrIntList(j, "s", "w").ok());
}

}  // namespace
}  // namespace rollout::model
