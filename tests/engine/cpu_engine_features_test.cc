// Engine features over the real CPU backend: a GRPO group of 8 prefills its
// prompt once and staggers its ring flushes; counted ReplaySSM fallbacks (ring
// pool of 1, a model without GDN layers); Score agrees with generation;
// UpdateWeights to a second checkpoint, and a corrupt one rejected while
// serving continues.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/tools/checkpoint_spec.h"
#include "model/tools/checkpoint_writer.h"
#include "tests/engine/cpu_engine_util.h"

namespace rollout::worker {
namespace {

GroupRequest Greedy(const std::string& id, std::vector<int32_t> prompt,
                    int max_tokens, ReplayMode mode) {
  GroupRequest r;
  r.request_id = id;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0.0f;
  r.sampling.max_tokens = max_tokens;
  r.sampling.ignore_eos = true;
  r.replay_ssm = mode;
  return r;
}

TEST(CpuEngineFeaturesTest, GroupOfEightPrefillsOnceAndStaggersFlushes) {
  const std::string dir = "tests/data/tiny_qwen3_next";
  absl::StatusOr<Golden> golden = LoadGolden(dir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  auto engine = MakeCpuEngine(dir, TinyEngineOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<int32_t> prompt = golden->prompts[3];  // 67 tokens
  GroupRequest r;
  r.request_id = "grpo";
  r.prompt = prompt;
  r.n = 8;
  r.sampling.temperature = 1.0f;
  r.sampling.max_tokens = 40;
  r.sampling.ignore_eos = true;
  r.sampling.seed = 99;
  r.replay_ssm = ReplayMode::kOn;
  std::map<int, std::set<int>> flushes_at_step;  // step -> completions
  std::set<int> first_flush_steps;
  std::map<int, bool> seen;
  (*engine)->set_step_observer([&](const StepTrace& t) {
    for (const StepTraceRow& row : t.rows) {
      if (!row.flush) continue;
      flushes_at_step[t.step].insert(row.completion_index);
      if (!seen[row.completion_index]) {
        seen[row.completion_index] = true;
        first_flush_steps.insert(t.step);
      }
    }
  });
  auto ch = SubmitOrDie(**engine, r);
  RunToIdle(**engine);
  const CollectedResults res = Results(*ch);

  // The prompt was computed once for the 8 completions.
  const EngineStats st = (*engine)->stats();
  EXPECT_EQ(res.summary.prompt_tokens_computed, 67);
  EXPECT_EQ(st.prompt_tokens_computed, 67u);
  EXPECT_EQ(st.prompt_tokens, 8u * 67);
  EXPECT_EQ(st.state_forks, 7u);
  // Staggered: 8 rows over 16 phases never flush in the same step.
  ASSERT_FALSE(flushes_at_step.empty());
  for (const auto& [step, rows] : flushes_at_step) {
    EXPECT_EQ(rows.size(), 1u) << "step " << step;
  }
  EXPECT_EQ(first_flush_steps.size(), 8u);

  // Each completion's logprobs agree with a teacher-forced Score of its
  // tokens (prefill path vs ring decode path: same model, fp32 rounding).
  ScoreRequest s;
  s.request_id = "score";
  s.prompt = prompt;
  std::set<std::vector<int32_t>> distinct;
  for (const CompletionResult& c : res.completions) {
    EXPECT_EQ(c.token_ids.size(), 40u);
    EXPECT_TRUE(c.replay_ssm.applied);
    s.completions.push_back(c.token_ids);
    distinct.insert(c.token_ids);
  }
  EXPECT_GE(distinct.size(), 6u);
  auto sch = std::make_shared<ResultChannel>("score", 8);
  ASSERT_TRUE((*engine)->SubmitScore(s, sch).ok());
  RunToIdle(**engine);
  const CollectedResults scored = Results(*sch);
  double worst = 0;
  for (int i = 0; i < 8; ++i) {
    const auto& g = res.completions[i].logprobs;
    const auto& t = scored.completions[i].logprobs;
    ASSERT_EQ(g.size(), t.size());
    for (size_t k = 0; k < g.size(); ++k) {
      worst = std::max(worst, double{std::fabs(g[k] - t[k])});
    }
  }
  // Score runs the chunked prefill path, generation the ring decode path:
  // the same fp32 model with different summation orders (measured ~1.5e-4
  // for sampled, lower-probability tokens; engine vs transformers ~1e-4).
  EXPECT_LE(worst, 5e-4) << "generation vs Score logprobs";
  std::printf("max |generation - score| logprob: %.3g\n", worst);
}

TEST(CpuEngineFeaturesTest, RingPoolOfOneWithFourConcurrentOnRequests) {
  const std::string dir = "tests/data/tiny_qwen3_5";
  absl::StatusOr<Golden> golden = LoadGolden(dir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  EngineOptions o = TinyEngineOptions();
  o.replay.num_rings = 1;
  auto engine = MakeCpuEngine(dir, o);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<std::shared_ptr<ResultChannel>> chs;
  for (int i = 0; i < 4; ++i) {
    chs.push_back(SubmitOrDie(
        **engine, Greedy(absl::StrCat("on", i), golden->prompts[i],
                         static_cast<int>(golden->greedy_tokens[i].size()),
                         ReplayMode::kOn)));
  }
  RunToIdle(**engine);
  int applied = 0, exhausted = 0;
  for (int i = 0; i < 4; ++i) {
    const CompletionResult c = Results(*chs[i]).completions.at(0);
    EXPECT_EQ(c.token_ids, golden->greedy_tokens[i]);  // either path
    applied += c.replay_ssm.applied;
    if (c.replay_ssm.fallback == FallbackReason::kRingPoolExhausted) {
      ++exhausted;
    }
  }
  EXPECT_EQ(applied, 1);
  EXPECT_EQ(exhausted, 3);
  EXPECT_EQ((*engine)->stats().fallbacks[static_cast<int>(
                FallbackReason::kRingPoolExhausted)],
            3u);
}

model::tools::CheckpointSpec SmallSpec() {
  model::tools::CheckpointSpec s;
  s.model_type = "qwen3_5";
  s.vocab_size = 97;
  s.hidden_size = 20;
  s.num_layers = 4;
  s.intermediate_size = 28;
  s.linear_num_key_heads = 2;
  s.linear_num_value_heads = 4;
  s.linear_key_head_dim = 6;
  s.linear_value_head_dim = 5;
  s.num_attention_heads = 4;
  s.num_key_value_heads = 2;
  s.head_dim = 8;
  s.eos_token_id = 2;
  s.max_position_embeddings = 1024;
  return s;
}

std::string TempDir(const std::string& name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

TEST(CpuEngineFeaturesTest, OnWithoutGdnLayersFallsBack) {
  model::tools::CheckpointSpec spec = SmallSpec();
  spec.full_attention_interval = 1;  // every layer is full attention
  const std::string dir = TempDir("attention_only");
  ASSERT_TRUE(model::tools::WriteRandomCheckpoint(spec, dir).ok());
  auto engine = MakeCpuEngine(dir, TinyEngineOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_EQ((*engine)->model_info().num_gdn_layers, 0);
  GroupRequest r = Greedy("on", {5, 6, 7, 8}, 12, ReplayMode::kOn);
  r.n = 3;
  auto ch = SubmitOrDie(**engine, r);
  RunToIdle(**engine);
  for (const CompletionResult& c : Results(*ch).completions) {
    EXPECT_EQ(c.token_ids.size(), 12u);
    EXPECT_FALSE(c.replay_ssm.applied);
    EXPECT_EQ(c.replay_ssm.fallback, FallbackReason::kNoGdnLayers);
  }
  EXPECT_EQ((*engine)
                ->stats()
                .fallbacks[static_cast<int>(FallbackReason::kNoGdnLayers)],
            3u);
}

TEST(CpuEngineFeaturesTest, UpdateWeightsAndACorruptCheckpoint) {
  const std::string a = TempDir("weights_a"), b = TempDir("weights_b"),
                    bad = TempDir("weights_bad");
  ASSERT_TRUE(model::tools::WriteRandomCheckpoint(SmallSpec(), a).ok());
  model::tools::WriteOptions other;
  other.seed = 7;
  ASSERT_TRUE(model::tools::WriteRandomCheckpoint(SmallSpec(), b, other).ok());
  ASSERT_TRUE(model::tools::WriteRandomCheckpoint(SmallSpec(), bad).ok());
  ASSERT_EQ(::truncate((bad + "/model.safetensors").c_str(), 4000), 0);

  auto engine = MakeCpuEngine(a, TinyEngineOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<int32_t> prompt = {11, 12, 13, 14, 15, 16, 17};
  int id = 0;
  auto greedy = [&](ReplayMode mode) {
    auto ch = SubmitOrDie(**engine,
                          Greedy(absl::StrCat("g", id++), prompt, 16, mode));
    RunToIdle(**engine);
    return Results(*ch).completions.at(0);
  };
  const CompletionResult v0 = greedy(ReplayMode::kOn);
  EXPECT_EQ(v0.weight_versions.at(0).version, 0);

  absl::Status s = (*engine)->UpdateWeights(bad);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ((*engine)->weight_version(), 0);
  const CompletionResult still = greedy(ReplayMode::kOff);
  EXPECT_EQ(still.token_ids, v0.token_ids);  // old weights keep serving
  EXPECT_EQ(still.weight_versions.at(0).version, 0);

  ASSERT_TRUE((*engine)->UpdateWeights(b, 5).ok());
  EXPECT_EQ((*engine)->weight_version(), 5);
  const CompletionResult v5 = greedy(ReplayMode::kOn);
  EXPECT_NE(v5.token_ids, v0.token_ids);
  ASSERT_EQ(v5.weight_versions.size(), 1u);
  EXPECT_EQ(v5.weight_versions[0].version, 5);

  // The new outputs are those of checkpoint b served from the start.
  auto fresh = MakeCpuEngine(b, TinyEngineOptions());
  ASSERT_TRUE(fresh.ok());
  auto ch = SubmitOrDie(**fresh, Greedy("f", prompt, 16, ReplayMode::kOff));
  RunToIdle(**fresh);
  EXPECT_EQ(Results(*ch).completions.at(0).token_ids, v5.token_ids);

  const EngineStats st = (*engine)->stats();
  EXPECT_EQ(st.weight_updates_ok, 1u);
  EXPECT_EQ(st.weight_updates_rejected, 1u);
  EXPECT_EQ(st.weight_version, 5);
}

}  // namespace
}  // namespace rollout::worker
