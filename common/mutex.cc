#include "common/mutex.h"

#include <cstdio>
#include <cstdlib>

namespace rollout {
namespace {

// Longer timeouts are treated as infinite: steady_clock::now() plus
// absl::ToChronoNanoseconds of a huge duration would overflow.
constexpr absl::Duration kForever = absl::Hours(24 * 365 * 100);

}  // namespace

// The definitions below implement the capability (they manipulate the
// std::mutex underneath it), which the analysis cannot follow: it checks the
// callers against the annotations in mutex.h instead.
void Mutex::Lock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  mu_.lock();
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

bool Mutex::TryLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!mu_.try_lock()) return false;
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  return true;
}

void Mutex::Unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  owner_.store(std::thread::id(), std::memory_order_relaxed);
  // Woken before the release, not after: once mu_ is free a waiter may
  // return and destroy this object (a Notification on its stack, say), and
  // notify_all would then touch freed memory.
  WakeWaitersLocked();
  mu_.unlock();
}

void Mutex::AssertHeld() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (owner_.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
    std::fprintf(stderr, "rollout::Mutex %p is not held by this thread\n",
                 static_cast<const void*>(this));
    std::abort();
  }
}

void Mutex::WakeWaitersLocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (waiters_ > 0) cv_.notify_all();
}

bool Mutex::AwaitUntil(const absl::Condition& cond,
                       const std::chrono::steady_clock::time_point* deadline)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (cond.Eval()) return true;
  // The caller may have changed guarded state just before waiting; the other
  // waiters must re-evaluate, exactly as if it had unlocked.
  WakeWaitersLocked();
  ++waiters_;
  owner_.store(std::thread::id(), std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
  bool ok;
  if (deadline == nullptr) {
    cv_.wait(lock, [&cond] { return cond.Eval(); });
    ok = true;
  } else {
    ok = cv_.wait_until(lock, *deadline, [&cond] { return cond.Eval(); });
  }
  lock.release();  // still held: the caller's scoped lock releases it
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  --waiters_;
  return ok;
}

void Mutex::Await(const absl::Condition& cond) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  AwaitUntil(cond, nullptr);
}

bool Mutex::AwaitWithTimeout(const absl::Condition& cond,
                             absl::Duration timeout) {
  if (timeout >= kForever) return AwaitUntil(cond, nullptr);
  if (timeout <= absl::ZeroDuration()) return cond.Eval();
  const std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  return AwaitUntil(cond, &deadline);
}

bool Mutex::AwaitWithDeadline(const absl::Condition& cond,
                              absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return AwaitUntil(cond, nullptr);
  return AwaitWithTimeout(cond, deadline - absl::Now());
}

void Notification::Notify() {
  MutexLock lock(&mu_);
  if (notified_.load(std::memory_order_relaxed)) {
    std::fprintf(stderr, "rollout::Notification %p notified twice\n",
                 static_cast<const void*>(this));
    std::abort();
  }
  notified_.store(true, std::memory_order_release);
}

void Notification::WaitForNotification() const {
  if (HasBeenNotified()) return;
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &Notification::NotifiedLocked));
}

bool Notification::WaitForNotificationWithTimeout(
    absl::Duration timeout) const {
  if (HasBeenNotified()) return true;
  MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(this, &Notification::NotifiedLocked), timeout);
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  if (HasBeenNotified()) return true;
  MutexLock lock(&mu_);
  return mu_.AwaitWithDeadline(
      absl::Condition(this, &Notification::NotifiedLocked), deadline);
}

}  // namespace rollout
