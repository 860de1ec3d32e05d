#include "gdn/prefill_chunk_map.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

// A varlen batch as the chunk pass sees it: cu_seqlens (absolute token
// offsets, cu[0] may be > 0) and the token count its scratch covers.
struct Batch {
  std::vector<int32_t> cu;
  int64_t num_tokens;
  int num_seqs() const { return static_cast<int>(cu.size()) - 1; }
};

// Every (seq, tok0) -> len chunk the pass must process, by a plain walk.
std::map<std::pair<int, int64_t>, int> ExpectedChunks(const Batch& b,
                                                      int chunk) {
  std::map<std::pair<int, int64_t>, int> out;
  for (int s = 0; s < b.num_seqs(); ++s) {
    const int64_t end = std::min<int64_t>(b.cu[s + 1], b.num_tokens);
    for (int64_t t = b.cu[s]; t < end; t += chunk) {
      out[{s, t}] = static_cast<int>(std::min<int64_t>(chunk, end - t));
    }
  }
  return out;
}

// Runs every id of the grid and checks that the spans taken are exactly the
// expected chunks, each once, and that ChunkSeq is the last s with f(s) <= x.
void ExpectExactCover(const Batch& b, int chunk) {
  const int n = b.num_seqs();
  const int64_t ids = ChunkIdCount(b.num_tokens, n, chunk);
  auto expected = ExpectedChunks(b, chunk);
  const size_t want = expected.size();
  size_t taken = 0;
  for (int x = 0; x < ids; ++x) {
    int last = 0;  // brute force: the last s with f(s) <= x, or 0
    for (int s = 0; s < n; ++s) {
      if (FirstChunkId(b.cu.data(), s, chunk) <= x) last = s;
    }
    ASSERT_EQ(ChunkSeq(b.cu.data(), n, x, chunk), last)
        << "x=" << x << " num_seqs=" << n << " chunk=" << chunk;
    const ChunkSpan span = ChunkSpanOf(b.cu.data(), n, b.num_tokens, x, chunk);
    if (span.len == 0) continue;
    ++taken;
    auto it = expected.find({span.seq, span.tok0});
    ASSERT_NE(it, expected.end())
        << "x=" << x << " took seq " << span.seq << " tok0 " << span.tok0
        << ", not a chunk (or taken twice)";
    EXPECT_EQ(span.len, it->second) << "x=" << x;
    expected.erase(it);
  }
  EXPECT_EQ(taken, want);
  EXPECT_TRUE(expected.empty())
      << expected.size() << " chunks left without a CTA, the first seq "
      << expected.begin()->first.first << " tok0 "
      << expected.begin()->first.second;
}

Batch RandomBatch(std::mt19937* rng, int num_seqs, int max_len, int32_t first,
                  bool truncate) {
  std::uniform_int_distribution<int> len(0, max_len);
  std::bernoulli_distribution empty(0.15);
  Batch b;
  b.cu.push_back(first);
  for (int s = 0; s < num_seqs; ++s) {
    b.cu.push_back(b.cu.back() + (empty(*rng) ? 0 : len(*rng)));
  }
  b.num_tokens = b.cu.back();
  if (truncate && b.num_tokens > first) {
    b.num_tokens =
        std::uniform_int_distribution<int64_t>(first, b.num_tokens)(*rng);
  }
  return b;
}

// Hand-made batches: one sequence, empty sequences (leading, inner,
// trailing), lengths at and around the chunk size, and cu_seqlens starting
// past token 0 (ids below f(0) must take nothing).
TEST(PrefillChunkMapTest, HandMadeBatches) {
  const std::vector<Batch> batches = {
      {{0, 4096}, 4096},
      {{0, 1}, 1},
      {{0, 0}, 0},
      {{0, 0, 0, 0}, 0},
      {{0, 63, 127, 191, 192, 256, 257}, 257},
      {{0, 0, 64, 64, 65, 65}, 65},
      {{100, 116, 164, 164, 517}, 517},
      {{100, 116, 164, 164, 517}, 600},  // scratch past the last sequence
      {{100, 116, 164, 164, 517}, 150},  // scratch ends inside sequence 1
      {{100, 116, 164, 164, 517}, 50},   // scratch ends before sequence 0
      {{64, 128}, 128},
      {{63, 64, 65}, 65},
  };
  for (const Batch& b : batches) {
    for (int chunk : {64, 1, 7}) {
      SCOPED_TRACE(::testing::Message() << "chunk " << chunk << " cu[0] "
                                        << b.cu[0] << " seqs " << b.num_seqs());
      ExpectExactCover(b, chunk);
    }
  }
}

// Random varlen batches over 1 to 3 search rounds (up to 32^2 + 1
// sequences), with and without a leading offset and a truncated scratch.
TEST(PrefillChunkMapTest, RandomBatches) {
  std::mt19937 rng(20261204);
  for (int num_seqs : {1, 2, 31, 32, 33, 100, 1023, 1024, 1025}) {
    for (int max_len : {3, 64, 300}) {
      for (int trial = 0; trial < 3; ++trial) {
        const int32_t first =
            trial == 0 ? 0 : std::uniform_int_distribution<int>(1, 500)(rng);
        const Batch b = RandomBatch(&rng, num_seqs, max_len, first, trial == 2);
        SCOPED_TRACE(::testing::Message()
                     << "seqs " << num_seqs << " max_len " << max_len
                     << " cu[0] " << first << " num_tokens " << b.num_tokens);
        ExpectExactCover(b, 64);
      }
    }
  }
}

}  // namespace
}  // namespace rollout::gdn
