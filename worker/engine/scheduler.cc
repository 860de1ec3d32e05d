#include "worker/engine/scheduler.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace rollout::worker {

absl::Status SchedulerConfig::Validate() const {
  if (max_batch_tokens < 1) {
    return absl::InvalidArgumentError("max_batch_tokens must be >= 1");
  }
  if (max_rows < 1) return absl::InvalidArgumentError("max_rows must be >= 1");
  if (prefill_chunk < 1 || prefill_chunk > max_batch_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prefill_chunk must be in [1, max_batch_tokens = ", max_batch_tokens,
        "], got ", prefill_chunk));
  }
  if (kv_block_size < 1) {
    return absl::InvalidArgumentError("kv_block_size must be >= 1");
  }
  if (admission_headroom_blocks < 0) {
    return absl::InvalidArgumentError("admission_headroom_blocks must be >= 0");
  }
  return absl::OkStatus();
}

int NextRowLen(int num_computed, int num_tokens, int prefill_chunk) {
  const int boundary = (num_computed / prefill_chunk + 1) * prefill_chunk;
  return std::max(0, std::min(num_tokens, boundary) - num_computed);
}

namespace {

struct Planner {
  explicit Planner(const SchedulerConfig& c) : cfg(c) {}

  const SchedulerConfig& cfg;
  std::vector<RunningSeq> running;  // sorted oldest first
  std::vector<bool> preempted;
  std::vector<bool> scheduled;
  std::unordered_map<int32_t, int> refs;  // block -> holders among running
  int free_slots = 0;
  int free_blocks = 0;
  int budget = 0;
  int rows_left = 0;
  StepPlan plan;

  // Blocks the next row of `s` needs (new positions + a copy-on-write).
  void Need(const RunningSeq& s, int len, int* blocks, bool* cow) const {
    const int have = static_cast<int>(s.blocks.size());
    const int want = BlocksFor(s.num_computed + len, cfg.kv_block_size);
    *blocks = std::max(0, want - have);
    *cow = false;
    const int first = s.num_computed / cfg.kv_block_size;
    if (s.num_computed % cfg.kv_block_size != 0 && first < have) {
      auto it = refs.find(s.blocks[first]);
      if (it != refs.end() && it->second > 1) {
        *cow = true;
        ++*blocks;
      }
    }
  }

  void Preempt(size_t i) {
    preempted[i] = true;
    plan.preempted.push_back(running[i].id);
    free_slots += running[i].slots;
    for (int32_t b : running[i].blocks) {
      if (--refs[b] == 0) ++free_blocks;
    }
  }

  // The newest running sequence without a row this step, or -1.
  int Victim() const {
    for (int i = static_cast<int>(running.size()) - 1; i >= 0; --i) {
      if (!preempted[i] && !scheduled[i]) return i;
    }
    return -1;
  }

  void TryRow(size_t i, bool decode_pass) {
    const RunningSeq& s = running[i];
    const int len = NextRowLen(s.num_computed, s.num_tokens, cfg.prefill_chunk);
    if (len <= 0 || len > budget || rows_left <= 0) return;
    int blocks;
    bool cow;
    Need(s, len, &blocks, &cow);
    while (blocks > free_blocks) {
      const int v = Victim();
      if (v < 0) return;
      if (static_cast<size_t>(v) == i) {
        if (decode_pass) Preempt(i);
        return;
      }
      if (!decode_pass && static_cast<size_t>(v) < i) return;  // older
      Preempt(v);
      Need(s, len, &blocks, &cow);
    }
    scheduled[i] = true;
    if (cow) {
      // The row moves off the shared block: a later sibling may then own it
      // alone and write in place.
      --refs[s.blocks[s.num_computed / cfg.kv_block_size]];
    }
    free_blocks -= blocks;
    budget -= len;
    --rows_left;
    plan.rows.push_back({s.id, s.num_computed, len, blocks, cow});
    plan.num_tokens += len;
  }
};

}  // namespace

StepPlan Schedule(const SchedulerInput& input, const SchedulerConfig& cfg) {
  Planner p(cfg);
  p.running = input.running;
  std::stable_sort(p.running.begin(), p.running.end(),
                   [](const RunningSeq& a, const RunningSeq& b) {
                     return a.order != b.order ? a.order < b.order
                                               : a.id < b.id;
                   });
  p.preempted.assign(p.running.size(), false);
  p.scheduled.assign(p.running.size(), false);
  for (const RunningSeq& s : p.running) {
    for (int32_t b : s.blocks) ++p.refs[b];
  }
  p.free_slots = input.free_slots;
  p.free_blocks = input.free_blocks;
  p.budget = cfg.max_batch_tokens;
  p.rows_left = cfg.max_rows;

  // 1 + 2: running sequences, decode rows first.
  for (size_t i = 0; i < p.running.size(); ++i) {
    if (p.running[i].decode && !p.preempted[i]) p.TryRow(i, true);
  }
  for (size_t i = 0; i < p.running.size(); ++i) {
    if (!p.running[i].decode && !p.preempted[i]) p.TryRow(i, false);
  }
  const bool any_preempted = !p.plan.preempted.empty();

  // 3: swap in, oldest first, head-of-line.
  std::vector<SwappedSeq> swapped = input.swapped;
  std::stable_sort(swapped.begin(), swapped.end(),
                   [](const SwappedSeq& a, const SwappedSeq& b) {
                     return a.order != b.order ? a.order < b.order
                                               : a.id < b.id;
                   });
  size_t restored = 0;
  if (!any_preempted) {
    for (const SwappedSeq& s : swapped) {
      const int len =
          NextRowLen(s.num_computed, s.num_tokens, cfg.prefill_chunk);
      const int blocks = BlocksFor(s.num_computed + len, cfg.kv_block_size);
      if (len <= 0 || len > p.budget || p.rows_left <= 0 || p.free_slots < 1 ||
          blocks > p.free_blocks) {
        break;
      }
      p.free_slots -= 1;
      p.free_blocks -= blocks;
      p.budget -= len;
      --p.rows_left;
      p.plan.swapped_in.push_back(s.id);
      // All its blocks are new (the restored ones and any for this row).
      p.plan.rows.push_back({s.id, s.num_computed, len, blocks, false});
      p.plan.num_tokens += len;
      ++restored;
    }
  }

  // 4: admission, FCFS with head-of-line blocking.
  if (input.allow_admission && !any_preempted && restored == swapped.size()) {
    for (const WaitingGroup& g : input.waiting) {
      if (!g.eligible) continue;
      const int prompt_blocks = BlocksFor(g.prompt_len, cfg.kv_block_size);
      const int len = NextRowLen(0, g.prompt_len, cfg.prefill_chunk);
      if (len > p.budget || p.rows_left <= 0 || g.n > p.free_slots ||
          prompt_blocks + g.n * cfg.admission_headroom_blocks > p.free_blocks) {
        break;
      }
      p.free_slots -= g.n;
      p.free_blocks -= prompt_blocks;
      p.budget -= len;
      --p.rows_left;
      p.plan.admitted.push_back({g.id, prompt_blocks});
      p.plan.rows.push_back({g.head_seq_id, 0, len, 0, false});
      p.plan.num_tokens += len;
    }
  }
  return p.plan;
}

}  // namespace rollout::worker
