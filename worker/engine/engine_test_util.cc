#include "worker/engine/engine_test_util.h"

#include <utility>

#include "gtest/gtest.h"
#include "worker/engine/sampler.h"

namespace rollout::worker {

EngineOptions SmallEngineOptions() {
  EngineOptions o;
  o.max_num_seqs = 16;
  o.kv_block_size = 4;
  o.max_model_len = 256;
  o.max_batch_tokens = 64;
  o.prefill_chunk_tokens = 16;
  o.memory_budget_bytes = int64_t{1} << 26;
  o.replay.ring_length = 8;
  o.replay.auto_min_batch = 4;
  return o;
}

EngineHarness::EngineHarness(FakeBackendOptions fake_options,
                             EngineOptions options, Engine::Clock clock) {
  auto fake = std::make_unique<FakeBackend>(std::move(fake_options));
  fake_ = fake.get();
  absl::StatusOr<std::unique_ptr<Engine>> e =
      Engine::Create(std::move(fake), std::move(options), std::move(clock));
  EXPECT_TRUE(e.ok()) << e.status();
  engine_ = std::move(*e);
  engine_->set_step_observer(
      [this](const StepTrace& t) { traces_.push_back(t); });
}

std::shared_ptr<ResultChannel> EngineHarness::Submit(GroupRequest request) {
  auto ch = std::make_shared<ResultChannel>(request.request_id, request.n);
  absl::Status s = engine_->Submit(std::move(request), ch);
  EXPECT_TRUE(s.ok()) << s;
  return ch;
}

std::shared_ptr<ResultChannel> EngineHarness::SubmitScore(
    ScoreRequest request) {
  auto ch = std::make_shared<ResultChannel>(
      request.request_id, static_cast<int>(request.completions.size()));
  absl::Status s = engine_->SubmitScore(std::move(request), ch);
  EXPECT_TRUE(s.ok()) << s;
  return ch;
}

void EngineHarness::Run(int max_steps) {
  for (int i = 0; i < max_steps && engine_->HasWork(); ++i) {
    absl::Status s = engine_->Step();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_FALSE(engine_->HasWork()) << "still busy after " << max_steps;
}

void EngineHarness::Steps(int steps) {
  for (int i = 0; i < steps; ++i) {
    absl::Status s = engine_->Step();
    ASSERT_TRUE(s.ok()) << s;
  }
}

CollectedResults EngineHarness::Drain(ResultChannel& channel) {
  EXPECT_TRUE(channel.closed()) << channel.request_id() << " not finished";
  ResultStream stream(
      std::shared_ptr<ResultChannel>(&channel, [](ResultChannel*) {}), nullptr);
  absl::StatusOr<CollectedResults> r = CollectAll(stream, absl::Seconds(1));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CollectedResults{};
}

namespace {

// Feeds one sequence through a fresh fake; returns the logits after each of
// `tokens` fed after the prompt (the first row: after the prompt).
class Reference {
 public:
  explicit Reference(const FakeBackendOptions& options) : fake_(options) {
    model::PoolConfig pools;
    pools.num_state_slots = 1;
    pools.num_ring_slots = 0;
    pools.kv_block_size = 1024;
    pools.num_kv_blocks = 8;
    EXPECT_TRUE(fake_.InitPools(pools).ok());
    EXPECT_TRUE(fake_.ResetState(0).ok());
  }
  std::vector<float> Feed(const std::vector<int32_t>& tokens) {
    model::ForwardBatch b;
    model::ForwardRow r;
    r.tokens = tokens;
    r.start_pos = pos_;
    r.state_slot = 0;
    r.kv_blocks = blocks_;
    b.rows.push_back(r);
    model::ForwardOutput out;
    absl::Status s = fake_.Forward(b, &out);
    EXPECT_TRUE(s.ok()) << s;
    pos_ += static_cast<int>(tokens.size());
    return out.logits;
  }

 private:
  FakeBackend fake_;
  int pos_ = 0;
  std::vector<int32_t> blocks_ = {0, 1, 2, 3, 4, 5, 6, 7};
};

}  // namespace

std::vector<float> ReferenceLogprobs(const FakeBackendOptions& options,
                                     const std::vector<int32_t>& prompt,
                                     const std::vector<int32_t>& tokens) {
  Reference ref(options);
  std::vector<float> logits = ref.Feed(prompt);
  std::vector<float> out;
  for (int32_t t : tokens) {
    out.push_back(RawLogprob(logits, t, LogSumExp(logits)));
    logits = ref.Feed({t});
  }
  return out;
}

std::vector<int32_t> ReferenceGreedy(const FakeBackendOptions& options,
                                     const std::vector<int32_t>& prompt,
                                     int max_tokens, bool stop_at_eos) {
  Reference ref(options);
  std::vector<float> logits = ref.Feed(prompt);
  std::vector<int32_t> out;
  for (int i = 0; i < max_tokens; ++i) {
    int32_t best = 0;
    for (int32_t v = 1; v < static_cast<int32_t>(logits.size()); ++v) {
      if (logits[v] > logits[best]) best = v;
    }
    out.push_back(best);
    if (stop_at_eos &&
        std::find(options.eos_token_ids.begin(), options.eos_token_ids.end(),
                  best) != options.eos_token_ids.end()) {
      break;
    }
    logits = ref.Feed({best});
  }
  return out;
}

GroupRequest MakeRequest(const std::string& id, std::vector<int32_t> prompt,
                         int n, int max_tokens, float temperature,
                         uint64_t seed) {
  GroupRequest r;
  r.request_id = id;
  r.prompt = std::move(prompt);
  r.n = n;
  r.sampling.max_tokens = max_tokens;
  r.sampling.temperature = temperature;
  r.sampling.seed = seed;
  return r;
}

}  // namespace rollout::worker
