#include "worker/engine/scheduler.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

// ---- Single-step properties -------------------------------------------------

SchedulerConfig Config(int budget, int chunk, int block = 4, int rows = 64) {
  SchedulerConfig c;
  c.max_batch_tokens = budget;
  c.prefill_chunk = chunk;
  c.kv_block_size = block;
  c.max_rows = rows;
  c.admission_headroom_blocks = 1;
  return c;
}

RunningSeq Decoder(int64_t id, int64_t order, int computed,
                   std::vector<int32_t> blocks) {
  RunningSeq s;
  s.id = id;
  s.order = order;
  s.num_computed = computed;
  s.num_tokens = computed + 1;
  s.decode = true;
  s.blocks = std::move(blocks);
  return s;
}

TEST(SchedulerTest, ConfigValidation) {
  EXPECT_TRUE(Config(8, 8).Validate().ok());
  EXPECT_FALSE(Config(8, 9).Validate().ok());  // a chunk must fit a step
  EXPECT_FALSE(Config(0, 1).Validate().ok());
}

TEST(SchedulerTest, ChunksAreAlignedToAbsolutePositions) {
  EXPECT_EQ(NextRowLen(0, 10, 4), 4);
  EXPECT_EQ(NextRowLen(4, 10, 4), 4);
  EXPECT_EQ(NextRowLen(8, 10, 4), 2);
  EXPECT_EQ(NextRowLen(6, 20, 4), 2);  // realigns after an odd start
  EXPECT_EQ(NextRowLen(9, 10, 4), 1);  // a decode row
  EXPECT_EQ(NextRowLen(10, 10, 4), 0);
}

TEST(SchedulerTest, AdmissionIsFcfsWithHeadOfLineBlocking) {
  SchedulerInput in;
  in.free_slots = 5;
  in.free_blocks = 100;
  in.waiting = {{1, 10, 5, 2}, {2, 20, 5, 4}, {3, 30, 5, 1}};
  StepPlan plan = Schedule(in, Config(64, 16));
  // Group 1 (2 slots) fits; group 2 needs 4 of the 3 left; group 3 would fit
  // but must not overtake group 2.
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0], (AdmittedGroup{1, 2}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{10, 0, 5, 0, false}}));
}

TEST(SchedulerTest, IneligibleGroupsAreSkippedNotBlocking) {
  SchedulerInput in;
  in.free_slots = 5;
  in.free_blocks = 100;
  in.waiting = {{1, 10, 5, 1, /*eligible=*/false}, {2, 20, 5, 1}};
  StepPlan plan = Schedule(in, Config(64, 16));
  ASSERT_EQ(plan.admitted.size(), 1u);
  EXPECT_EQ(plan.admitted[0].group_id, 2);
}

TEST(SchedulerTest, AdmissionNeedsPromptBlocksPlusHeadroom) {
  SchedulerInput in;
  in.free_slots = 8;
  in.waiting = {{1, 10, /*prompt=*/9, /*n=*/4}};  // 3 blocks + 4 headroom
  in.free_blocks = 6;
  EXPECT_TRUE(Schedule(in, Config(64, 16)).admitted.empty());
  in.free_blocks = 7;
  EXPECT_EQ(Schedule(in, Config(64, 16)).admitted.size(), 1u);
  in.allow_admission = false;  // paused (WAIT) or draining
  EXPECT_TRUE(Schedule(in, Config(64, 16)).admitted.empty());
}

TEST(SchedulerTest, DecodeRowsFirstThenPrefillWithinTheBudget) {
  SchedulerInput in;
  in.free_slots = 0;
  in.free_blocks = 10;
  RunningSeq prefill;
  prefill.id = 1;
  prefill.order = 0;  // oldest, but decode rows go first
  prefill.num_tokens = 12;
  prefill.prompt_prefill = true;
  prefill.blocks = {0, 1, 2};
  in.running = {prefill, Decoder(2, 1, 5, {3, 4}), Decoder(3, 2, 5, {5, 6})};
  // Budget 5: two decode tokens, then a 4-token chunk does not fit in 3.
  StepPlan plan = Schedule(in, Config(5, 4));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{2, 5, 1, 0, false},
                                                  {3, 5, 1, 0, false}}));
  plan = Schedule(in, Config(6, 4));
  EXPECT_EQ(plan.rows.size(), 3u);
  EXPECT_EQ(plan.rows[2], (ScheduledRow{1, 0, 4, 0, false}));
  EXPECT_EQ(plan.num_tokens, 6);
  // Row limit.
  plan = Schedule(in, Config(64, 4, 4, /*rows=*/1));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{2, 5, 1, 0, false}}));
}

