#include "tests/engine/cpu_engine_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "model/cpu/cpu_backend.h"
#include "model/safetensors.h"

namespace rollout::worker {
namespace {

template <typename T>
absl::StatusOr<std::vector<T>> ReadTensor(const model::SafetensorsFile& f,
                                          const std::string& name,
                                          model::Dtype dtype) {
  const model::TensorInfo* t = f.header().Find(name);
  if (t == nullptr) return absl::NotFoundError(name);
  if (t->dtype != dtype) return absl::InvalidArgumentError(name + " dtype");
  std::vector<T> out(t->numel());
  std::memcpy(out.data(), f.Bytes(*t).data(), t->nbytes());
  return out;
}

}  // namespace

absl::StatusOr<Golden> LoadGolden(const std::string& dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<model::SafetensorsFile> f,
                   model::SafetensorsFile::Open(dir + "/golden.safetensors"));
  Golden g;
  for (int i = 0; f->header().Find("prompt_" + std::to_string(i)); ++i) {
    const std::string s = std::to_string(i);
    ASSIGN_OR_RETURN(
        std::vector<int32_t> p,
        ReadTensor<int32_t>(*f, "prompt_" + s, model::Dtype::kI32));
    ASSIGN_OR_RETURN(
        std::vector<int32_t> t,
        ReadTensor<int32_t>(*f, "greedy_tokens_" + s, model::Dtype::kI32));
    ASSIGN_OR_RETURN(
        std::vector<float> l,
        ReadTensor<float>(*f, "greedy_logits_" + s, model::Dtype::kF32));
    g.prompts.push_back(std::move(p));
    g.greedy_tokens.push_back(std::move(t));
    g.greedy_logits.push_back(std::move(l));
  }
  if (g.prompts.empty()) return absl::NotFoundError("no golden prompts");
  return g;
}

EngineOptions TinyEngineOptions() {
  EngineOptions o;
  o.max_num_seqs = 80;
  o.kv_block_size = 16;
  o.max_model_len = 512;
  o.max_batch_tokens = 512;
  o.prefill_chunk_tokens = 32;  // the 67- and 131-token prompts are chunked
  o.memory_budget_bytes = int64_t{1} << 30;
  o.replay.ring_length = 16;
  o.replay.default_mode = ReplayMode::kOff;
  return o;
}

absl::StatusOr<std::unique_ptr<Engine>> MakeCpuEngine(const std::string& dir,
                                                      EngineOptions options) {
  model::cpu::CpuBackendOptions bo;
  bo.num_threads = 2;
  ASSIGN_OR_RETURN(std::unique_ptr<model::cpu::CpuBackend> backend,
                   model::cpu::CpuBackend::Create(dir, bo));
  return Engine::Create(std::move(backend), std::move(options));
}

std::shared_ptr<ResultChannel> SubmitOrDie(Engine& engine, GroupRequest r) {
  auto ch = std::make_shared<ResultChannel>(r.request_id, r.n);
  absl::Status s = engine.Submit(std::move(r), ch);
  EXPECT_TRUE(s.ok()) << s;
  return ch;
}

void RunToIdle(Engine& engine) {
  for (int i = 0; i < 1000000 && engine.HasWork(); ++i) {
    absl::Status s = engine.Step();
    ASSERT_TRUE(s.ok()) << s;
  }
}

CollectedResults Results(ResultChannel& channel) {
  EXPECT_TRUE(channel.closed());
  ResultStream stream(
      std::shared_ptr<ResultChannel>(&channel, [](ResultChannel*) {}), nullptr);
  absl::StatusOr<CollectedResults> r = CollectAll(stream, absl::Seconds(1));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CollectedResults{};
}

double LogSoftmaxAt(const float* logits, int vocab, int32_t token) {
  double max = logits[0];
  for (int i = 1; i < vocab; ++i) max = std::max(max, double{logits[i]});
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(double{logits[i]} - max);
  return double{logits[token]} - max - std::log(sum);
}

std::vector<GreedyCompletions> RunGreedyGolden(
    const std::string& checkpoint_dir, const Golden& golden,
    EngineOptions options, const std::vector<ReplayMode>& modes) {
  auto engine = MakeCpuEngine(checkpoint_dir, std::move(options));
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  std::vector<std::vector<std::shared_ptr<ResultChannel>>> channels(
      modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    for (size_t i = 0; i < golden.prompts.size(); ++i) {
      GroupRequest r;
      r.request_id = absl::StrCat(ReplayModeName(modes[m]), m, "_", i);
      r.prompt = golden.prompts[i];
      r.n = 1;
      r.sampling.temperature = 0.0f;
      r.sampling.max_tokens = kGoldenNewTokens;
      r.sampling.ignore_eos = true;
      r.replay_ssm = modes[m];
      channels[m].push_back(SubmitOrDie(**engine, std::move(r)));
    }
  }
  RunToIdle(**engine);
  std::vector<GreedyCompletions> out(modes.size());
  for (size_t m = 0; m < modes.size(); ++m) {
    for (auto& ch : channels[m]) {
      CompletionResult c = Results(*ch).completions.at(0);
      out[m].tokens.push_back(c.token_ids);
      out[m].logprobs.push_back(c.logprobs);
      out[m].replay_applied.push_back(c.replay_ssm.applied);
    }
  }
  return out;
}

double MaxLogprobDiff(const GreedyCompletions& a, const GreedyCompletions& b) {
  double worst = 0;
  for (size_t i = 0; i < a.logprobs.size(); ++i) {
    for (size_t t = 0; t < a.logprobs[i].size(); ++t) {
      worst = std::max(worst,
                       double{std::fabs(a.logprobs[i][t] - b.logprobs[i][t])});
    }
  }
  return worst;
}

}  // namespace rollout::worker
