// Engine tests over the fake backend: scheduling, forks, ReplaySSM
// bookkeeping, sampling reproducibility, pause/cancel/deadlines, weights.
// Numerics of the real model are covered by tests/engine (CPU backend).
#include "worker/engine/engine.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "worker/engine/engine_test_util.h"
#include "worker/engine/fake_backend.h"

namespace rollout::worker {
namespace {

std::vector<int32_t> Prompt(int len, int salt = 0) {
  std::vector<int32_t> p(len);
  for (int i = 0; i < len; ++i) p[i] = 1 + (i * 7 + salt * 3) % 30;
  return p;
}

// Every completion's logprobs must equal a clean single-sequence run of the
// fake: this catches wrong KV sharing/copy-on-write, wrong forks, lost
// tokens, wrong cursors and state mix-ups whatever the batching.
void ExpectMatchesReference(const FakeBackendOptions& fo,
                            const std::vector<int32_t>& prompt,
                            const CompletionResult& c) {
  std::vector<float> ref = ReferenceLogprobs(fo, prompt, c.token_ids);
  ASSERT_EQ(ref.size(), c.logprobs.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(ref[i], c.logprobs[i])
        << "completion " << c.completion_index << " token " << i;
  }
}

TEST(EngineTest, GreedyEqualsReferenceContinuation) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  const std::vector<int32_t> prompt = Prompt(21);
  GroupRequest r = MakeRequest("g", prompt, 1, 12, 0.0f, 1);
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  CollectedResults res = EngineHarness::Drain(*ch);
  ASSERT_EQ(res.completions.size(), 1u);
  const CompletionResult& c = res.completions[0];
  EXPECT_EQ(c.token_ids, ReferenceGreedy(fo, prompt, 12, false));
  EXPECT_EQ(c.finish_reason, FinishReason::kLength);
  ExpectMatchesReference(fo, prompt, c);
  // Deltas carry the same tokens in order.
  std::vector<int32_t> streamed;
  for (const TokenDelta& d : res.deltas) {
    streamed.insert(streamed.end(), d.token_ids.begin(), d.token_ids.end());
  }
  EXPECT_EQ(streamed, c.token_ids);
  EXPECT_TRUE(res.summary.status.ok());
  EXPECT_EQ(res.summary.completion_tokens, 12);
}

TEST(EngineTest, GroupOfEightComputesItsPromptOnce) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  EngineHarness h(fo, eo);
  const std::vector<int32_t> prompt = Prompt(37);  // 3 chunks of 16
  GroupRequest r = MakeRequest("g", prompt, 8, 10, 1.0f, 5);
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  CollectedResults res = EngineHarness::Drain(*ch);
  ASSERT_EQ(res.completions.size(), 8u);
  const EngineStats st = h.engine().stats();
  EXPECT_EQ(st.prompt_tokens, 8u * 37);
  EXPECT_EQ(st.prompt_tokens_computed, 37u);
  EXPECT_EQ(res.summary.prompt_tokens_computed, 37);
  EXPECT_EQ(h.fake().counters().prefill_tokens, 37);
  EXPECT_EQ(st.state_forks, 7u);
  EXPECT_EQ(h.fake().counters().copy_state, 7);
  // 37 % 4 != 0: the shared last prompt block is copied by 7 of the 8
  // writers (the last one owns it alone by then).
  EXPECT_EQ(h.fake().counters().copy_kv, 7);
  std::set<std::vector<int32_t>> distinct;
  for (const CompletionResult& c : res.completions) {
    ExpectMatchesReference(fo, prompt, c);
    distinct.insert(c.token_ids);
  }
  EXPECT_GT(distinct.size(), 4u);  // independent random streams
  // Everything is released.
  EXPECT_EQ(st.state_slots.used, 0);
  EXPECT_EQ(st.kv_blocks.used, 0);
  EXPECT_EQ(st.rings.used, 0);
  EXPECT_GT(st.kv_blocks.peak_bytes, 0);
}

