// The engine over the CPU backend against the transformers goldens: greedy
// continuations of every golden prompt, batched together, OFF and ReplaySSM
// ON rows in the same steps.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/engine/cpu_engine_util.h"

namespace rollout::worker {
namespace {

class CpuEngineGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuEngineGoldenTest, GreedyEqualsGoldenOnAndOffInOneBatch) {
  const std::string dir = absl::StrCat("tests/data/", GetParam());
  absl::StatusOr<Golden> golden = LoadGolden(dir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  auto engine = MakeCpuEngine(dir, TinyEngineOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const int vocab = (*engine)->model_info().vocab_size;
  const int np = static_cast<int>(golden->prompts.size());

  std::vector<std::shared_ptr<ResultChannel>> off, on;
  for (int i = 0; i < np; ++i) {
    for (ReplayMode mode : {ReplayMode::kOff, ReplayMode::kOn}) {
      GroupRequest r;
      r.request_id = absl::StrCat(ReplayModeName(mode), i);
      r.prompt = golden->prompts[i];
      r.n = 1;
      r.sampling.temperature = 0.0f;
      r.sampling.max_tokens = static_cast<int>(golden->greedy_tokens[i].size());
      r.sampling.ignore_eos = true;  // as the goldens
      r.replay_ssm = mode;
      (mode == ReplayMode::kOff ? off : on)
          .push_back(SubmitOrDie(**engine, std::move(r)));
    }
  }
  int max_decode_rows = 0;
  (*engine)->set_step_observer([&](const StepTrace& t) {
    max_decode_rows = std::max(max_decode_rows, t.decode_rows);
  });
  RunToIdle(**engine);
  EXPECT_EQ(max_decode_rows, 2 * np);  // everything decoded together

  double worst_golden = 0, worst_on_off = 0;
  for (int i = 0; i < np; ++i) {
    const CompletionResult a = Results(*off[i]).completions.at(0);
    const CompletionResult b = Results(*on[i]).completions.at(0);
    EXPECT_EQ(a.token_ids, golden->greedy_tokens[i]) << "prompt " << i;
    EXPECT_EQ(b.token_ids, golden->greedy_tokens[i]) << "prompt " << i;
    EXPECT_FALSE(a.replay_ssm.applied);
    EXPECT_TRUE(b.replay_ssm.applied);
    EXPECT_GT(b.replay_ssm.flushes, 0);
    ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
    for (size_t t = 0; t < a.logprobs.size(); ++t) {
      worst_on_off = std::max(worst_on_off,
                              double{std::fabs(a.logprobs[t] - b.logprobs[t])});
      // Raw logprob semantics: log_softmax of the model's logits.
      const double ref =
          LogSoftmaxAt(golden->greedy_logits[i].data() + t * vocab, vocab,
                       golden->greedy_tokens[i][t]);
      worst_golden =
          std::max(worst_golden, std::fabs(double{a.logprobs[t]} - ref));
    }
  }
  // Issue 4 asks for 1e-5. Measured on the CPU backend (fp32 state, 40 greedy
  // tokens after prompts of 1..131): 8e-6 (qwen3_5) to 2.4e-5 (qwen3_next,
  // qwen3_5_moe), scattered, not growing with length. That is the fp32 noise
  // floor of these models, not a ReplaySSM error: merely changing the prefill
  // chunk size (exact math, other rounding) moves OFF logprobs by up to
  // 1.7e-5 (ChunkSizeInvariance below), and engine vs transformers differs
  // by ~1e-4. Both paths round the fp32 state at different points (plain:
  // every step; ring: d_j and the checkpoint), so they cannot agree closer
  // than the state's own rounding amplified through the layers.
  // cpu_engine_replay_numerics_test shows it: ring length 1 equals OFF bit for
  // bit, and ring lengths 4, 16 and 64 differ among themselves by as much.
  EXPECT_LE(worst_on_off, 3e-5) << "ReplaySSM ON vs OFF logprobs";
  EXPECT_LE(worst_golden, 2e-3) << "engine vs transformers logprobs";
  RecordProperty("max_on_off_logprob_diff", absl::StrCat(worst_on_off));
  RecordProperty("max_golden_logprob_diff", absl::StrCat(worst_golden));
  std::printf("%s: max |ON-OFF| logprob %.3g, max |engine-golden| %.3g\n",
              GetParam(), worst_on_off, worst_golden);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, CpuEngineGoldenTest,
                         ::testing::Values("tiny_qwen3_next", "tiny_qwen3_5",
                                           "tiny_qwen3_5_moe"));

}  // namespace
}  // namespace rollout::worker

namespace rollout::worker {
namespace {
// The fp32 noise floor: the same greedy OFF decode with the prompt prefilled
// whole or in chunks of 16 (the same math, other rounding).
class ChunkSizeInvarianceTest : public ::testing::TestWithParam<const char*> {};
TEST_P(ChunkSizeInvarianceTest, OffLogprobsBarelyMove) {
  const std::string dir = absl::StrCat("tests/data/", GetParam());
  absl::StatusOr<Golden> golden = LoadGolden(dir);
  ASSERT_TRUE(golden.ok());
  GreedyCompletions run[2];
  for (int variant = 0; variant < 2; ++variant) {
    EngineOptions o = TinyEngineOptions();
    o.prefill_chunk_tokens = variant == 0 ? 256 : 16;
    std::vector<GreedyCompletions> r =
        RunGreedyGolden(dir, *golden, o, {ReplayMode::kOff});
    ASSERT_EQ(r.size(), 1u);
    for (size_t i = 0; i < r[0].tokens.size(); ++i) {
      EXPECT_EQ(r[0].tokens[i], golden->greedy_tokens[i]);
    }
    run[variant] = std::move(r[0]);
  }
  const double worst = MaxLogprobDiff(run[0], run[1]);
  std::printf("%s: OFF chunk256 vs chunk16 max logprob diff %.3g\n", GetParam(),
              worst);
  RecordProperty("max_chunking_logprob_diff", absl::StrCat(worst));
  EXPECT_LE(worst, 3e-5);
}
INSTANTIATE_TEST_SUITE_P(TinyModels, ChunkSizeInvarianceTest,
                         ::testing::Values("tiny_qwen3_next", "tiny_qwen3_5",
                                           "tiny_qwen3_5_moe"));
}  // namespace
}  // namespace rollout::worker
