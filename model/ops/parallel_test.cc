#include "model/ops/parallel.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

TEST(ThreadPoolTest, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads < 1 ? 1 : threads);
    for (int n : {0, 1, 2, 13, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      for (auto& h : hits) h = 0;
      pool.ParallelFor(n, [&](int i) { hits[i]++; });
      for (int i = 0; i < n; ++i) EXPECT_EQ(hits[i], 1) << threads << " " << n;
    }
  }
}

TEST(ThreadPoolTest, ManyConsecutiveJobs) {
  ThreadPool pool(4);
  std::atomic<long> sum{0};
  for (int job = 0; job < 2000; ++job) {
    pool.ParallelFor(5, [&](int i) { sum += i; });
  }
  EXPECT_EQ(sum.load(), 2000L * 10);
}

TEST(ThreadPoolTest, NullPoolRunsInline) {
  int count = 0;
  ParallelFor(nullptr, 9, [&](int) { ++count; });
  EXPECT_EQ(count, 9);
}

}  // namespace
}  // namespace rollout::model::ops
