#include "worker/engine/replay_cursor.h"

#include <algorithm>
#include <cstdint>

namespace rollout::worker {

int StaggerOffset(int completion_index, int group_size, int ring_length) {
  if (group_size <= 0 || ring_length <= 1) return 0;
  return static_cast<int>(
      (static_cast<int64_t>(completion_index) * ring_length / group_size) %
      ring_length);
}

RowDecision PlanRow(RingCursor* c, bool want_ring, int stagger_offset,
                    int ring_length) {
  RowDecision d;
  if (c->ring < 0) return d;  // plain
  if (!want_ring) {
    // Leaving the ring: fold live entries with a flush step first.
    if (c->write_pos > 0) {
      d.use_ring = true;
      d.flush = true;
    }
    return d;
  }
  if (!c->on_ring) {
    // (Re)entering with an empty ring: start a staggered first cycle.
    c->write_pos = 0;
    c->flush_at = std::max(0, ring_length - 1 - stagger_offset);
  }
  d.use_ring = true;
  d.flush = c->write_pos >= std::min(c->flush_at, ring_length - 1);
  return d;
}

void CommitRow(RingCursor* c, const RowDecision& d, int ring_length) {
  if (!d.use_ring) {
    c->on_ring = false;
    return;
  }
  c->on_ring = true;
  if (d.flush) {
    c->write_pos = 0;
    c->flush_at = ring_length - 1;  // later cycles are full
  } else {
    ++c->write_pos;
  }
}

ReplayMode ResolveMode(ReplayMode requested, ReplayMode default_mode) {
  if (requested != ReplayMode::kDefault) return requested;
  return default_mode == ReplayMode::kDefault ? ReplayMode::kOff : default_mode;
}

FallbackReason StaticFallback(bool enabled, int num_rings, int num_gdn_layers,
                              bool backend_supports_ring) {
  if (!enabled || num_rings <= 0) return FallbackReason::kDisabledByConfig;
  if (num_gdn_layers <= 0) return FallbackReason::kNoGdnLayers;
  if (!backend_supports_ring) return FallbackReason::kBackendUnsupported;
  return FallbackReason::kNone;
}

}  // namespace rollout::worker