TEST(SchedulerTest, NewBlockAtABlockBoundary) {
  SchedulerInput in;
  in.free_blocks = 1;
  in.running = {Decoder(1, 0, 8, {0, 1})};  // position 8 opens block 2
  StepPlan plan = Schedule(in, Config(8, 8));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 8, 1, 1, false}}));
}

TEST(SchedulerTest, CopyOnWriteOfASharedPartialBlock) {
  // Two forked completions share prompt blocks {0, 1}; the prompt has 6
  // tokens, so block 1 is half full and both write into it next.
  SchedulerInput in;
  in.free_blocks = 1;
  in.running = {Decoder(1, 0, 6, {0, 1}), Decoder(2, 0, 6, {0, 1})};
  StepPlan plan = Schedule(in, Config(8, 8));
  // The first copies (1 block). The second then holds block 1 alone and
  // writes in place: no copy, no new block.
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 6, 1, 1, true},
                                                  {2, 6, 1, 0, false}}));
  EXPECT_TRUE(plan.preempted.empty());
  // With a third sibling the second must copy too; nothing is free, and as
  // the newest without a row... the third is preempted, freeing nothing (its
  // blocks are shared) but making block 1 exclusive to the second.
  in.running.push_back(Decoder(3, 0, 6, {0, 1}));
  plan = Schedule(in, Config(8, 8));
  EXPECT_EQ(plan.preempted, (std::vector<int64_t>{3}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 6, 1, 1, true},
                                                  {2, 6, 1, 0, false}}));
}

TEST(SchedulerTest, PreemptsTheNewestWhenBlocksRunOut) {
  SchedulerInput in;
  in.free_blocks = 0;
  in.free_slots = 0;
  in.running = {Decoder(1, 0, 8, {0, 1}), Decoder(2, 1, 3, {2}),
                Decoder(3, 2, 4, {3})};
  StepPlan plan = Schedule(in, Config(8, 8));
  // Seq 1 needs a block: the newest (3) is preempted, freeing block 3. Seq 2
  // needs none. Seq 3 is gone.
  EXPECT_EQ(plan.preempted, (std::vector<int64_t>{3}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 8, 1, 1, false},
                                                  {2, 3, 1, 0, false}}));
}

TEST(SchedulerTest, NewestDecodeRowPreemptsItself) {
  SchedulerInput in;
  in.free_blocks = 0;
  in.running = {Decoder(1, 0, 3, {0}), Decoder(2, 1, 4, {1})};
  StepPlan plan = Schedule(in, Config(8, 8));
  EXPECT_EQ(plan.preempted, (std::vector<int64_t>{2}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 3, 1, 0, false}}));
}

TEST(SchedulerTest, PrefillRowsOnlyPreemptNewerSequences) {
  RunningSeq older;  // a Score completion prefilling its given tokens
  older.id = 1;
  older.order = 0;
  older.num_computed = 4;
  older.num_tokens = 12;
  older.blocks = {0};
  RunningSeq newer = older;
  newer.id = 2;
  newer.order = 1;
  newer.blocks = {1};
  SchedulerInput in;
  in.free_blocks = 0;
  in.running = {older, newer};
  StepPlan plan = Schedule(in, Config(16, 8));
  // The older one preempts the newer one and takes its block.
  EXPECT_EQ(plan.preempted, (std::vector<int64_t>{2}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{1, 4, 4, 1, false}}));
}

TEST(SchedulerTest, SwapInBeforeAdmissionAndBlocksIt) {
  SchedulerInput in;
  in.free_slots = 3;
  in.free_blocks = 3;
  in.swapped = {{7, 5, 9, 10}, {6, 4, 3, 4}};
  in.waiting = {{1, 10, 2, 1}};
  StepPlan plan = Schedule(in, Config(16, 8));
  // Oldest first: 6 (1 block for 4 tokens), then 7 (3 blocks for 10) fails.
  EXPECT_EQ(plan.swapped_in, (std::vector<int64_t>{6}));
  EXPECT_EQ(plan.rows, (std::vector<ScheduledRow>{{6, 3, 1, 1, false}}));
  EXPECT_TRUE(plan.admitted.empty());  // 7 is still swapped out
}