// The same seeded request alone, inside a batch of 64 others, and under
// preemption must produce identical tokens and logprobs.
TEST(EngineTest, SeededCompletionIsIdenticalAloneInBatchAndAfterPreemption) {
  FakeBackendOptions fo;
  const std::vector<int32_t> prompt = Prompt(13, 1);
  GroupRequest target = MakeRequest("target", prompt, 2, 40, 0.9f, 1234);
  target.sampling.top_p = 0.95f;
  target.sampling.top_k = 20;
  target.sampling.ignore_eos = true;

  // Alone.
  EngineOptions eo = SmallEngineOptions();
  eo.max_num_seqs = 80;
  eo.max_batch_tokens = 256;
  EngineHarness alone(fo, eo);
  auto ch = alone.Submit(target);
  alone.Run();
  const CollectedResults a = EngineHarness::Drain(*ch);

  // Inside a batch of 64 other requests (submitted before and after).
  EngineHarness batch(fo, eo);
  std::vector<std::shared_ptr<ResultChannel>> others;
  for (int i = 0; i < 32; ++i) {
    others.push_back(batch.Submit(MakeRequest(
        absl::StrCat("o", i), Prompt(5 + i % 17, i), 1, 10 + i % 23, 1.0f, i)));
  }
  auto ch2 = batch.Submit(target);
  for (int i = 32; i < 64; ++i) {
    others.push_back(batch.Submit(MakeRequest(
        absl::StrCat("o", i), Prompt(5 + i % 17, i), 1, 10 + i % 23, 1.0f, i)));
  }
  batch.Run();
  const CollectedResults b = EngineHarness::Drain(*ch2);
  int max_rows = 0;
  for (const StepTrace& t : batch.traces()) {
    max_rows = std::max(max_rows, static_cast<int>(t.rows.size()));
  }
  EXPECT_GE(max_rows, 60);  // really batched together

  // Under preemption: a KV pool so small that sequences get swapped out.
  EngineOptions tight = eo;
  tight.num_kv_blocks = 30;  // 40 + 13 tokens = 14 blocks per completion
  tight.max_model_len = 64;
  EngineHarness pre(fo, tight);
  std::vector<std::shared_ptr<ResultChannel>> early;
  for (int i = 0; i < 3; ++i) {
    early.push_back(pre.Submit(
        MakeRequest(absl::StrCat("e", i), Prompt(9, i), 1, 30, 1.0f, i)));
  }
  auto ch3 = pre.Submit(target);
  pre.Run();
  const CollectedResults c = EngineHarness::Drain(*ch3);
  int target_preemptions = 0;
  for (const CompletionResult& r : c.completions) {
    target_preemptions += r.num_preemptions;
  }
  EXPECT_GT(target_preemptions, 0);
  EXPECT_GT(pre.engine().stats().preemptions, 0u);
  EXPECT_GT(pre.fake().counters().exports, 0);

  ASSERT_EQ(a.completions.size(), 2u);
  ASSERT_EQ(b.completions.size(), 2u);
  ASSERT_EQ(c.completions.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a.completions[i].token_ids, b.completions[i].token_ids);
    EXPECT_EQ(a.completions[i].logprobs, b.completions[i].logprobs);
    EXPECT_EQ(a.completions[i].token_ids, c.completions[i].token_ids);
    EXPECT_EQ(a.completions[i].logprobs, c.completions[i].logprobs);
    ExpectMatchesReference(fo, prompt, a.completions[i]);
  }
  EXPECT_NE(a.completions[0].token_ids, a.completions[1].token_ids);
  for (auto& o : others) {
    CollectedResults r = EngineHarness::Drain(*o);
    ExpectMatchesReference(fo,
                           Prompt(5 + std::stoi(o->request_id().substr(1)) % 17,
                                  std::stoi(o->request_id().substr(1))),
                           r.completions[0]);
  }
  for (auto& e : early) EngineHarness::Drain(*e);
  const EngineStats st = pre.engine().stats();
  EXPECT_EQ(st.kv_blocks.used, 0);
  EXPECT_EQ(st.swap_bytes, 0);
  EXPECT_GT(st.swap_peak_bytes, 0);
}

TEST(EngineTest, PreemptingRingRowsFlushesThemFirst) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.num_kv_blocks = 30;
  eo.max_model_len = 64;
  EngineHarness h(fo, eo);
  std::vector<std::shared_ptr<ResultChannel>> chs;
  for (int i = 0; i < 4; ++i) {
    GroupRequest r =
        MakeRequest(absl::StrCat("r", i), Prompt(9, i), 2, 40, 1.0f, 100 + i);
    r.replay_ssm = ReplayMode::kOn;
    r.sampling.ignore_eos = true;
    chs.push_back(h.Submit(r));
  }
  h.Run();
  EXPECT_GT(h.engine().stats().preemptions, 0u);
  EXPECT_GT(h.fake().counters().explicit_flushes, 0);  // before ExportState
  for (int i = 0; i < 4; ++i) {
    CollectedResults res = EngineHarness::Drain(*chs[i]);
    EXPECT_TRUE(res.summary.status.ok()) << res.summary.status;
    for (const CompletionResult& c : res.completions) {
      EXPECT_EQ(c.token_ids.size(), 40u);
      EXPECT_TRUE(c.replay_ssm.applied);
      ExpectMatchesReference(fo, Prompt(9, i), c);
    }
  }
}

