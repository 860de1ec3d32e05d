// Test helpers: an Engine over a FakeBackend driven synchronously, and a
// reference run of the fake model for one sequence (what a correct engine
// must reproduce whatever the batching, forking, ring use or preemption).
#ifndef ROLLOUT_WORKER_ENGINE_ENGINE_TEST_UTIL_H_
#define ROLLOUT_WORKER_ENGINE_ENGINE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "worker/engine/engine.h"
#include "worker/engine/fake_backend.h"
#include "worker/engine/result_stream.h"

namespace rollout::worker {

// Small pools that fit the fake model.
EngineOptions SmallEngineOptions();

class EngineHarness {
 public:
  EngineHarness(FakeBackendOptions fake_options, EngineOptions options,
                Engine::Clock clock = nullptr);

  Engine& engine() { return *engine_; }
  FakeBackend& fake() { return *fake_; }
  const std::vector<StepTrace>& traces() const { return traces_; }

  // Submits; the channel collects the results.
  std::shared_ptr<ResultChannel> Submit(GroupRequest request);
  std::shared_ptr<ResultChannel> SubmitScore(ScoreRequest request);
  // Steps until no work is left (fails the test after max_steps).
  void Run(int max_steps = 100000);
  void Steps(int steps);

  // Everything the channel received (the request must be finished).
  static CollectedResults Drain(ResultChannel& channel);

 private:
  FakeBackend* fake_;  // owned by engine_
  std::unique_ptr<Engine> engine_;
  std::vector<StepTrace> traces_;
};

// Raw logprobs of `tokens` after `prompt` from a fresh fake with the same
// options and weights seed, one sequence, one token at a time.
std::vector<float> ReferenceLogprobs(const FakeBackendOptions& options,
                                     const std::vector<int32_t>& prompt,
                                     const std::vector<int32_t>& tokens);
// Greedy continuation of `prompt` by the fake (ties -> lowest id).
std::vector<int32_t> ReferenceGreedy(const FakeBackendOptions& options,
                                     const std::vector<int32_t>& prompt,
                                     int max_tokens, bool stop_at_eos);

GroupRequest MakeRequest(const std::string& id, std::vector<int32_t> prompt,
                         int n, int max_tokens, float temperature,
                         uint64_t seed);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_ENGINE_TEST_UTIL_H_
