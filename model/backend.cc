#include "model/backend.h"

#include "absl/strings/str_cat.h"

namespace rollout::model {

absl::Status PoolConfig::Validate() const {
  if (num_state_slots < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_state_slots must be >= 1, got ", num_state_slots));
  }
  if (num_ring_slots < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_ring_slots must be >= 0, got ", num_ring_slots));
  }
  if (ring_length < 1 || ring_length > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring_length must be in [1, 256], got ", ring_length));
  }
  if (kv_block_size < 1 || kv_block_size > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kv_block_size must be in [1, 4096], got ", kv_block_size));
  }
  if (num_kv_blocks < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_kv_blocks must be >= 0, got ", num_kv_blocks));
  }
  return absl::OkStatus();
}

}  // namespace rollout::model