TEST(EngineTest, ReplayOnAndOffInOneMixedBatch) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  const std::vector<int32_t> prompt = Prompt(11);
  GroupRequest on = MakeRequest("on", prompt, 2, 30, 0.0f, 3);
  on.replay_ssm = ReplayMode::kOn;
  on.sampling.ignore_eos = true;
  GroupRequest off = on;
  off.request_id = "off";
  off.replay_ssm = ReplayMode::kOff;
  auto ch_on = h.Submit(on);
  auto ch_off = h.Submit(off);
  h.Run();
  CollectedResults ron = EngineHarness::Drain(*ch_on);
  CollectedResults roff = EngineHarness::Drain(*ch_off);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ron.completions[i].token_ids, roff.completions[i].token_ids);
    EXPECT_EQ(ron.completions[i].logprobs, roff.completions[i].logprobs);
    EXPECT_TRUE(ron.completions[i].replay_ssm.applied);
    EXPECT_EQ(ron.completions[i].replay_ssm.ring_steps, 29);
    EXPECT_GT(ron.completions[i].replay_ssm.flushes, 2);
    EXPECT_FALSE(roff.completions[i].replay_ssm.applied);
    EXPECT_EQ(roff.completions[i].replay_ssm.plain_steps, 29);
  }
  // Ring rows and plain rows really ran in the same steps.
  int mixed_steps = 0;
  for (const StepTrace& t : h.traces()) {
    bool ring = false, plain = false;
    for (const StepTraceRow& r : t.rows) {
      if (!r.decode) continue;
      (r.ring_slot >= 0 ? ring : plain) = true;
      if (r.request_id == "off") {
        EXPECT_LT(r.ring_slot, 0);
      }
    }
    mixed_steps += ring && plain;
  }
  EXPECT_GE(mixed_steps, 28);
  const EngineStats st = h.engine().stats();
  EXPECT_EQ(st.generation_tokens_ring, 2u * 29);
  EXPECT_EQ(st.flushes,
            static_cast<uint64_t>(h.fake().counters().ring_flushes +
                                  h.fake().counters().explicit_flushes));
  EXPECT_EQ(st.completions_by_mode[static_cast<int>(ReplayMode::kOn)], 2u);
  EXPECT_EQ(st.completions_by_mode[static_cast<int>(ReplayMode::kOff)], 2u);
}

TEST(EngineTest, GroupOfEightHasStaggeredFlushes) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.replay.ring_length = 16;
  EngineHarness h(fo, eo);
  GroupRequest r = MakeRequest("g", Prompt(9), 8, 60, 1.0f, 11);
  r.replay_ssm = ReplayMode::kOn;
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  // Which completions flush at each step.
  std::vector<std::set<int>> flushing;
  std::map<int, std::vector<int>> flush_steps;  // completion -> steps
  for (const StepTrace& t : h.traces()) {
    std::set<int> f;
    for (const StepTraceRow& row : t.rows) {
      if (row.decode) {
        EXPECT_GE(row.ring_slot, 0);
      }
      if (row.flush) {
        f.insert(row.completion_index);
        flush_steps[row.completion_index].push_back(t.step);
      }
    }
    flushing.push_back(f);
  }
  size_t worst = 0;
  for (const std::set<int>& f : flushing) worst = std::max(worst, f.size());
  EXPECT_EQ(worst, 1u);  // 8 rows over 16 phases: never two in one step
  ASSERT_EQ(flush_steps.size(), 8u);
  std::set<int> first;
  for (auto& [c, steps] : flush_steps) {
    first.insert(steps[0]);
    for (size_t k = 1; k < steps.size(); ++k)
      EXPECT_EQ(steps[k] - steps[k - 1], 16);
  }
  EXPECT_EQ(first.size(), 8u);
  CollectedResults res = EngineHarness::Drain(*ch);
  for (const CompletionResult& c : res.completions) {
    ExpectMatchesReference(fo, Prompt(9), c);
  }
}

TEST(EngineTest, FallbackNoGdnLayers) {
  FakeBackendOptions fo;
  fo.num_gdn_layers = 0;  // all-attention model
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("g", Prompt(6), 3, 5, 1.0f, 1);
  r.replay_ssm = ReplayMode::kOn;
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  CollectedResults res = EngineHarness::Drain(*ch);
  for (const CompletionResult& c : res.completions) {
    EXPECT_FALSE(c.replay_ssm.applied);
    EXPECT_EQ(c.replay_ssm.fallback, FallbackReason::kNoGdnLayers);
    EXPECT_EQ(c.token_ids.size(), 5u);
  }
  const EngineStats st = h.engine().stats();
  EXPECT_EQ(st.fallbacks[static_cast<int>(FallbackReason::kNoGdnLayers)], 3u);
  EXPECT_EQ(h.fake().counters().ring_rows, 0);
}

