#include "server/admin_auth.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ClientMetadata With(const std::string& key, const std::string& value) {
  // string_ref does not own: keep the strings alive for the test's duration.
  static std::vector<std::unique_ptr<std::string>> keep;
  keep.push_back(std::make_unique<std::string>(key));
  const std::string* k = keep.back().get();
  keep.push_back(std::make_unique<std::string>(value));
  const std::string* v = keep.back().get();
  ClientMetadata metadata;
  metadata.emplace(grpc::string_ref(*k), grpc::string_ref(*v));
  return metadata;
}

TEST(AdminAuthTest, NoTokenConfiguredMeansOpen) {
  EXPECT_TRUE(CheckAdminToken({}, "").ok());
}

TEST(AdminAuthTest, AcceptsTheRightBearerToken) {
  EXPECT_TRUE(CheckAdminToken(With("authorization", "Bearer t0k"), "t0k").ok());
  EXPECT_TRUE(CheckAdminToken(With("authorization", "bearer t0k"), "t0k").ok());
}

TEST(AdminAuthTest, RejectsMissingMalformedAndWrongTokensWithoutLeakingThem) {
  const std::string secret = "s3cr3t-admin";
  for (const ClientMetadata& metadata :
       {ClientMetadata(), With("authorization", "s3cr3t-admin"),
        With("authorization", "Basic s3cr3t-admin"),
        With("authorization", "Bearer s3cr3t-admiN"),
        With("authorization", "Bearer s3cr3t-admin-and-more"),
        With("authorization", "Bearer "), With("x-token", "s3cr3t-admin")}) {
    const absl::Status status = CheckAdminToken(metadata, secret);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(std::string(status.message()), Not(HasSubstr("s3cr3t")));
  }
}

TEST(AdminAuthTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  // A string and its prefix plus NULs must differ (length is compared too).
  EXPECT_FALSE(ConstantTimeEquals(absl::string_view("ab\0", 3), "ab"));
}

}  // namespace
}  // namespace rollout::server
