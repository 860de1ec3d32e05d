// The Executor (engine thread + streams) over the real CPU backend: what the
// worker process serves. Concurrent clients get golden greedy continuations
// and a GRPO group computes its prompt once.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/cpu/cpu_backend.h"
#include "tests/engine/cpu_engine_util.h"
#include "worker/engine/executor.h"

namespace rollout::worker {
namespace {

TEST(CpuExecutorTest, ConcurrentClientsGetGoldenContinuations) {
  const std::string dir = "tests/data/tiny_qwen3_5_moe";
  absl::StatusOr<Golden> golden = LoadGolden(dir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  model::cpu::CpuBackendOptions bo;
  bo.num_threads = 2;
  auto backend = model::cpu::CpuBackend::Create(dir, bo);
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto exec = Executor::Create(*std::move(backend), TinyEngineOptions());
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->info().capabilities.name, "cpu");

  const int np = static_cast<int>(golden->prompts.size());
  std::vector<std::thread> clients;
  for (int i = 0; i < np; ++i) {
    clients.emplace_back([&, i] {
      GroupRequest r;
      r.request_id = absl::StrCat("greedy", i);
      r.prompt = golden->prompts[i];
      r.n = 2;
      r.sampling.temperature = 0.0f;
      r.sampling.max_tokens = static_cast<int>(golden->greedy_tokens[i].size());
      r.sampling.ignore_eos = true;
      r.replay_ssm = i % 2 == 0 ? ReplayMode::kOn : ReplayMode::kOff;
      auto stream = (*exec)->Enqueue(std::move(r));
      ASSERT_TRUE(stream.ok()) << stream.status();
      absl::StatusOr<CollectedResults> res =
          CollectAll(**stream, absl::Minutes(2));
      ASSERT_TRUE(res.ok()) << res.status();
      EXPECT_EQ(res->summary.prompt_tokens_computed,
                static_cast<int>(golden->prompts[i].size()));
      for (const CompletionResult& c : res->completions) {
        EXPECT_EQ(c.token_ids, golden->greedy_tokens[i]) << "prompt " << i;
        EXPECT_EQ(c.weight_versions.at(0).version, 0);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  (*exec)->Shutdown(ShutdownMode::kDrain);
  const EngineStats st = (*exec)->Stats();
  EXPECT_EQ(st.groups_finished, static_cast<uint64_t>(np));
  EXPECT_EQ(st.state_forks, static_cast<uint64_t>(np));  // one copy per n=2
  EXPECT_EQ(st.state_slots.used, 0);
  EXPECT_GT(st.device_peak_bytes, 0);
  EXPECT_GT(st.generation_tokens_ring, 0u);
  EXPECT_GT(st.generation_tokens_plain, 0u);
}

}  // namespace
}  // namespace rollout::worker
