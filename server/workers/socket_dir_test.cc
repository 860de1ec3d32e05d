#include "server/workers/socket_dir.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(SocketDirTest, FreshPrivateDirectoryIsRemovedAfterwards) {
  std::string path;
  {
    auto dir = SocketDir::Create("", 2);
    ASSERT_TRUE(dir.ok()) << dir.status();
    path = (*dir)->path();
    EXPECT_EQ(ModeOf(path), 0700u);
    EXPECT_EQ((*dir)->SocketPath(1), path + "/worker-1.sock");
    EXPECT_LE((*dir)->SocketPath(1).size(), 107u);
  }
  EXPECT_FALSE(Exists(path));
}

TEST(SocketDirTest, ConfiguredDirectoryIsCreatedPrivateAndKept) {
  char base[] = "/tmp/socket-dir-test-XXXXXX";
  ASSERT_NE(mkdtemp(base), nullptr);
  const std::string configured = std::string(base) + "/sockets";
  {
    auto dir = SocketDir::Create(configured, 1);
    ASSERT_TRUE(dir.ok()) << dir.status();
    EXPECT_EQ(ModeOf(configured), 0700u);
  }
  EXPECT_TRUE(Exists(configured));
  // Reusing it is fine while it stays private.
  EXPECT_TRUE(SocketDir::Create(configured, 1).ok());
  ASSERT_EQ(chmod(configured.c_str(), 0755), 0);
  auto open = SocketDir::Create(configured, 1);
  EXPECT_EQ(open.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(open.status().message().find("0700"), absl::string_view::npos);
  rmdir(configured.c_str());
  rmdir(base);
}

TEST(SocketDirTest, TooLongConfiguredPathIsRefused) {
  const std::string long_dir = "/tmp/" + std::string(110, 'd');
  EXPECT_FALSE(SocketDir::Create(long_dir, 1).ok());
  rmdir(long_dir.c_str());
}

}  // namespace
}  // namespace rollout::server::workers
