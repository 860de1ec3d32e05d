#include "server/workers/worker_args.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/config_defaults.h"

namespace rollout::server::workers {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

rollout::v1::ServerConfig Defaults() {
  rollout::v1::ServerConfig c;
  ApplyConfigDefaults(&c);
  return c;
}

TEST(WorkerArgsTest, DeviceOfDefaultsToAuto) {
  rollout::v1::ServerConfig c = Defaults();
  EXPECT_EQ(DeviceOf(c, 0), "auto");
  c.mutable_workers()->add_devices("cpu");
  EXPECT_EQ(DeviceOf(c, 0), "cpu");
}

TEST(WorkerArgsTest, ArgvCarriesConfigAndLaunch) {
  rollout::v1::ServerConfig c = Defaults();
  c.mutable_replay_ssm()->set_ring_pool_share(0.5f);
  WorkerLaunch launch;
  launch.index = 1;
  launch.binary = "/bin/rollout-worker";
  launch.socket_path = "/tmp/d/worker-1.sock";
  launch.model_dir = "/models/m";
  launch.device = "cpu";
  launch.threads = 2;
  const std::vector<std::string> argv = WorkerArgv(c, launch);
  EXPECT_EQ(argv[0], "/bin/rollout-worker");
  EXPECT_THAT(argv, Contains("--index=1"));
  EXPECT_THAT(argv, Contains("--socket=/tmp/d/worker-1.sock"));
  EXPECT_THAT(argv, Contains("--model=/models/m"));
  EXPECT_THAT(argv, Contains("--device=cpu"));
  EXPECT_THAT(argv, Contains("--max_num_seqs=64"));
  EXPECT_THAT(argv, Contains("--memory_budget_bytes=1073741824"));
  EXPECT_THAT(argv, Contains("--max_batch_tokens=2048"));
  EXPECT_THAT(argv, Contains("--num_rings=32"));
  EXPECT_THAT(argv, Contains("--ring_length=16"));
  EXPECT_THAT(argv, Contains("--auto_min_batch=8"));
  EXPECT_THAT(argv, Contains("--replay_ssm=true"));
  EXPECT_THAT(argv, Contains("--threads=2"));
  EXPECT_THAT(argv, Not(Contains(testing::StartsWith("--weights="))));
  launch.weights_dir = "/models/step-3";
  launch.weight_version = 3;
  EXPECT_THAT(WorkerArgv(c, launch), Contains("--weights=/models/step-3"));
  EXPECT_THAT(WorkerArgv(c, launch), Contains("--weight_version=3"));
}

TEST(WorkerArgsTest, RingShareZeroMeansNoRings) {
  rollout::v1::ServerConfig c = Defaults();
  c.mutable_replay_ssm()->set_ring_pool_share(0.0f);
  c.mutable_admission()->set_max_n(128);
  const auto argv = WorkerArgv(c, WorkerLaunch());
  EXPECT_THAT(argv, Contains("--num_rings=0"));
  EXPECT_THAT(argv, Contains("--max_num_seqs=128"));
}

TEST(WorkerArgsTest, ExplicitEngineSizing) {
  rollout::v1::ServerConfig c = Defaults();
  c.mutable_workers()->set_max_num_seqs(512);
  c.mutable_workers()->set_memory_budget_bytes(int64_t{80} << 30);
  c.mutable_workers()->set_max_batch_tokens(8192);
  c.mutable_replay_ssm()->set_ring_pool_share(0.25f);
  const auto argv = WorkerArgv(c, WorkerLaunch());
  EXPECT_THAT(argv, Contains("--max_num_seqs=512"));
  EXPECT_THAT(argv, Contains("--memory_budget_bytes=85899345920"));
  EXPECT_THAT(argv, Contains("--max_batch_tokens=8192"));
  EXPECT_THAT(argv, Contains("--num_rings=128"));  // a quarter of the slots
}

TEST(WorkerArgsTest, EnvironmentKeepsOnlyAllowedVariables) {
  const std::vector<std::string> parent = {
      "PATH=/usr/bin",    "HOME=/root",
      "SECRET_TOKEN=x",   "CUDA_VISIBLE_DEVICES=1",
      "LC_CTYPE=C.UTF-8", "TEST_TMPDIR=/t",
      "RUNFILES_DIR=/r",  "=odd"};
  EXPECT_THAT(
      WorkerEnvironment(parent, 3),
      UnorderedElementsAre("PATH=/usr/bin", "HOME=/root",
                           "CUDA_VISIBLE_DEVICES=1", "LC_CTYPE=C.UTF-8",
                           "OPENBLAS_NUM_THREADS=3", "OMP_NUM_THREADS=3"));
  // The parent's own thread settings win.
  EXPECT_THAT(
      WorkerEnvironment({"OPENBLAS_NUM_THREADS=8"}, 3),
      UnorderedElementsAre("OPENBLAS_NUM_THREADS=8", "OMP_NUM_THREADS=3"));
  EXPECT_THAT(WorkerEnvironment({}, 0), testing::IsEmpty());
}

TEST(WorkerArgsTest, CpuThreadsShareTheMachine) {
  EXPECT_EQ(CpuThreadsPerWorker(16, 2), 8);
  EXPECT_EQ(CpuThreadsPerWorker(2, 4), 1);
  EXPECT_EQ(CpuThreadsPerWorker(8, 0), 8);
}

}  // namespace
}  // namespace rollout::server::workers
