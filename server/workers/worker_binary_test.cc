#include "server/workers/worker_binary.h"

#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

TEST(WorkerBinaryTest, ConfiguredMustBeExecutable) {
  EXPECT_EQ(*FindWorkerBinary("/bin/sh", {}), "/bin/sh");
  EXPECT_EQ(FindWorkerBinary("/etc/hostname-nope", {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FindWorkerBinary("/etc", {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(WorkerBinaryTest, FirstExecutableCandidateWins) {
  EXPECT_EQ(*FindWorkerBinary("", {"/nonexistent/a", "/bin/true", "/bin/sh"}),
            "/bin/true");
  auto none = FindWorkerBinary("", {"/nonexistent/a"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("/nonexistent/a"),
            absl::string_view::npos);
}

TEST(WorkerBinaryTest, TheTestsRunfilesHoldTheWorker) {
  // This test lists //worker:rollout-worker as data, like rolloutd.
  auto found = FindWorkerBinary("", WorkerBinaryCandidates());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_NE(found->find("rollout-worker"), std::string::npos);
}

}  // namespace
}  // namespace rollout::server::workers