// ---- Iteration tables ------------------------------------------------------
//
// A toy engine applies each plan the way worker/engine/engine.cc does
// (allocate, fork after the prompt, grow, finish, swap) so a test can state the
// expected plan and pool state at every iteration.

struct ToyGroup {
  int64_t id;
  int prompt_len;
  int n;
  int gen;  // tokens each completion generates
};

class Toy {
 public:
  Toy(SchedulerConfig cfg, int slots, int blocks) : cfg_(cfg), slots_(slots) {
    for (int b = 0; b < blocks; ++b) free_.push_back(b);
  }
  void Add(ToyGroup g) {
    groups_[g.id] = g;
    waiting_.push_back(g.id);
  }

  // Runs one step; returns the plan as text:
  //   "pre[..] in[..] adm[..] rows[seq@start+len ...]".
  std::string Step() {
    SchedulerInput in;
    for (auto& [id, s] : running_) in.running.push_back(s);
    for (auto& [id, s] : swapped_) in.swapped.push_back(s);
    for (int64_t g : waiting_) {
      in.waiting.push_back(
          {g, g * 10, groups_[g].prompt_len, groups_[g].n, true});
    }
    in.free_slots = slots_;
    in.free_blocks = static_cast<int>(free_.size());
    StepPlan plan = Schedule(in, cfg_);
    Apply(plan);
    std::vector<std::string> rows;
    for (const ScheduledRow& r : plan.rows) {
      rows.push_back(absl::StrCat(r.seq_id, "@", r.start, "+", r.len,
                                  r.copy_on_write ? "c" : ""));
    }
    std::vector<int64_t> adm;
    for (const AdmittedGroup& a : plan.admitted) adm.push_back(a.group_id);
    return absl::StrCat("pre[", absl::StrJoin(plan.preempted, ","), "] in[",
                        absl::StrJoin(plan.swapped_in, ","), "] adm[",
                        absl::StrJoin(adm, ","), "] rows[",
                        absl::StrJoin(rows, " "), "]");
  }
  int free_blocks() const { return static_cast<int>(free_.size()); }
  int free_slots() const { return slots_; }
  const std::vector<int64_t>& finished() const { return finished_; }
  std::map<int64_t, int> generated() const { return generated_; }

 private:
  int Alloc() {
    EXPECT_FALSE(free_.empty());
    std::sort(free_.begin(), free_.end());
    const int b = free_.front();
    free_.erase(free_.begin());
    refs_[b] = 1;
    return b;
  }
  void Unref(int b) {
    if (--refs_[b] == 0) free_.push_back(b);
  }
  void Release(RunningSeq& s) {
    for (int b : s.blocks) Unref(b);
    slots_ += s.slots;
  }

