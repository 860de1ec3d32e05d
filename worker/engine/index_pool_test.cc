#include "worker/engine/index_pool.h"

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

TEST(IndexPoolTest, AllocatesLowestFreeAndTracksBytes) {
  IndexPool pool(3, 100);
  EXPECT_EQ(pool.total_bytes(), 300);
  EXPECT_EQ(pool.Allocate(), 0);
  EXPECT_EQ(pool.Allocate(), 1);
  EXPECT_EQ(pool.used_bytes(), 200);
  EXPECT_TRUE(pool.Unref(0));
  EXPECT_EQ(pool.Allocate(), 0);  // lowest free again
  EXPECT_EQ(pool.Allocate(), 2);
  EXPECT_EQ(pool.Allocate(), std::nullopt);  // full: back-pressure
  EXPECT_EQ(pool.peak_bytes(), 300);
  pool.Unref(0);
  pool.Unref(1);
  pool.Unref(2);
  EXPECT_EQ(pool.used_bytes(), 0);
  EXPECT_EQ(pool.peak_bytes(), 300);  // high-water mark stays
}

TEST(IndexPoolTest, SharedIndicesFreeAtLastUnref) {
  IndexPool pool(2, 8);
  const int b = *pool.Allocate();
  pool.Ref(b);
  pool.Ref(b);
  EXPECT_EQ(pool.refcount(b), 3);
  EXPECT_FALSE(pool.Unref(b));
  EXPECT_FALSE(pool.Unref(b));
  EXPECT_EQ(pool.used(), 1);
  EXPECT_TRUE(pool.Unref(b));
  EXPECT_EQ(pool.free(), 2);
}

TEST(IndexPoolTest, EmptyPool) {
  IndexPool pool(0, 8);
  EXPECT_EQ(pool.Allocate(), std::nullopt);
  EXPECT_EQ(pool.used_bytes(), 0);
}

}  // namespace
}  // namespace rollout::worker