TEST(EngineTest, FallbackRingPoolExhausted) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.replay.num_rings = 1;
  EngineHarness h(fo, eo);
  std::vector<std::shared_ptr<ResultChannel>> chs;
  for (int i = 0; i < 4; ++i) {
    GroupRequest r =
        MakeRequest(absl::StrCat("r", i), Prompt(6, i), 1, 20, 1.0f, i);
    r.replay_ssm = ReplayMode::kOn;
    r.sampling.ignore_eos = true;
    chs.push_back(h.Submit(r));
  }
  h.Run();
  int applied = 0, exhausted = 0;
  for (auto& ch : chs) {
    CollectedResults res = EngineHarness::Drain(*ch);
    const CompletionResult& c = res.completions[0];
    if (c.replay_ssm.applied) ++applied;
    if (c.replay_ssm.fallback == FallbackReason::kRingPoolExhausted) {
      ++exhausted;
      EXPECT_EQ(c.replay_ssm.ring_steps, 0);
    }
    ExpectMatchesReference(fo, Prompt(6, std::stoi(ch->request_id().substr(1))),
                           c);
  }
  EXPECT_EQ(applied, 1);
  EXPECT_EQ(exhausted, 3);
  EXPECT_EQ(h.engine().stats().fallbacks[static_cast<int>(
                FallbackReason::kRingPoolExhausted)],
            3u);
}

TEST(EngineTest, FallbackBackendUnsupportedDisabledAndPrefillOnly) {
  struct Case {
    bool backend_ring;
    bool enabled;
    int max_tokens;
    FallbackReason expected;
  };
  const std::vector<Case> cases = {
      {false, true, 5, FallbackReason::kBackendUnsupported},
      {true, false, 5, FallbackReason::kDisabledByConfig},
      {true, true, 1, FallbackReason::kPrefillOnly},
  };
  for (const Case& k : cases) {
    FakeBackendOptions fo;
    fo.replay_ssm = k.backend_ring;
    EngineOptions eo = SmallEngineOptions();
    eo.replay.enabled = k.enabled;
    EngineHarness h(fo, eo);
    GroupRequest r = MakeRequest("g", Prompt(6), 2, k.max_tokens, 1.0f, 1);
    r.replay_ssm = ReplayMode::kDefault;
    r.sampling.ignore_eos = true;
    // kDefault resolves to ON through the config.
    auto ch = std::make_shared<ResultChannel>("g", 2);
    EngineOptions with_default = eo;
    with_default.replay.default_mode = ReplayMode::kOn;
    EngineHarness hd(fo, with_default);
    ch = hd.Submit(r);
    hd.Run();
    CollectedResults res = EngineHarness::Drain(*ch);
    for (const CompletionResult& c : res.completions) {
      EXPECT_EQ(c.replay_ssm.requested, ReplayMode::kDefault);
      EXPECT_EQ(c.replay_ssm.effective, ReplayMode::kOn);
      EXPECT_EQ(c.replay_ssm.fallback, k.expected)
          << FallbackReasonName(c.replay_ssm.fallback);
    }
    EXPECT_EQ(hd.engine().stats().fallbacks[static_cast<int>(k.expected)], 2u);
  }
}

TEST(EngineTest, AutoUsesTheRingOnlyAboveItsThresholdAndSwitchesExactly) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.replay.auto_min_batch = 4;
  EngineHarness h(fo, eo);
  // 6 completions with different lengths: the decode batch shrinks from 6 to
  // 1, crossing the threshold.
  std::vector<std::shared_ptr<ResultChannel>> chs;
  for (int i = 0; i < 6; ++i) {
    GroupRequest r =
        MakeRequest(absl::StrCat("a", i), Prompt(7, i), 1, 10 + 6 * i, 0.0f, i);
    r.replay_ssm = ReplayMode::kAuto;
    r.sampling.ignore_eos = true;
    chs.push_back(h.Submit(r));
  }
  h.Run();
  for (const StepTrace& t : h.traces()) {
    for (const StepTraceRow& row : t.rows) {
      if (!row.decode) continue;
      if (t.decode_rows >= 4) {
        EXPECT_GE(row.ring_slot, 0) << "step " << t.step;
      } else if (row.ring_slot >= 0) {
        EXPECT_TRUE(row.flush) << "leaving the ring must flush first";
      }
    }
  }
  for (int i = 0; i < 6; ++i) {
    CollectedResults res = EngineHarness::Drain(*chs[i]);
    const CompletionResult& c = res.completions[0];
    EXPECT_EQ(c.token_ids,
              ReferenceGreedy(fo, Prompt(7, i), 10 + 6 * i, false));
    EXPECT_TRUE(c.replay_ssm.applied);
    EXPECT_EQ(c.replay_ssm.fallback, FallbackReason::kNone);
    if (i == 5) {
      EXPECT_GT(c.replay_ssm.plain_steps, 0);
    }
  }
}

