#include "server/workers/spawn.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

// Polls TryReap until the child exits.
int WaitExit(pid_t pid) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    auto r = TryReap(pid);
    EXPECT_TRUE(r.ok());
    if (r.ok() && r->has_value()) return **r;
    absl::SleepFor(absl::Milliseconds(10));
  }
  ADD_FAILURE() << "child did not exit";
  return -1;
}

std::string TempFile() {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/spawn_test_out";
}

TEST(SpawnTest, RunsWithExactlyTheGivenEnvironment) {
  const std::string out = TempFile();
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "env > " + out + "; exit 3"};
  spec.env = {"ONLY=this"};
  auto pid = Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status();
  const int status = WaitExit(*pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(DescribeWaitStatus(status), "exited with status 3");
  std::ifstream in(out);
  std::string all((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("ONLY=this"), std::string::npos);
  EXPECT_EQ(all.find("TEST_TMPDIR"), std::string::npos);
}

TEST(SpawnTest, ExecFailureIsAnError) {
  SpawnSpec spec;
  spec.argv = {"/nonexistent/rollout-worker"};
  auto pid = Spawn(spec);
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(pid.status().message().find("/nonexistent/rollout-worker"),
            absl::string_view::npos);
}

TEST(SpawnTest, KilledChildIsDescribedAndInItsOwnProcessGroup) {
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "60"};
  auto pid = Spawn(spec);
  ASSERT_TRUE(pid.ok());
  auto running = TryReap(*pid);
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->has_value());
  // setpgid runs in the child before exec: poll until it shows.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (getpgid(*pid) != *pid && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(getpgid(*pid), *pid);
  kill(*pid, SIGKILL);
  const int status = WaitExit(*pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(DescribeWaitStatus(status).rfind("killed by signal 9", 0), 0u);
}

TEST(SpawnTest, CurrentEnvironmentIsNotEmpty) {
  EXPECT_FALSE(CurrentEnvironment().empty());
}

}  // namespace
}  // namespace rollout::server::workers