  void Apply(const StepPlan& plan) {
    for (int64_t id : plan.preempted) {
      RunningSeq s = running_.at(id);
      running_.erase(id);
      Release(s);
      if (s.prompt_prefill) {
        const int64_t g = id / 10;
        waiting_.insert(std::lower_bound(waiting_.begin(), waiting_.end(), g),
                        g);
      } else {
        swapped_[id] = {id, s.order, s.num_computed, s.num_tokens};
      }
    }
    for (const AdmittedGroup& a : plan.admitted) {
      const ToyGroup& g = groups_[a.group_id];
      waiting_.erase(std::find(waiting_.begin(), waiting_.end(), g.id));
      RunningSeq head;
      head.id = g.id * 10;
      head.order = g.id;
      head.num_tokens = g.prompt_len;
      head.prompt_prefill = true;
      head.slots = g.n;
      slots_ -= g.n;
      for (int i = 0; i < a.prompt_blocks; ++i) head.blocks.push_back(Alloc());
      running_[head.id] = head;
    }
    for (int64_t id : plan.swapped_in) {
      SwappedSeq w = swapped_.at(id);
      swapped_.erase(id);
      RunningSeq s;
      s.id = id;
      s.order = w.order;
      s.num_computed = w.num_computed;
      s.num_tokens = w.num_tokens;
      s.decode = true;
      slots_ -= 1;
      running_[id] = s;  // blocks come with its row
    }
    for (const ScheduledRow& r : plan.rows) {
      RunningSeq& s = running_.at(r.seq_id);
      ASSERT_EQ(r.start, s.num_computed);
      int new_blocks = r.new_blocks;
      if (r.copy_on_write) {
        const int i = r.start / cfg_.kv_block_size;
        Unref(s.blocks[i]);
        s.blocks[i] = Alloc();
        --new_blocks;
      }
      for (int i = 0; i < new_blocks; ++i) s.blocks.push_back(Alloc());
      ASSERT_GE(static_cast<int>(s.blocks.size()),
                BlocksFor(r.start + r.len, cfg_.kv_block_size));
      s.num_computed += r.len;
    }
    // Sample, fork, finish.
    std::vector<int64_t> done;
    std::vector<RunningSeq> forks;
    for (const ScheduledRow& r : plan.rows) {
      RunningSeq& s = running_.at(r.seq_id);
      if (s.num_computed < s.num_tokens) continue;  // mid-prompt chunk
      const ToyGroup& g = groups_[s.id / 10];
      if (s.prompt_prefill) {
        s.prompt_prefill = false;
        s.decode = true;
        s.slots = 1;
        for (int i = 1; i < g.n; ++i) {
          RunningSeq f = s;
          f.id = s.id + i;
          for (int b : f.blocks) ++refs_[b];
          forks.push_back(f);
        }
      }
      ++generated_[s.id];
      if (generated_[s.id] == g.gen) {
        done.push_back(s.id);
      } else {
        s.num_tokens += 1;
      }
    }
    for (RunningSeq& f : forks) {
      ++generated_[f.id];
      f.num_tokens += 1;
      running_[f.id] = f;
    }
    for (int64_t id : done) {
      Release(running_.at(id));
      running_.erase(id);
      finished_.push_back(id);
    }
  }

  SchedulerConfig cfg_;
  int slots_;
  std::vector<int> free_;
  std::map<int, int> refs_;
  std::map<int64_t, ToyGroup> groups_;
  std::deque<int64_t> waiting_;
  std::map<int64_t, RunningSeq> running_;
  std::map<int64_t, SwappedSeq> swapped_;
  std::map<int64_t, int> generated_;
  std::vector<int64_t> finished_;
};