TEST(EngineTest, ReconfigureChangesAutoThresholdAndDefaultMode) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());  // auto_min_batch 4
  EngineReconfig bad;
  bad.replay_auto_min_batch = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(h.engine().Reconfigure(bad)));
  EngineReconfig change;
  change.replay_auto_min_batch = 1;
  change.replay_default_mode = ReplayMode::kAuto;
  ASSERT_TRUE(h.engine().Reconfigure(change).ok());
  GroupRequest r = MakeRequest("d", Prompt(5), 1, 6, 1.0f, 1);
  r.replay_ssm = ReplayMode::kDefault;  // now AUTO, and 1 row is enough
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  const CompletionResult c = EngineHarness::Drain(*ch).completions[0];
  EXPECT_EQ(c.replay_ssm.effective, ReplayMode::kAuto);
  EXPECT_EQ(c.replay_ssm.plain_steps, 0);
  EXPECT_GT(c.replay_ssm.ring_steps, 0);
}

TEST(EngineTest, ReconfigureTurnsReplaySsmOffAndOnBetweenSteps) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("mid", Prompt(5), 1, 40, 0.0f, 1);
  r.replay_ssm = ReplayMode::kOn;
  r.sampling.ignore_eos = true;
  auto mid = h.Submit(r);
  h.Steps(10);  // on the ring by now
  EngineReconfig off;
  off.replay_enabled = false;
  ASSERT_TRUE(h.engine().Reconfigure(off).ok());
  GroupRequest later = MakeRequest("later", Prompt(6), 1, 8, 0.0f, 2);
  later.replay_ssm = ReplayMode::kOn;
  later.sampling.ignore_eos = true;
  auto later_ch = h.Submit(later);
  h.Run();
  // The running row flushed, continued plainly, and still gives the
  // reference tokens; both report why they did not (all) use the ring.
  const CompletionResult m = EngineHarness::Drain(*mid).completions[0];
  EXPECT_EQ(m.token_ids, ReferenceGreedy(fo, Prompt(5), 40, false));
  EXPECT_GT(m.replay_ssm.ring_steps, 0);
  EXPECT_GT(m.replay_ssm.plain_steps, 0);
  EXPECT_EQ(m.replay_ssm.fallback, FallbackReason::kDisabledByConfig);
  const CompletionResult l = EngineHarness::Drain(*later_ch).completions[0];
  EXPECT_EQ(l.token_ids, ReferenceGreedy(fo, Prompt(6), 8, false));
  EXPECT_FALSE(l.replay_ssm.applied);
  EXPECT_EQ(l.replay_ssm.ring_steps, 0);
  EXPECT_EQ(l.replay_ssm.fallback, FallbackReason::kDisabledByConfig);

  EngineReconfig on;
  on.replay_enabled = true;
  ASSERT_TRUE(h.engine().Reconfigure(on).ok());
  GroupRequest again = MakeRequest("again", Prompt(7), 1, 8, 0.0f, 3);
  again.replay_ssm = ReplayMode::kOn;
  again.sampling.ignore_eos = true;
  auto again_ch = h.Submit(again);
  h.Run();
  const CompletionResult a = EngineHarness::Drain(*again_ch).completions[0];
  EXPECT_TRUE(a.replay_ssm.applied);
  EXPECT_EQ(a.replay_ssm.fallback, FallbackReason::kNone);
  EXPECT_EQ(a.token_ids, ReferenceGreedy(fo, Prompt(7), 8, false));
}

TEST(EngineTest, StopTokensMinTokensAndEos) {
  FakeBackendOptions fo;
  fo.vocab_size = 4;  // EOS (0) is likely at every step
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("g", {1, 2, 3}, 8, 30, 1.0f, 9);
  r.sampling.min_tokens = 5;
  r.sampling.stop_token_ids = {3};
  auto ch = h.Submit(r);
  GroupRequest ign = MakeRequest("ign", {1, 2, 3}, 4, 30, 1.0f, 9);
  ign.sampling.ignore_eos = true;
  auto ch2 = h.Submit(ign);
  h.Run();
  CollectedResults res = EngineHarness::Drain(*ch);
  int stopped = 0;
  for (const CompletionResult& c : res.completions) {
    for (size_t i = 0; i + 1 < c.token_ids.size(); ++i) {
      EXPECT_NE(c.token_ids[i], 0);
      EXPECT_NE(c.token_ids[i], 3);
    }
    EXPECT_GE(c.token_ids.size(), 5u);
    if (c.finish_reason == FinishReason::kStop) {
      ++stopped;
      EXPECT_EQ(c.stop_token_id, c.token_ids.back());
      EXPECT_TRUE(c.stop_token_id == 0 || c.stop_token_id == 3);
    }
  }
  EXPECT_GT(stopped, 4);
  CollectedResults res2 = EngineHarness::Drain(*ch2);
  int eos_seen = 0;
  for (const CompletionResult& c : res2.completions) {
    EXPECT_EQ(c.token_ids.size(), 30u);
    EXPECT_EQ(c.finish_reason, FinishReason::kLength);
    eos_seen += std::count(c.token_ids.begin(), c.token_ids.end(), 0);
  }
  EXPECT_GT(eos_seen, 0);
}

