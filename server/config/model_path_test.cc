#include "server/config/model_path.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

std::string MakeDir(const std::string& path) {
  mkdir(path.c_str(), 0755);
  return path;
}

TEST(ModelPathTest, FirstRootThatHasTheDirectoryWins) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string a = MakeDir(tmp + "/a");
  const std::string b = MakeDir(tmp + "/b");
  MakeDir(b + "/m");
  PathSearch search{{a, b}};
  auto resolved = ResolveModelPath("m", search);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, b + "/m");
  MakeDir(a + "/m");
  EXPECT_EQ(*ResolveModelPath("m", search), a + "/m");
}

TEST(ModelPathTest, AbsolutePathsAreTakenAsTheyAre) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  EXPECT_EQ(*ResolveModelPath(tmp, PathSearch{}), tmp);
  EXPECT_EQ(ResolveModelPath(tmp + "/missing", PathSearch{}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ModelPathTest, NotFoundListsWhereItLooked) {
  auto resolved = ResolveModelPath("nope", PathSearch{{"/x", "/y"}});
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(resolved.status().message()),
              HasSubstr("/x/nope, /y/nope"));
}

TEST(ModelPathTest, EnvironmentSearchIncludesTheCurrentDirectory) {
  const PathSearch search = PathSearch::FromEnvironment();
  ASSERT_FALSE(search.roots.empty());
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(search.roots[0], cwd);
}

}  // namespace
}  // namespace rollout::server