TEST(SchedulerTableTest, ChunkedPrefillMixedWithDecode) {
  // Budget 6 tokens, chunk 4, block 4. Group 1: prompt 3, n=1, 4 tokens.
  // Group 2: prompt 10 (3 chunks: 4, 4, 2), n=1, 2 tokens.
  Toy toy(Config(6, 4), /*slots=*/4, /*blocks=*/20);
  toy.Add({1, 3, 1, 4});
  toy.Add({2, 10, 1, 2});
  const std::vector<std::string> expected = {
      // Group 1's whole prompt; group 2's first chunk does not fit (3+4 > 6).
      "pre[] in[] adm[1] rows[10@0+3]",
      // Group 1 decodes; group 2 is admitted with its first chunk.
      "pre[] in[] adm[2] rows[10@3+1 20@0+4]",
      "pre[] in[] adm[] rows[10@4+1 20@4+4]",
      // The last chunk samples group 2's first token.
      "pre[] in[] adm[] rows[10@5+1 20@8+2]",
      // Group 1 finished at its 4th token; group 2 decodes its second.
      "pre[] in[] adm[] rows[20@10+1]",
      "pre[] in[] adm[] rows[]",
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(toy.Step(), expected[i]) << "iteration " << i;
  }
  EXPECT_EQ(toy.finished(), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(toy.free_blocks(), 20);
  EXPECT_EQ(toy.free_slots(), 4);
}

TEST(SchedulerTableTest, GroupForkSharesThePromptAndCopiesOnWrite) {
  // Prompt 6 with block 4: blocks {0, 1}, block 1 half full and shared by the
  // three completions after the fork. Each of the first two writers copies it.
  Toy toy(Config(16, 8), /*slots=*/3, /*blocks=*/10);
  toy.Add({1, 6, 3, 3});
  const std::vector<std::string> expected = {
      "pre[] in[] adm[1] rows[10@0+6]",
      // The last writer owns the block alone by then: no copy.
      "pre[] in[] adm[] rows[10@6+1c 11@6+1c 12@6+1]",
      "pre[] in[] adm[] rows[10@7+1 11@7+1 12@7+1]",
      "pre[] in[] adm[] rows[]",
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(toy.Step(), expected[i]) << "iteration " << i;
  }
  EXPECT_EQ(toy.free_blocks(), 10);
}

TEST(SchedulerTableTest, PreemptionSwapsOutAndResumesBeforeAdmission) {
  // 5 blocks of 2 tokens. Two single-completion groups of prompt 2 that
  // generate 5 tokens each cannot both finish without preemption.
  Toy toy(Config(8, 8, /*block=*/2), /*slots=*/2, /*blocks=*/5);
  toy.Add({1, 2, 1, 5});
  toy.Add({2, 2, 1, 5});
  toy.Add({3, 2, 1, 1});
  const std::vector<std::string> expected = {
      // Both admitted (1 prompt block + 1 headroom each); group 3 has no slot.
      "pre[] in[] adm[1,2] rows[10@0+2 20@0+2]",
      "pre[] in[] adm[] rows[10@2+1 20@2+1]",
      "pre[] in[] adm[] rows[10@3+1 20@3+1]",
      // Position 4 opens a third block for each: only 1 free. Seq 20 (the
      // newest) preempts itself; nothing is admitted in a preempting step.
      "pre[20] in[] adm[] rows[10@4+1]",
      // Seq 20 waits swapped out while 10 runs; group 3 may not overtake it.
      "pre[] in[] adm[] rows[10@5+1]",
      // 10 finished (5 tokens): 20 is swapped back in with all its blocks
      // (3 for 5 tokens) and decodes in the same step; then group 3.
      "pre[] in[20] adm[3] rows[20@4+1 30@0+2]",
      "pre[] in[] adm[] rows[20@5+1]",
      "pre[] in[] adm[] rows[]",
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(toy.Step(), expected[i]) << "iteration " << i;
  }
  EXPECT_EQ(toy.generated(),
            (std::map<int64_t, int>{{10, 5}, {20, 5}, {30, 1}}));
  EXPECT_EQ(toy.free_blocks(), 5);
  EXPECT_EQ(toy.free_slots(), 2);
}

TEST(SchedulerTableTest, PreemptedPromptRestartsFromTheWaitingHead) {
  // Seq 10 decodes and needs a block held by group 2's prefilling prompt: the
  // prompt is dropped and group 2 goes back to the head of the waiting queue.
  Toy toy(Config(/*budget=*/3, /*chunk=*/2, /*block=*/2), /*slots=*/2,
          /*blocks=*/8);
  toy.Add({1, 2, 1, 8});
  toy.Add({2, 10, 1, 1});
  std::vector<std::string> got;
  for (int i = 0; i < 14; ++i) got.push_back(toy.Step());
  const std::vector<std::string> expected = {
      // Group 2's first chunk (2) does not fit the budget left (1).
      "pre[] in[] adm[1] rows[10@0+2]",
      // Group 2 takes its 5 prompt blocks (+1 headroom checked).
      "pre[] in[] adm[2] rows[10@2+1 20@0+2]",
      "pre[] in[] adm[] rows[10@3+1 20@2+2]",
      "pre[] in[] adm[] rows[10@4+1 20@4+2]",
      "pre[] in[] adm[] rows[10@5+1 20@6+2]",
      // 10 needs a block at position 6, none is free: group 2's prompt (the
      // newest) is preempted and returns to waiting.
      "pre[20] in[] adm[] rows[10@6+1]",
      // Group 2 needs 6 blocks; only 4, then 3, are free.
      "pre[] in[] adm[] rows[10@7+1]",
      "pre[] in[] adm[] rows[10@8+1]",
      // 10 is done; group 2 starts over from position 0 with the same chunks.
      "pre[] in[] adm[2] rows[20@0+2]",
      "pre[] in[] adm[] rows[20@2+2]",
      "pre[] in[] adm[] rows[20@4+2]",
      "pre[] in[] adm[] rows[20@6+2]",
      "pre[] in[] adm[] rows[20@8+2]",
      "pre[] in[] adm[] rows[]",
  };
  EXPECT_EQ(got, expected);
  EXPECT_EQ(toy.free_blocks(), 8);
  EXPECT_EQ(toy.generated(), (std::map<int64_t, int>{{10, 8}, {20, 1}}));
}

}  // namespace
}  // namespace rollout::worker