TEST(EngineTest, TopLogprobsAreRawAndSorted) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("g", Prompt(5), 1, 6, 0.5f, 2);
  r.logprobs.top_k = 3;
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  const CompletionResult c = EngineHarness::Drain(*ch).completions[0];
  ASSERT_EQ(c.top_logprobs.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    ASSERT_EQ(c.top_logprobs[i].size(), 3u);
    EXPECT_GE(c.top_logprobs[i][0].logprob, c.top_logprobs[i][1].logprob);
    EXPECT_GE(c.top_logprobs[i][1].logprob, c.top_logprobs[i][2].logprob);
    EXPECT_LE(c.logprobs[i], c.top_logprobs[i][0].logprob);
  }
}

TEST(EngineTest, ScoreEqualsGenerationLogprobs) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  const std::vector<int32_t> prompt = Prompt(10);
  GroupRequest r = MakeRequest("g", prompt, 3, 25, 1.0f, 77);
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Run();
  CollectedResults gen = EngineHarness::Drain(*ch);
  ScoreRequest s;
  s.request_id = "score";
  s.prompt = prompt;
  for (const CompletionResult& c : gen.completions) {
    s.completions.push_back(c.token_ids);
  }
  s.completions.push_back({5});  // a single-token completion
  s.top_logprobs = 2;
  auto sch = h.SubmitScore(s);
  h.Run();
  CollectedResults sc = EngineHarness::Drain(*sch);
  ASSERT_EQ(sc.completions.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(sc.completions[i].is_score);
    EXPECT_EQ(sc.completions[i].token_ids, gen.completions[i].token_ids);
    EXPECT_EQ(sc.completions[i].logprobs, gen.completions[i].logprobs);
    EXPECT_EQ(sc.completions[i].top_logprobs.size(), 25u);
  }
  EXPECT_EQ(sc.completions[3].logprobs, ReferenceLogprobs(fo, prompt, {5}));
  EXPECT_EQ(sc.summary.prompt_tokens_computed, 10);
  ASSERT_EQ(sc.completions[0].weight_versions.size(), 1u);
  EXPECT_EQ(sc.completions[0].weight_versions[0].version, 0);
}

TEST(EngineTest, UpdateWeightsChangesOutputsAndRejectsBadCheckpoints) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  const std::vector<int32_t> prompt = Prompt(8);
  auto greedy = [&](const std::string& id) {
    GroupRequest r = MakeRequest(id, prompt, 1, 10, 0.0f, 1);
    r.sampling.ignore_eos = true;
    auto ch = h.Submit(r);
    h.Run();
    return EngineHarness::Drain(*ch).completions[0];
  };
  const CompletionResult v0 = greedy("a");
  EXPECT_EQ(v0.weight_versions.size(), 1u);
  EXPECT_EQ(v0.weight_versions[0].version, 0);

  absl::Status bad = h.engine().UpdateWeights("/corrupt/checkpoint");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(h.engine().weight_version(), 0);
  const CompletionResult still = greedy("b");
  EXPECT_EQ(still.token_ids, v0.token_ids);  // old weights keep serving

  ASSERT_TRUE(h.engine().UpdateWeights("fake:42").ok());
  EXPECT_EQ(h.engine().weight_version(), 1);
  const CompletionResult v1 = greedy("c");
  EXPECT_NE(v1.token_ids, v0.token_ids);
  EXPECT_EQ(v1.weight_versions[0].version, 1);
  FakeBackendOptions fo42 = fo;
  fo42.weights_seed = 42;
  EXPECT_EQ(v1.token_ids, ReferenceGreedy(fo42, prompt, 10, false));

  EXPECT_TRUE(absl::IsInvalidArgument(h.engine().UpdateWeights("fake:1", 1)));
  ASSERT_TRUE(h.engine().UpdateWeights("fake:1", 7).ok());
  EXPECT_EQ(h.engine().weight_version(), 7);
  const EngineStats st = h.engine().stats();
  EXPECT_EQ(st.weight_updates_ok, 2u);
  EXPECT_EQ(st.weight_updates_rejected, 2u);
  EXPECT_EQ(st.weight_version, 7);
}

