// Helpers for the engine tests over the real CPU backend and the tiny
// checkpoints of tests/data (goldens made by transformers, make_golden.py).
#ifndef ROLLOUT_TESTS_ENGINE_CPU_ENGINE_UTIL_H_
#define ROLLOUT_TESTS_ENGINE_CPU_ENGINE_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/engine/engine.h"
#include "worker/engine/result_stream.h"

namespace rollout::worker {

struct Golden {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<int32_t>> greedy_tokens;  // [N]
  std::vector<std::vector<float>> greedy_logits;    // [N * V]
};

// Reads tests/data/<model>/golden.safetensors.
absl::StatusOr<Golden> LoadGolden(const std::string& model_dir);

// Engine options sized for the tiny models (chunked prefill on).
EngineOptions TinyEngineOptions();

// An engine over a CpuBackend of `checkpoint_dir`.
absl::StatusOr<std::unique_ptr<Engine>> MakeCpuEngine(
    const std::string& checkpoint_dir, EngineOptions options);

// Submits to the engine; results collect in the returned channel.
std::shared_ptr<ResultChannel> SubmitOrDie(Engine& engine, GroupRequest r);
// Steps until idle.
void RunToIdle(Engine& engine);
// The results of a finished request.
CollectedResults Results(ResultChannel& channel);

// log_softmax(logits)[token] in double.
double LogSoftmaxAt(const float* logits, int vocab, int32_t token);

// Greedy continuations (kGoldenNewTokens tokens, EOS ignored as in the
// goldens) of every golden prompt, for one run.
constexpr int kGoldenNewTokens = 40;
struct GreedyCompletions {
  std::vector<std::vector<int32_t>> tokens;  // [prompt][kGoldenNewTokens]
  std::vector<std::vector<float>> logprobs;  // [prompt][kGoldenNewTokens]
  std::vector<bool> replay_applied;          // [prompt]
};

// One engine over `checkpoint_dir` with `options`; one request per (prompt,
// mode), all submitted before the first step so that they decode together.
// Returns one GreedyCompletions per entry of `modes` (empty on a failed
// engine start, which is reported as a test failure).
std::vector<GreedyCompletions> RunGreedyGolden(
    const std::string& checkpoint_dir, const Golden& golden,
    EngineOptions options, const std::vector<ReplayMode>& modes);

// Largest |logprob difference| over all prompts and tokens of two runs.
double MaxLogprobDiff(const GreedyCompletions& a, const GreedyCompletions& b);

}  // namespace rollout::worker

#endif  // ROLLOUT_TESTS_ENGINE_CPU_ENGINE_UTIL_H_
