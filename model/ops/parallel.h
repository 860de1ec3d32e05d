// A small fixed-size thread pool for the CPU model's data-parallel loops
// (attention heads, MoE experts, GDN key-head groups).
//
// Determinism: ParallelFor(n, fn) calls fn(i) exactly once for every i, each
// call on one thread; a loop body that only writes its own outputs computes
// the same bits whatever the number of threads. Nothing here reduces across
// indices, so results never depend on scheduling.
//
// Threading: ParallelFor is called by one thread at a time (the backend's
// owner); it blocks until every index is done.
#ifndef ROLLOUT_MODEL_OPS_PARALLEL_H_
#define ROLLOUT_MODEL_OPS_PARALLEL_H_

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace rollout::model::ops {

class ThreadPool {
 public:
  // num_threads <= 1 runs everything on the caller.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // fn(i) for i in [0, n); the caller works too. Blocks until done.
  void ParallelFor(int n, const std::function<void(int)>& fn);

 private:
  void WorkerLoop();
  // Claims and runs indices of the job (fn, n) until none is left.
  void RunClaims(const std::function<void(int)>& fn, int n);

  std::vector<std::thread> workers_;
  Mutex mu_;
  // The current job, published under mu_ with a new generation_. Indices are
  // claimed from next_ without the lock (an atomic counter): claiming under
  // the mutex would wake every idle worker on each index.
  const std::function<void(int)>* fn_ ABSL_GUARDED_BY(mu_) = nullptr;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int> next_{0};
  int active_ ABSL_GUARDED_BY(mu_) = 0;  // workers inside the current job
  long generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
};

// Runs fn over [0, n) on `pool`, or inline when pool is null.
inline void ParallelFor(ThreadPool* pool, int n,
                        const std::function<void(int)>& fn) {
  if (pool == nullptr || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
  } else {
    pool->ParallelFor(n, fn);
  }
}

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_PARALLEL_H_