TEST(EngineTest, PauseKeepFreezesAndRecordsWeightVersionSpans) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("g", Prompt(8), 2, 20, 1.0f, 5);
  r.sampling.ignore_eos = true;
  r.replay_ssm = ReplayMode::kOn;
  auto ch = h.Submit(r);
  h.Steps(6);  // prefill + 5 decode steps
  h.engine().Pause(PauseMode::kKeep);
  EXPECT_TRUE(h.engine().PauseSettled());
  EXPECT_FALSE(h.engine().HasWork());
  const int64_t forwards = h.fake().counters().forward_calls;
  h.Steps(3);
  EXPECT_EQ(h.fake().counters().forward_calls, forwards);  // frozen
  ASSERT_TRUE(h.engine().UpdateWeights("fake:9").ok());
  h.engine().Resume();
  h.Run();
  CollectedResults res = EngineHarness::Drain(*ch);
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.token_ids.size(), 20u);
    ASSERT_EQ(c.weight_versions.size(), 2u);
    EXPECT_EQ(c.weight_versions[0].version, 0);
    EXPECT_EQ(c.weight_versions[1].version, 1);
    EXPECT_EQ(c.weight_versions[1].first_token, 6);
  }
}

TEST(EngineTest, PauseAbortReturnsPartialTokensAndKeepsQueuedGroups) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.max_num_seqs = 2;
  EngineHarness h(fo, eo);
  GroupRequest r = MakeRequest("running", Prompt(8), 2, 50, 1.0f, 5);
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  auto queued = h.Submit(MakeRequest("queued", Prompt(8), 1, 3, 1.0f, 5));
  h.Steps(4);
  h.engine().Pause(PauseMode::kAbort);
  EXPECT_TRUE(h.engine().PauseSettled());
  CollectedResults res = EngineHarness::Drain(*ch);
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.finish_reason, FinishReason::kAborted);
    EXPECT_EQ(c.abort_cause, AbortCause::kPaused);
    EXPECT_EQ(c.token_ids.size(), 4u);  // partial tokens kept
  }
  EXPECT_FALSE(queued->closed());
  h.Steps(2);
  EXPECT_FALSE(queued->closed());  // nothing admitted while paused
  h.engine().Resume();
  h.Run();
  EXPECT_EQ(EngineHarness::Drain(*queued).completions[0].token_ids.size(), 3u);
  EXPECT_EQ(h.engine().stats().completions_by_finish[2], 2u);
}

TEST(EngineTest, PauseWaitFinishesRunningAndHoldsTheQueue) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.max_num_seqs = 1;
  EngineHarness h(fo, eo);
  GroupRequest r = MakeRequest("running", Prompt(8), 1, 10, 1.0f, 5);
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  auto queued = h.Submit(MakeRequest("queued", Prompt(8), 1, 3, 1.0f, 5));
  h.Steps(2);
  h.engine().Pause(PauseMode::kWait);
  EXPECT_FALSE(h.engine().PauseSettled());
  h.Run();
  EXPECT_TRUE(h.engine().PauseSettled());
  EXPECT_EQ(EngineHarness::Drain(*ch).completions[0].token_ids.size(), 10u);
  EXPECT_FALSE(queued->closed());
  h.engine().Resume();
  h.Run();
  EXPECT_TRUE(queued->closed());
}

TEST(EngineTest, CancelAndDeadlineFreeSlotsWithPartialTokens) {
  FakeBackendOptions fo;
  absl::Time now = absl::FromUnixSeconds(1000);
  EngineHarness h(fo, SmallEngineOptions(), [&] { return now; });
  GroupRequest a = MakeRequest("a", Prompt(8), 4, 100, 1.0f, 5);
  a.sampling.ignore_eos = true;
  GroupRequest b = a;
  b.request_id = "b";
  b.deadline = now + absl::Milliseconds(50);
  auto cha = h.Submit(a);
  auto chb = h.Submit(b);
  h.Steps(3);
  EXPECT_EQ(h.engine().stats().state_slots.used, 8);
  ASSERT_TRUE(h.engine().Cancel("a").ok());
  EXPECT_TRUE(absl::IsNotFound(h.engine().Cancel("a")));
  EXPECT_EQ(h.engine().stats().state_slots.used, 4);
  now += absl::Milliseconds(60);
  EXPECT_EQ(h.engine().NextDeadline(), b.deadline);
  h.Steps(1);
  EXPECT_EQ(h.engine().stats().state_slots.used, 0);
  EXPECT_EQ(h.engine().stats().kv_blocks.used, 0);
  for (const CompletionResult& c : EngineHarness::Drain(*cha).completions) {
    EXPECT_EQ(c.abort_cause, AbortCause::kCancelled);
    EXPECT_EQ(c.token_ids.size(), 3u);
  }
  for (const CompletionResult& c : EngineHarness::Drain(*chb).completions) {
    EXPECT_EQ(c.abort_cause, AbortCause::kDeadline);
  }
  EXPECT_TRUE(h.engine().Idle());
}

