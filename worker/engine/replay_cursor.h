// ReplaySSM ring cursor bookkeeping for one decode row (gdn_replayssm.md
// section 4; model/backend.h ReplayRow). Pure functions, no backend.
//
// A row holding a ring decodes either through it (the state slot holds the
// checkpoint C, the ring the `write_pos` entries appended since C) or plain.
// Each ring step either appends (write_pos + 1) or flushes (materialises S_t
// into the slot, write_pos back to 0). A ring of length L flushes at the
// latest when write_pos == L - 1.
//
// Staggering: rows that enter the ring path together (the n completions of a
// GRPO group right after their fork, or AUTO rows switching on in the same
// step) would otherwise flush in the same steps, so their first cycle is
// shortened by a per-row offset: row i of n flushes first when write_pos ==
// L - 1 - StaggerOffset(i, n, L), then every L steps. The offset depends only
// on (i, n, L), never on other requests, so a completion's flush schedule (and
// its ON-path numerics) do not depend on the batch.
//
// Switching to plain (AUTO below its threshold): a row with live entries runs
// one more ring step with a forced flush (exactly the plain step's result: the
// checkpoint then holds S_t), and plain steps after that. The flush always uses
// the true write_pos.
#ifndef ROLLOUT_WORKER_ENGINE_REPLAY_CURSOR_H_
#define ROLLOUT_WORKER_ENGINE_REPLAY_CURSOR_H_

#include "worker/engine/request.h"

namespace rollout::worker {

struct RingCursor {
  int ring = -1;         // ring slot held, or -1
  int write_pos = 0;     // committed entries since the checkpoint
  int flush_at = 0;      // flush when write_pos reaches this
  bool on_ring = false;  // the previous step of this row used the ring
};

struct RowDecision {
  bool use_ring = false;
  bool flush = false;
};

// In [0, L): spreads the n rows of a group evenly over the L phases.
int StaggerOffset(int completion_index, int group_size, int ring_length);

// Decides this step for a row. `want_ring`: the row should decode on the ring
// this step (ON, or AUTO above threshold) and holds one (c.ring >= 0).
// Updates c.flush_at when the row (re)enters the ring path.
RowDecision PlanRow(RingCursor* c, bool want_ring, int stagger_offset,
                    int ring_length);

// Advances the cursor after the step ran.
void CommitRow(RingCursor* c, const RowDecision& d, int ring_length);

// kDefault resolved by the configured default.
ReplayMode ResolveMode(ReplayMode requested, ReplayMode default_mode);

// The reason ON can never be honoured in this engine, or kNone. In priority
// order: disabled_by_config, no_gdn_layers, backend_unsupported.
FallbackReason StaticFallback(bool enabled, int num_rings, int num_gdn_layers,
                              bool backend_supports_ring);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_REPLAY_CURSOR_H_
