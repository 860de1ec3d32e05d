#include "server/serial_executor.h"

#include <thread>
#include <vector>

#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

TEST(SerialExecutorTest, RunsTasksInOrderOnOneOtherThread) {
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  {
    SerialExecutor executor;
    for (int i = 0; i < 100; ++i) {
      executor.Schedule([&order, &threads, i] {
        order.push_back(i);  // only the executor thread touches these
        threads.push_back(std::this_thread::get_id());
      });
    }
  }  // the destructor runs what is queued, then joins
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  for (const auto& id : threads) {
    EXPECT_EQ(id, threads[0]);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(SerialExecutorTest, ScheduleDoesNotWaitForTheTask) {
  SerialExecutor executor;
  rollout::Notification release;
  rollout::Notification done;
  executor.Schedule([&] {
    release.WaitForNotification();
    done.Notify();
  });
  executor.Schedule([] {});  // returns although the first task is blocked
  release.Notify();
  done.WaitForNotification();
}

}  // namespace
}  // namespace rollout::server