TEST(EngineTest, BackendErrorAbortsTheStepsRequestsAndServingContinues) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("a", Prompt(8), 2, 10, 1.0f, 5);
  auto ch = h.Submit(r);
  h.Steps(2);
  h.fake().FailNextForward();
  h.Steps(1);
  CollectedResults res = EngineHarness::Drain(*ch);
  EXPECT_TRUE(absl::IsInternal(res.summary.status));
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.abort_cause, AbortCause::kInternal);
  }
  EXPECT_EQ(h.engine().stats().step_errors, 1u);
  EXPECT_EQ(h.engine().stats().state_slots.used, 0);
  auto ch2 = h.Submit(MakeRequest("b", Prompt(8), 1, 4, 0.0f, 5));
  h.Run();
  EXPECT_TRUE(EngineHarness::Drain(*ch2).summary.status.ok());
}

TEST(EngineTest, SubmitValidationAndBackPressure) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  eo.max_waiting_groups = 2;
  EngineHarness h(fo, eo);
  auto submit = [&](GroupRequest r) {
    auto ch = std::make_shared<ResultChannel>(r.request_id, std::max(r.n, 1));
    return h.engine().Submit(std::move(r), ch);
  };
  EXPECT_TRUE(
      absl::IsInvalidArgument(submit(MakeRequest("x", {}, 1, 4, 1.0f, 1))));
  EXPECT_TRUE(absl::IsInvalidArgument(
      submit(MakeRequest("x", {1}, 17, 4, 1.0f, 1))));  // n > slots
  EXPECT_TRUE(submit(MakeRequest("x", {1}, 1, 4, 1.0f, 1)).ok());
  EXPECT_TRUE(
      absl::IsAlreadyExists(submit(MakeRequest("x", {1}, 1, 4, 1.0f, 1))));
  EXPECT_TRUE(submit(MakeRequest("y", {1}, 1, 4, 1.0f, 1)).ok());
  EXPECT_TRUE(
      absl::IsResourceExhausted(submit(MakeRequest("z", {1}, 1, 4, 1.0f, 1))));
  EXPECT_EQ(h.engine().stats().requests_waiting, 2);
  EXPECT_EQ(h.engine().stats().rejected_requests, 4u);
  h.Run();
}

TEST(EngineTest, MinWeightVersionHoldsAdmission) {
  FakeBackendOptions fo;
  EngineHarness h(fo, SmallEngineOptions());
  GroupRequest r = MakeRequest("a", Prompt(4), 1, 3, 1.0f, 5);
  r.min_weight_version = 1;
  auto ch = h.Submit(r);
  EXPECT_FALSE(h.engine().HasWork());
  ASSERT_TRUE(h.engine().UpdateWeights("fake:3").ok());
  h.Run();
  EXPECT_EQ(EngineHarness::Drain(*ch).completions[0].weight_versions[0].version,
            1);
}

TEST(EngineTest, PoolGaugesAndBytes) {
  FakeBackendOptions fo;
  EngineOptions eo = SmallEngineOptions();
  EngineHarness h(fo, eo);
  EngineStats st = h.engine().stats();
  EXPECT_EQ(st.state_slots.total, 16);
  EXPECT_EQ(st.rings.total, 16);
  EXPECT_GT(st.kv_blocks.total, 0);
  GroupRequest r = MakeRequest("a", Prompt(8), 4, 6, 1.0f, 5);
  r.replay_ssm = ReplayMode::kOn;
  r.sampling.ignore_eos = true;
  auto ch = h.Submit(r);
  h.Steps(3);
  st = h.engine().stats();
  EXPECT_EQ(st.state_slots.used, 4);
  EXPECT_EQ(st.rings.used, 4);
  EXPECT_EQ(st.state_slots.used_bytes, 4 * 3000);
  EXPECT_EQ(st.requests_running, 1);
  EXPECT_EQ(st.sequences_running, 4);
  h.Run();
  st = h.engine().stats();
  EXPECT_EQ(st.state_slots.used, 0);
  EXPECT_EQ(st.rings.used, 0);
  EXPECT_EQ(st.state_slots.peak_bytes, 4 * 3000);
  EXPECT_EQ(st.rings.peak_bytes, 4 * 100 * 8 * 3);
  EXPECT_GT(st.device_peak_bytes, 0);
  EXPECT_GT(st.batch_size.count, 0u);
  EXPECT_EQ(st.completions_by_finish[static_cast<int>(FinishReason::kLength)],
            4u);
  EXPECT_EQ(st.generation_tokens_ring + st.generation_tokens_plain, 24u);
  EXPECT_EQ(st.time_to_first_token_seconds.count, 4u);
  EXPECT_EQ(st.e2e_request_seconds.count, 1u);
}

}  // namespace
}  // namespace rollout::worker
