#include "common/mutex.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace rollout {
namespace {

TEST(MutexTest, CounterUnderContentionIsExact) {
  Mutex mu;
  int64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(&mu);
        ++counter;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  MutexLock lock(&mu);
  EXPECT_EQ(counter, 40000);
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu;
  mu.Lock();
  bool got = true;
  std::thread([&] { got = mu.TryLock(); }).join();
  EXPECT_FALSE(got);
  mu.Unlock();
  got = false;
  std::thread([&] {
    if (mu.TryLock()) {
      got = true;
      mu.Unlock();
    }
  }).join();
  EXPECT_TRUE(got);
}

TEST(MutexTest, ReaderLockExcludesWriters) {
  Mutex mu;
  int value = 0;
  {
    ReaderMutexLock lock(&mu);
    bool got = true;
    std::thread([&] { got = mu.TryLock(); }).join();
    EXPECT_FALSE(got);
    EXPECT_EQ(value, 0);
  }
  MutexLock lock(&mu);
  value = 1;
  EXPECT_EQ(value, 1);
}

// No Signal(): releasing the mutex after changing guarded state wakes the
// waiter, as with absl::Mutex.
TEST(MutexTest, AwaitWakesOnUnlockWithoutSignal) {
  Mutex mu;
  bool ready = false;
  std::thread setter([&] {
    absl::SleepFor(absl::Milliseconds(20));
    MutexLock lock(&mu);
    ready = true;
  });
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(&ready));
    EXPECT_TRUE(ready);
  }
  setter.join();
}

// Two threads that only ever Await (never plain-unlock while the other
// waits): each change of `turn` must wake the other one. This fails (hangs)
// if entering Await did not wake the other waiters.
TEST(MutexTest, AwaitEntryWakesOtherWaiters) {
  Mutex mu;
  int turn = 0;
  int rounds_done = 0;
  constexpr int kRounds = 200;
  auto player = [&](int me) {
    MutexLock lock(&mu);
    for (int r = 0; r < kRounds; ++r) {
      auto my_turn = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
        return turn == me;
      };
      mu.Await(absl::Condition(&my_turn));
      turn = 1 - me;
      ++rounds_done;
    }
  };
  std::thread a(player, 0);
  std::thread b(player, 1);
  a.join();
  b.join();
  EXPECT_EQ(rounds_done, 2 * kRounds);
}

TEST(MutexTest, AwaitWithTimeoutGivesUpAndReportsTheCondition) {
  Mutex mu;
  bool never = false;
  MutexLock lock(&mu);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(
      mu.AwaitWithTimeout(absl::Condition(&never), absl::Milliseconds(50)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  // Zero and negative timeouts just evaluate.
  EXPECT_FALSE(
      mu.AwaitWithTimeout(absl::Condition(&never), absl::ZeroDuration()));
  bool yes = true;
  EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&yes), -absl::Seconds(1)));
}

TEST(MutexTest, AwaitWithTimeoutReturnsTrueWhenConditionBecomesTrue) {
  Mutex mu;
  bool ready = false;
  std::thread setter([&] {
    absl::SleepFor(absl::Milliseconds(10));
    MutexLock lock(&mu);
    ready = true;
  });
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(30)));
  }
  setter.join();
}

TEST(MutexTest, AwaitWithDeadlineHandlesPastAndInfiniteDeadlines) {
  Mutex mu;
  bool never = false;
  bool ready = false;
  MutexLock lock(&mu);
  EXPECT_FALSE(mu.AwaitWithDeadline(absl::Condition(&never),
                                    absl::Now() - absl::Seconds(1)));
  EXPECT_FALSE(mu.AwaitWithDeadline(absl::Condition(&never),
                                    absl::Now() + absl::Milliseconds(20)));
  std::thread setter([&] {
    MutexLock l(&mu);
    ready = true;
  });
  EXPECT_TRUE(
      mu.AwaitWithDeadline(absl::Condition(&ready), absl::InfiniteFuture()));
  // A huge finite timeout must not overflow into the past.
  EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&ready), absl::Hours(1e9)));
  mu.Unlock();
  setter.join();
  mu.Lock();
}

TEST(MutexTest, MutexLockWithConditionWaits) {
  Mutex mu;
  int stage = 0;
  std::thread setter([&] {
    MutexLock lock(&mu);
    stage = 1;
  });
  {
    auto reached = [&]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return stage == 1; };
    MutexLock lock(&mu, absl::Condition(&reached));
    EXPECT_EQ(stage, 1);
  }
  setter.join();
}

TEST(MutexTest, AssertHeld) {
  Mutex mu;
  mu.Lock();
  mu.AssertHeld();
  mu.Unlock();
  EXPECT_DEATH(mu.AssertHeld(), "not held");
}

TEST(NotificationTest, WaitReturnsAfterNotify) {
  Notification n;
  EXPECT_FALSE(n.HasBeenNotified());
  int payload = 0;
  std::thread t([&] {
    payload = 42;  // published by Notify (TSan checks the edge)
    n.Notify();
  });
  n.WaitForNotification();
  EXPECT_EQ(payload, 42);
  EXPECT_TRUE(n.HasBeenNotified());
  t.join();
}

TEST(NotificationTest, TimeoutsAndDeadlines) {
  Notification n;
  EXPECT_FALSE(n.WaitForNotificationWithTimeout(absl::Milliseconds(10)));
  EXPECT_FALSE(
      n.WaitForNotificationWithDeadline(absl::Now() + absl::Milliseconds(10)));
  n.Notify();
  EXPECT_TRUE(n.WaitForNotificationWithTimeout(absl::ZeroDuration()));
  EXPECT_TRUE(n.WaitForNotificationWithDeadline(absl::InfinitePast()));
}

// The waiter destroys the notification as soon as its wait returns, while
// Notify may still be unwinding: ASan/TSan catch any touch after the wake.
TEST(NotificationTest, DestroyRightAfterWaitIsSafe) {
  for (int i = 0; i < 200; ++i) {
    auto n = std::make_unique<Notification>();
    Notification* raw = n.get();
    std::thread t([raw] { raw->Notify(); });
    n->WaitForNotification();
    n.reset();
    t.join();
  }
}

TEST(NotificationTest, NotifyTwiceAborts) {
  Notification n;
  n.Notify();
  EXPECT_DEATH(n.Notify(), "notified twice");
}

}  // namespace
}  // namespace rollout
