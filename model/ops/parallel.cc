#include "model/ops/parallel.h"

namespace rollout::model::ops {

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunClaims(const std::function<void(int)>& fn, int n) {
  for (int i = next_.fetch_add(1, std::memory_order_relaxed); i < n;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    fn(i);
  }
}

void ThreadPool::WorkerLoop() {
  long seen = 0;
  while (true) {
    const std::function<void(int)>* fn;
    int n;
    {
      MutexLock lock(&mu_);
      auto woken = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || generation_ != seen;
      };
      mu_.Await(absl::Condition(&woken));
      if (stop_) return;
      seen = generation_;
      // A worker that wakes after its job ended finds fn_ reset (nothing to
      // do) or the next job already published (it joins that one).
      fn = fn_;
      n = n_;
      ++active_;
    }
    if (fn != nullptr) RunClaims(*fn, n);
    MutexLock lock(&mu_);
    --active_;  // publishes this worker's outputs to ParallelFor's caller
  }
}

void ThreadPool::ParallelFor(int n, const std::function<void(int)>& fn) {
  if (workers_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    MutexLock lock(&mu_);
    fn_ = &fn;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    ++generation_;
  }
  RunClaims(fn, n);
  // Every index is claimed; wait until the workers that joined have left, so
  // each claimed index has finished and its writes are visible here.
  MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return active_ == 0; };
  mu_.Await(absl::Condition(&done));
  fn_ = nullptr;
}

}  // namespace rollout::model::ops
