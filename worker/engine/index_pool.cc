#include "worker/engine/index_pool.h"

#include <algorithm>

#include "absl/base/internal/raw_logging.h"

namespace rollout::worker {

IndexPool::IndexPool(int size, int64_t element_bytes)
    : refcounts_(std::max(size, 0), 0), element_bytes_(element_bytes) {
  for (int i = 0; i < this->size(); ++i) free_.insert(free_.end(), i);
}

std::optional<int> IndexPool::Allocate() {
  if (free_.empty()) return std::nullopt;
  const int index = *free_.begin();
  free_.erase(free_.begin());
  refcounts_[index] = 1;
  peak_used_ = std::max(peak_used_, used());
  return index;
}

void IndexPool::Ref(int index) {
  ABSL_RAW_CHECK(refcounts_[index] > 0, "Ref of a free index");
  ++refcounts_[index];
}

bool IndexPool::Unref(int index) {
  ABSL_RAW_CHECK(refcounts_[index] > 0, "Unref of a free index");
  if (--refcounts_[index] > 0) return false;
  free_.insert(index);
  return true;
}

}  // namespace rollout::worker
