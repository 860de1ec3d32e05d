#include "server/workers/router.h"

#include <vector>

#include "gtest/gtest.h"

namespace rollout::server::workers {
namespace {

WorkerLoad Ready(int64_t tokens, int requests = 0, uint64_t version = 0) {
  WorkerLoad w;
  w.ready = true;
  w.capacity = 4;
  w.outstanding_tokens = tokens;
  w.outstanding_requests = requests;
  w.weight_version = version;
  return w;
}

TEST(RouterTest, LeastOutstandingTokensWins) {
  std::vector<WorkerLoad> w = {Ready(500, 1), Ready(100, 3), Ready(300, 1)};
  const Route r = PickWorker(w, 0);
  EXPECT_EQ(r.outcome, Route::kRouted);
  EXPECT_EQ(r.worker, 1);
}

TEST(RouterTest, TiesGoToFewerRequestsThenLowerIndex) {
  std::vector<WorkerLoad> w = {Ready(0, 2), Ready(0, 1), Ready(0, 1)};
  EXPECT_EQ(PickWorker(w, 0).worker, 1);
}

TEST(RouterTest, FullAndNotReadyWorkersAreSkipped) {
  std::vector<WorkerLoad> w = {Ready(0, 4), Ready(900, 1), WorkerLoad()};
  EXPECT_EQ(PickWorker(w, 0).worker, 1);
  w[1].outstanding_requests = 4;
  EXPECT_EQ(PickWorker(w, 0).outcome, Route::kQueue);
}

TEST(RouterTest, NoReadyWorker) {
  std::vector<WorkerLoad> w = {WorkerLoad(), WorkerLoad()};
  EXPECT_EQ(PickWorker(w, 0).outcome, Route::kNoWorker);
  EXPECT_EQ(PickWorker({}, 0).outcome, Route::kNoWorker);
}

TEST(RouterTest, MinWeightVersion) {
  std::vector<WorkerLoad> w = {Ready(0, 0, 2), Ready(500, 0, 3)};
  EXPECT_EQ(PickWorker(w, 3).worker, 1);
  const Route old = PickWorker(w, 4);
  EXPECT_EQ(old.outcome, Route::kVersionTooOld);
  EXPECT_EQ(old.newest_version, 3u);
}

}  // namespace
}  // namespace rollout::server::workers
