// The supervisor with stand-in processes (/bin/sh): restarts, back-off and
// crash-loop reporting, startup timeout, Kill, Stop. (Ready workers are
// covered end to end in tests/e2e with the real rollout-worker.)
#include "server/workers/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/mutex.h"
#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

class Recorder : public Supervisor::Listener {
 public:
  void WorkerStarting(int index, uint64_t incarnation, bool restart) override {
    rollout::MutexLock lock(&mu_);
    ++starts_;
    if (restart) ++restarts_;
  }
  void WorkerReady(int, uint64_t, std::shared_ptr<WorkerConnection>,
                   const rollout::worker::v1::WorkerInfo&) override {
    rollout::MutexLock lock(&mu_);
    ++ready_;
  }
  void WorkerLost(int index, uint64_t incarnation, const std::string& why,
                  bool crash_loop) override {
    rollout::MutexLock lock(&mu_);
    whys_.push_back(why);
    loops_.push_back(crash_loop);
  }
  void Tick(absl::Time now) override {
    rollout::MutexLock lock(&mu_);
    ++ticks_;
  }

  // Wait until at least `n` exits / starts were reported (or 20 s pass).
  bool WaitForLost(size_t n) ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return whys_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&cond), absl::Seconds(20));
  }
  bool WaitForStarts(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    auto cond = [this, n]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return starts_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&cond), absl::Seconds(20));
  }

  rollout::Mutex mu_;
  int starts_ ABSL_GUARDED_BY(mu_) = 0;
  int restarts_ ABSL_GUARDED_BY(mu_) = 0;
  int ready_ ABSL_GUARDED_BY(mu_) = 0;
  int ticks_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> whys_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> loops_ ABSL_GUARDED_BY(mu_);
};

SupervisorOptions Options(std::string script) {
  SupervisorOptions o;
  o.socket_paths = {"/nonexistent-dir/worker-0.sock"};
  o.launch = [script](int) -> absl::StatusOr<SpawnSpec> {
    SpawnSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    return spec;
  };
  o.restart.first_backoff = absl::Milliseconds(20);
  o.restart.max_backoff = absl::Milliseconds(80);
  o.period = absl::Milliseconds(5);
  return o;
}

TEST(SupervisorTest, CrashingWorkerIsRestartedWithBackOffAndReported) {
  Recorder recorder;
  Supervisor supervisor(Options("exit 3"), &recorder);
  supervisor.Start();
  ASSERT_TRUE(recorder.WaitForLost(4));
  {
    rollout::MutexLock lock(&recorder.mu_);
    EXPECT_EQ(recorder.whys_[0], "exited with status 3");
    EXPECT_FALSE(recorder.loops_[0]);  // a first failure restarts at once
    EXPECT_TRUE(recorder.loops_[1]);   // then it counts as a crash loop
    EXPECT_TRUE(recorder.loops_[3]);
    EXPECT_GE(recorder.restarts_, 3);
    EXPECT_EQ(recorder.ready_, 0);
  }
  const auto snapshot = supervisor.Snapshot();
  ASSERT_EQ(snapshot.size(), 1u);
  EXPECT_GE(snapshot[0].restarts, 3);
  supervisor.Stop(absl::Now() + absl::Seconds(5));
  EXPECT_EQ(supervisor.Snapshot()[0].state, rollout::v1::WORKER_STATE_STOPPED);
}

TEST(SupervisorTest, StartupTimeoutKillsAWorkerThatNeverAnswers) {
  Recorder recorder;
  SupervisorOptions options = Options("exec sleep 60");
  options.startup_timeout = absl::Milliseconds(200);
  Supervisor supervisor(std::move(options), &recorder);
  supervisor.Start();
  ASSERT_TRUE(recorder.WaitForLost(1));
  {
    rollout::MutexLock lock(&recorder.mu_);
    EXPECT_NE(recorder.whys_[0].find("killed by signal 9"), std::string::npos)
        << recorder.whys_[0];
    EXPECT_NE(recorder.whys_[0].find("workers.startup_timeout_seconds"),
              std::string::npos);
  }
  supervisor.Stop(absl::Now() + absl::Seconds(5));
}

TEST(SupervisorTest, KillReplacesTheProcessAndStopEndsEverything) {
  Recorder recorder;
  SupervisorOptions options = Options("exec sleep 60");
  options.startup_timeout = absl::Seconds(600);
  Supervisor supervisor(std::move(options), &recorder);
  supervisor.Start();
  ASSERT_TRUE(recorder.WaitForStarts(1));
  auto first = supervisor.Snapshot()[0];
  ASSERT_GT(first.pid, 0);
  EXPECT_EQ(first.state, rollout::v1::WORKER_STATE_STARTING);
  // A stale incarnation is ignored.
  supervisor.Kill(0, first.incarnation + 1, "wrong process");
  supervisor.Kill(0, first.incarnation, "progress watchdog: test");
  ASSERT_TRUE(recorder.WaitForStarts(2));
  {
    rollout::MutexLock lock(&recorder.mu_);
    ASSERT_EQ(recorder.whys_.size(), 1u);
    EXPECT_NE(recorder.whys_[0].find("progress watchdog: test"),
              std::string::npos);
    EXPECT_EQ(recorder.restarts_, 1);
  }
  const pid_t second = supervisor.Snapshot()[0].pid;
  EXPECT_NE(second, first.pid);
  supervisor.Stop(absl::Now() + absl::Seconds(5));
  EXPECT_NE(kill(second, 0), 0);  // reaped: gone
  int ticks;
  {
    rollout::MutexLock lock(&recorder.mu_);
    ticks = recorder.ticks_;
  }
  absl::SleepFor(absl::Milliseconds(50));
  rollout::MutexLock lock(&recorder.mu_);
  EXPECT_EQ(recorder.ticks_, ticks);  // no callback after Stop
}

}  // namespace
}  // namespace rollout::server::workers
