// Bookkeeping for one backend pool (state slots, ReplaySSM rings or paged KV
// blocks): which dense indices are free, reference counts for shared ones
// (GRPO prompt KV blocks), and current/peak bytes in use. The backend owns the
// storage; this class owns only the accounting. Not thread-safe (engine
// thread only).
//
//   IndexPool kv(/*size=*/1024, /*element_bytes=*/fp.kv_block_bytes);
//   std::optional<int> b = kv.Allocate();   // refcount 1, lowest free index
//   kv.Ref(*b);                             // shared by a forked sibling
//   kv.Unref(*b); kv.Unref(*b);             // free again
#ifndef ROLLOUT_WORKER_ENGINE_INDEX_POOL_H_
#define ROLLOUT_WORKER_ENGINE_INDEX_POOL_H_

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace rollout::worker {

class IndexPool {
 public:
  IndexPool() = default;
  IndexPool(int size, int64_t element_bytes);

  // The lowest free index (deterministic), with refcount 1; nullopt if full.
  std::optional<int> Allocate();
  void Ref(int index);
  // Returns true when the index became free.
  bool Unref(int index);

  int refcount(int index) const { return refcounts_[index]; }
  int size() const { return static_cast<int>(refcounts_.size()); }
  int used() const { return size() - static_cast<int>(free_.size()); }
  int free() const { return static_cast<int>(free_.size()); }
  int64_t element_bytes() const { return element_bytes_; }
  int64_t used_bytes() const { return used() * element_bytes_; }
  int64_t peak_bytes() const { return peak_used_ * element_bytes_; }
  int64_t total_bytes() const { return size() * element_bytes_; }

 private:
  std::vector<int> refcounts_;
  std::set<int> free_;
  int64_t element_bytes_ = 0;
  int peak_used_ = 0;
};

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_INDEX_POOL_H_
