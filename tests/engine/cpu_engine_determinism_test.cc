// A seeded sampled completion is identical alone, inside a batch of 64 other
// requests, and after being preempted (swapped out and back in), on the real
// CPU backend: sampling keys on (seed, completion index, step), prefill
// chunks sit at absolute positions, rows never depend on each other, and
// swap-out is an exact copy.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/engine/cpu_engine_util.h"

namespace rollout::worker {
namespace {

constexpr char kModel[] = "tests/data/tiny_qwen3_5";

std::vector<int32_t> Prompt(int len, int salt) {
  std::vector<int32_t> p(len);
  for (int i = 0; i < len; ++i) p[i] = 5 + (i * 37 + salt * 101) % 1000;
  return p;
}

GroupRequest Target() {
  GroupRequest r;
  r.request_id = "target";
  r.prompt = Prompt(45, 7);  // two prefill chunks of 32
  r.n = 2;
  r.sampling.temperature = 0.8f;
  r.sampling.top_p = 0.9f;
  r.sampling.top_k = 50;
  r.sampling.max_tokens = 40;
  r.sampling.ignore_eos = true;
  r.sampling.seed = 20260;
  r.logprobs.top_k = 2;
  return r;
}

GroupRequest Other(int i, int max_tokens) {
  GroupRequest r;
  r.request_id = absl::StrCat("other", i);
  r.prompt = Prompt(3 + (i * 7) % 40, i);
  r.n = 1;
  r.sampling.temperature = 1.0f;
  r.sampling.max_tokens = max_tokens;
  r.sampling.ignore_eos = true;
  r.sampling.seed = i;
  return r;
}

CollectedResults RunTarget(EngineOptions options, int others_before,
                           int others_after, int other_tokens,
                           uint64_t* preemptions, int* max_rows) {
  auto engine = MakeCpuEngine(kModel, options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  std::vector<std::shared_ptr<ResultChannel>> others;
  for (int i = 0; i < others_before; ++i) {
    others.push_back(SubmitOrDie(**engine, Other(i, other_tokens)));
  }
  auto target = SubmitOrDie(**engine, Target());
  for (int i = 0; i < others_after; ++i) {
    others.push_back(
        SubmitOrDie(**engine, Other(others_before + i, other_tokens)));
  }
  *max_rows = 0;
  (*engine)->set_step_observer([&](const StepTrace& t) {
    *max_rows = std::max(*max_rows, static_cast<int>(t.rows.size()));
  });
  RunToIdle(**engine);
  for (auto& o : others) {
    EXPECT_TRUE(Results(*o).summary.status.ok());
  }
  *preemptions = (*engine)->stats().preemptions;
  EXPECT_EQ((*engine)->stats().state_slots.used, 0);
  EXPECT_EQ((*engine)->stats().kv_blocks.used, 0);
  return Results(*target);
}

TEST(CpuEngineDeterminismTest, AloneInABatchOf64AndAfterPreemption) {
  uint64_t preemptions;
  int max_rows;
  const CollectedResults alone =
      RunTarget(TinyEngineOptions(), 0, 0, 0, &preemptions, &max_rows);
  ASSERT_EQ(alone.completions.size(), 2u);
  EXPECT_EQ(alone.completions[0].token_ids.size(), 40u);
  EXPECT_NE(alone.completions[0].token_ids, alone.completions[1].token_ids);

  const CollectedResults batch =
      RunTarget(TinyEngineOptions(), 32, 32, 30, &preemptions, &max_rows);
  EXPECT_GE(max_rows, 60);  // decoded inside a batch of 60+ rows

  // 16 blocks of 16 tokens for 3 early requests (9 + 60 tokens) and the
  // target (45 + 40, n = 2): the newest (the target's completions) are
  // swapped out while the others grow, then swapped back in.
  EngineOptions tight = TinyEngineOptions();
  tight.num_kv_blocks = 16;
  tight.max_model_len = 128;
  const CollectedResults pre =
      RunTarget(tight, 3, 0, 60, &preemptions, &max_rows);
  EXPECT_GT(preemptions, 0u);
  int target_preemptions = 0;
  for (const CompletionResult& c : pre.completions) {
    target_preemptions += c.num_preemptions;
  }
  EXPECT_GT(target_preemptions, 0);

  for (int i = 0; i < 2; ++i) {
    const CompletionResult& a = alone.completions[i];
    for (const CollectedResults* other : {&batch, &pre}) {
      const CompletionResult& b = other->completions.at(i);
      EXPECT_EQ(a.token_ids, b.token_ids) << "completion " << i;
      EXPECT_EQ(a.logprobs, b.logprobs) << "completion " << i;  // bit-exact
      ASSERT_EQ(a.top_logprobs.size(), b.top_logprobs.size());
      for (size_t t = 0; t < a.top_logprobs.size(); ++t) {
        for (size_t k = 0; k < a.top_logprobs[t].size(); ++k) {
          EXPECT_EQ(a.top_logprobs[t][k].token_id,
                    b.top_logprobs[t][k].token_id);
          EXPECT_EQ(a.top_logprobs[t][k].logprob, b.top_logprobs[t][k].logprob);
        }
      }
    }
  }
}

}  // namespace
}  // namespace rollout::worker
