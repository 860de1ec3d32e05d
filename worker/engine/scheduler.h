// The step scheduler: a pure function from the request table to the next
// engine step. No backend, no clock, no allocation of real resources: the
// engine builds a SchedulerInput from its tables, calls Schedule(), and
// applies the returned StepPlan. Tests replay iterations against tables of
// expected state (scheduler_test.cc).
//
// Policy (continuous batching, FCFS, token budget per step):
//  1. Decode rows (1 token each) of running sequences, oldest admission first.
//  2. Prefill rows of running sequences (a group's prompt, or the given tokens
//     of a Score completion), oldest first. A row is one chunk
//     [computed, next multiple of prefill_chunk) clipped to the known tokens:
//     chunk boundaries are absolute positions, so a sequence is split the same
//     way whatever else is in the batch (its numerics never depend on load).
//  3. Swapped-out sequences are swapped back in, oldest first (FCFS), when no
//     preemption happened this step.
//  4. Waiting groups are admitted in arrival order when nothing is swapped out
//     and nothing was preempted this step. Head-of-line: if the oldest group
//     does not fit, no younger group overtakes it (bounded waiting). A group
//     needs n free state slots and the KV blocks of its whole prompt plus
//     `admission_headroom_blocks` per completion.
//  Rows that do not fit the token budget or the row limit wait for a later
//  step (never split differently).
//
// Preemption (when a row needs KV blocks that are not free): the newest
// running sequence that has no row in this step is preempted, repeatedly, until
// the row fits; a decode row that is itself the newest preempts itself. A
// prefill row only preempts sequences newer than itself. A preempted
// sequence is swapped out (its flushed state and KV go to host memory through
// Backend::ExportState) and later swapped in unchanged, so its output is
// identical to an uninterrupted run. A group still prefilling its prompt is
// instead returned to the head of the waiting queue (its prefill restarts at
// position 0 with the same chunks: identical too). No admission happens while
// anything is swapped out, so host swap memory is bounded by the device pools.
#ifndef ROLLOUT_WORKER_ENGINE_SCHEDULER_H_
#define ROLLOUT_WORKER_ENGINE_SCHEDULER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace rollout::worker {

struct SchedulerConfig {
  int max_batch_tokens = 2048;        // tokens fed per step (all rows)
  int max_rows = 256;                 // rows per step
  int prefill_chunk = 256;            // chunk boundaries: multiples of this
  int kv_block_size = 16;             // tokens per KV block
  int admission_headroom_blocks = 1;  // per completion, checked at admission

  absl::Status Validate() const;
};

// A sequence holding a state slot (and KV blocks).
struct RunningSeq {
  int64_t id = 0;
  int64_t order = 0;     // admission order of its group (lower = older)
  int num_computed = 0;  // tokens already in its state and KV
  int num_tokens = 0;    // tokens known; its next row feeds from num_computed
  bool decode = false;   // generating: its row is one sampled token
  // A group prompt still prefilling (before the fork): preempting it returns
  // the group to waiting and frees all `slots` slots reserved for the group.
  bool prompt_prefill = false;
  int slots = 1;
  std::vector<int32_t> blocks;  // its KV blocks; shared ones appear in several
};

struct SwappedSeq {
  int64_t id = 0;
  int64_t order = 0;
  int num_computed = 0;
  int num_tokens = 0;
};

struct WaitingGroup {
  int64_t id = 0;
  int64_t head_seq_id = 0;  // the sequence that prefills the prompt
  int prompt_len = 0;
  int n = 1;
  bool eligible = true;  // e.g. its min_weight_version serves; else skipped
};

struct SchedulerInput {
  std::vector<RunningSeq> running;
  std::vector<SwappedSeq> swapped;    // any order; sorted by (order, id)
  std::vector<WaitingGroup> waiting;  // arrival order
  int free_slots = 0;
  int free_blocks = 0;
  bool allow_admission = true;  // false while paused (WAIT) or draining
};

struct ScheduledRow {
  int64_t seq_id = 0;
  int start = 0;       // first position fed (= num_computed)
  int len = 0;         // tokens fed
  int new_blocks = 0;  // blocks to allocate (including a copy-on-write one)
  bool copy_on_write = false;  // the block holding `start` is shared: copy it
  bool operator==(const ScheduledRow& o) const {
    return seq_id == o.seq_id && start == o.start && len == o.len &&
           new_blocks == o.new_blocks && copy_on_write == o.copy_on_write;
  }
};

struct AdmittedGroup {
  int64_t group_id = 0;
  int prompt_blocks = 0;  // KV blocks for the whole prompt
  bool operator==(const AdmittedGroup& o) const {
    return group_id == o.group_id && prompt_blocks == o.prompt_blocks;
  }
};

struct StepPlan {
  // Applied in this order: preempt, swap in, admit, then run `rows`.
  std::vector<int64_t> preempted;       // running seq ids
  std::vector<int64_t> swapped_in;      // swapped seq ids (each also has a row)
  std::vector<AdmittedGroup> admitted;  // (each head also has a row)
  std::vector<ScheduledRow> rows;
  int num_tokens = 0;

  bool empty() const { return rows.empty() && preempted.empty(); }
};

// Blocks needed to hold `tokens` positions.
inline int BlocksFor(int tokens, int block_size) {
  return (tokens + block_size - 1) / block_size;
}

// Tokens of the next row of a sequence at (num_computed, num_tokens).
int NextRowLen(int num_computed, int num_tokens, int prefill_chunk);

StepPlan Schedule(const SchedulerInput& input, const SchedulerConfig& config);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_SCHEDULER_H_
