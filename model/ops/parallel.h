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

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
  void RunIndices();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // Current job (guarded by mu_ for publication; next_ is claimed under mu_).
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0;
  int next_ = 0;
  int active_ = 0;  // workers inside the current job
  long generation_ = 0;
  bool stop_ = false;
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
