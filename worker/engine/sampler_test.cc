#include "worker/engine/sampler.h"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::worker {
namespace {

std::vector<double> Softmax(const std::vector<float>& logits, double t) {
  double max = -1e30;
  for (float x : logits) max = std::max(max, static_cast<double>(x));
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    p[i] = std::exp((logits[i] - max) / t);
    sum += p[i];
  }
  for (double& x : p) x /= sum;
  return p;
}

// Empirical frequencies of `draws` samples over steps 0..draws-1.
std::map<int32_t, int> Histogram(const std::vector<float>& logits,
                                 const SamplingParams& params, int draws,
                                 std::vector<int32_t> banned = {}) {
  std::map<int32_t, int> counts;
  for (int step = 0; step < draws; ++step) {
    SampleResult r =
        SampleToken(logits, params,
                    SampleKey{99, 0, static_cast<uint64_t>(step)}, banned, 0);
    ++counts[r.token];
  }
  return counts;
}

const std::vector<float> kLogits = {1.0f, 2.5f, 0.3f, -1.0f, 2.5f, 0.9f};

TEST(SamplerTest, GreedyIsArgmaxWithLowestIdOnTies) {
  SamplingParams p;
  p.temperature = 0.0f;
  for (uint64_t step = 0; step < 10; ++step) {
    EXPECT_EQ(SampleToken(kLogits, p, {1, 0, step}, {}, 0).token, 1);
  }
  // Masking the argmax moves greedy to the tied runner-up.
  EXPECT_EQ(SampleToken(kLogits, p, {1, 0, 0}, {1}, 0).token, 4);
}

TEST(SamplerTest, LogprobIsRawLogSoftmaxWhateverTheProcessing) {
  const std::vector<double> raw = Softmax(kLogits, 1.0);
  SamplingParams p;
  p.temperature = 0.3f;
  p.top_k = 2;
  p.top_p = 0.5f;
  for (uint64_t step = 0; step < 20; ++step) {
    SampleResult r = SampleToken(kLogits, p, {5, 1, step}, {}, 3);
    EXPECT_NEAR(r.logprob, std::log(raw[r.token]), 1e-6);
    ASSERT_EQ(r.top.size(), 3u);
    EXPECT_EQ(r.top[0].token_id, 1);  // ties: lower id first
    EXPECT_EQ(r.top[1].token_id, 4);
    EXPECT_EQ(r.top[2].token_id, 0);
    EXPECT_NEAR(r.top[2].logprob, std::log(raw[0]), 1e-6);
  }
}

TEST(SamplerTest, DeterministicPerKey) {
  SamplingParams p;
  p.temperature = 1.0f;
  std::set<int32_t> seen;
  for (uint64_t step = 0; step < 200; ++step) {
    const int32_t a = SampleToken(kLogits, p, {7, 3, step}, {}, 0).token;
    const int32_t b = SampleToken(kLogits, p, {7, 3, step}, {}, 0).token;
    EXPECT_EQ(a, b);
    seen.insert(a);
  }
  EXPECT_GE(seen.size(), 5u);  // actually random across steps
}

TEST(SamplerTest, MatchesSoftmaxAtTemperature) {
  SamplingParams p;
  p.temperature = 0.7f;
  const int draws = 40000;
  const std::vector<double> expect = Softmax(kLogits, 0.7);
  std::map<int32_t, int> counts = Histogram(kLogits, p, draws);
  for (size_t i = 0; i < kLogits.size(); ++i) {
    const double freq = static_cast<double>(counts[i]) / draws;
    const double sd = std::sqrt(expect[i] * (1 - expect[i]) / draws);
    EXPECT_NEAR(freq, expect[i], 5 * sd + 1e-4) << "token " << i;
  }
}

TEST(SamplerTest, TopKKeepsOnlyTheKBest) {
  SamplingParams p;
  p.top_k = 3;  // ids 1, 4 (tied best) and 0
  std::map<int32_t, int> counts = Histogram(kLogits, p, 5000);
  for (const auto& [token, count] : counts) {
    EXPECT_TRUE(token == 1 || token == 4 || token == 0) << token;
  }
  // Renormalised over the three: p(0) = e^1 / (e^1 + 2 e^2.5).
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 2 * std::exp(2.5));
  EXPECT_NEAR(counts[0] / 5000.0, p0, 0.02);
}

TEST(SamplerTest, TopPKeepsTheNucleus) {
  // Probabilities ~ {0.6, 0.3, 0.1}: top_p 0.8 keeps the first two.
  const std::vector<float> logits = {std::log(0.6f), std::log(0.3f),
                                     std::log(0.1f)};
  SamplingParams p;
  p.top_p = 0.8f;
  std::map<int32_t, int> counts = Histogram(logits, p, 6000);
  EXPECT_EQ(counts.count(2), 0u);
  EXPECT_NEAR(counts[0] / 6000.0, 2.0 / 3.0, 0.03);
  p.top_p = 0.5f;  // only the most likely token
  counts = Histogram(logits, p, 200);
  EXPECT_EQ(counts[0], 200);
}

TEST(SamplerTest, MinPDropsUnlikelyTokens) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f),
                                     std::log(0.15f), std::log(0.05f)};
  SamplingParams p;
  p.min_p = 0.2f;  // keep p >= 0.1: ids 0, 1, 2
  std::map<int32_t, int> counts = Histogram(logits, p, 6000);
  EXPECT_EQ(counts.count(3), 0u);
  EXPECT_GT(counts[2], 0);
}

TEST(SamplerTest, BannedTokensAreNeverSampled) {
  SamplingParams p;
  p.temperature = 2.0f;
  std::map<int32_t, int> counts = Histogram(kLogits, p, 3000, {1, 4});
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_EQ(counts.count(4), 0u);
  // Banning everything ignores the mask rather than failing.
  SampleResult r = SampleToken(kLogits, p, {1, 0, 0}, {0, 1, 2, 3, 4, 5}, 0);
  EXPECT_GE(r.token, 0);
  EXPECT_LT(r.token, 6);
}

TEST(SamplerTest, TopKWithMaskedTokensStillSamplesAllowedOnes) {
  SamplingParams p;
  p.top_k = 2;
  std::map<int32_t, int> counts = Histogram(kLogits, p, 2000, {1});
  // Best allowed two: 4 and 0.
  for (const auto& [token, count] : counts) {
    EXPECT_TRUE(token == 4 || token == 0) << token;
  }
}

TEST(SamplerTest, LogSumExpIsStable) {
  const std::vector<float> big = {1000.0f, 1000.0f};
  EXPECT_NEAR(LogSumExp(big), 1000.0 + std::log(2.0), 1e-9);
}

}  // namespace
}  // namespace rollout::worker
