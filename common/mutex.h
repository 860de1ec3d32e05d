// The project's mutex, scoped locks and one-shot notification: drop-in
// replacements for absl::Mutex / absl::MutexLock / absl::Notification, built
// on std::mutex and std::condition_variable.
//
// Why not absl::Mutex: Debian's libabsl is compiled without ThreadSanitizer,
// and absl::Mutex synchronises through its own atomics and futex syscalls
// inside that uninstrumented library, so TSan sees none of its
// happens-before edges and reports a race on every variable it guards. The
// std primitives go through pthread, which TSan intercepts: with this type,
// `--config=tsan` checks our locking for real instead of drowning in false
// positives. (Alternatives and why they lose: docs/TESTING.md.)
//
// Same API subset as absl, so a conversion is a type rename:
//
//   mutable rollout::Mutex mu_;
//   int n_ ABSL_GUARDED_BY(mu_) = 0;
//   ...
//   rollout::MutexLock lock(&mu_);
//   mu_.Await(absl::Condition(&ready));      // any absl::Condition
//   mu_.AwaitWithTimeout(absl::Condition(this, &Foo::Ready), timeout);
//
// Clang's -Wthread-safety analysis sees the same annotations as on
// absl::Mutex (ABSL_LOCKABLE, ABSL_GUARDED_BY, ...).
//
// Semantics that match absl (and that callers rely on):
//  - Await* re-evaluates its condition whenever the mutex is released by
//    anyone (Unlock, ReaderUnlock, or another thread entering Await), so
//    there is no Signal(): changing guarded state under the lock is enough.
//    Conditions are evaluated with the mutex held, on the waiting thread;
//    they must be pure functions of guarded state.
//  - AwaitWithTimeout / AwaitWithDeadline return the condition's value when
//    they return (true: it holds; false: timed out and it does not hold).
// Differences: ReaderLock is exclusive (nothing here needs shared readers,
// and critical sections are short); there is no deadlock detection (TSan
// reports lock-order inversions instead); not recursive, like absl.
#ifndef ROLLOUT_COMMON_MUTEX_H_
#define ROLLOUT_COMMON_MUTEX_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"  // absl::Condition only
#include "absl/time/time.h"

namespace rollout {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION();
  void Unlock() ABSL_UNLOCK_FUNCTION();
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true);
  // Exclusive underneath (see the file comment), annotated as shared so that
  // read-only sections document themselves.
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Lock();
  }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Unlock();
  }

  // Aborts (in all builds) unless the calling thread holds the mutex.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK();
  void AssertReaderHeld() const
      ABSL_ASSERT_SHARED_LOCK() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    AssertHeld();
  }

  // Releases the mutex until `cond` holds, then returns with it held.
  void Await(const absl::Condition& cond) ABSL_SHARED_LOCKS_REQUIRED(this);
  // As Await, but gives up after `timeout` (InfiniteDuration: never).
  bool AwaitWithTimeout(const absl::Condition& cond, absl::Duration timeout)
      ABSL_SHARED_LOCKS_REQUIRED(this);
  // As Await, but gives up at `deadline` (InfiniteFuture: never). The
  // deadline is turned into a steady-clock timeout on entry, so wall-clock
  // steps do not shorten or stretch the wait.
  bool AwaitWithDeadline(const absl::Condition& cond, absl::Time deadline)
      ABSL_SHARED_LOCKS_REQUIRED(this);

 private:
  // Waits until `cond` or `deadline` (null: no deadline); requires mu_.
  bool AwaitUntil(const absl::Condition& cond,
                  const std::chrono::steady_clock::time_point* deadline);
  // Wakes every waiter so it re-evaluates its condition; requires mu_.
  void WakeWaitersLocked();

  std::mutex mu_;
  std::condition_variable cv_;
  int waiters_ = 0;  // threads inside Await*; guarded by mu_
  // Holder, for AssertHeld only.
  std::atomic<std::thread::id> owner_{};
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  // Locks, then waits until `cond` holds (absl's MutexLock(mu, cond)).
  MutexLock(Mutex* mu, const absl::Condition& cond)
      ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
    mu_->Await(cond);
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
  }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }

 private:
  Mutex* const mu_;
};

// One-shot event, as absl::Notification: Notify() once; any number of
// threads wait for it. Safe to destroy as soon as a wait has returned true.
class Notification {
 public:
  Notification() = default;
  // Waits for a Notify() still inside its critical section: a waiter can see
  // the flag (HasBeenNotified) and destroy the object before Notify unlocks.
  ~Notification() { MutexLock lock(&mu_); }
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  // At most once.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasBeenNotified() const {
    return notified_.load(std::memory_order_acquire);
  }
  void WaitForNotification() const ABSL_LOCKS_EXCLUDED(mu_);
  // True when notified within `timeout`.
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const
      ABSL_LOCKS_EXCLUDED(mu_);
  bool WaitForNotificationWithDeadline(absl::Time deadline) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool NotifiedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return notified_.load(std::memory_order_relaxed);
  }

  mutable Mutex mu_;
  // Written under mu_; read without it by HasBeenNotified.
  std::atomic<bool> notified_{false};
};

}  // namespace rollout

#endif  // ROLLOUT_COMMON_MUTEX_H_
