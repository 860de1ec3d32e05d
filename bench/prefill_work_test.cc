#include "bench/prefill_work.h"

#include "gtest/gtest.h"

namespace rollout::bench {
namespace {

// One sequence of one chunk at 16/32 heads, by hand: the Grams 16 x 2 x 64 x
// 64 x 128, the state products 32 x (128^3 + 64 x 64 x 128 + 128 x 128 x 64),
// the substitution 32 x 256 x 2016.
TEST(PrefillWorkTest, OneChunkByHand) {
  const PrefillWork w = TwoPassPrefillWork(16, 32, 1, 64);
  EXPECT_DOUBLE_EQ(
      w.tensor_macs,
      16.0 * 2 * 64 * 64 * 128 +
          32.0 * (128.0 * 128 * 128 + 64.0 * 64 * 128 + 128.0 * 128 * 64));
  EXPECT_DOUBLE_EQ(w.cuda_core_macs, 32.0 * 256 * 2016);
  // 64 tokens x ((32 + 32) x 256 + 128 + 8192) bytes, state 2 x 2 MiB,
  // scratch 2 x 64 x 32 x 1284.
  EXPECT_DOUBLE_EQ(w.io_bytes, 64.0 * (64 * 256 + 128 + 8192) + 2.0 * 2097152);
  EXPECT_DOUBLE_EQ(w.scratch_bytes, 2.0 * 64 * 32 * 1284);
}

// The products scale with the chunks (a partial chunk counts whole: the
// kernels run full tiles), the bytes with the tokens and sequences.
TEST(PrefillWorkTest, ScalesWithChunksTokensAndSequences) {
  const PrefillWork one = TwoPassPrefillWork(16, 16, 1, 64);
  const PrefillWork long_seq = TwoPassPrefillWork(16, 16, 1, 4096);
  const PrefillWork many = TwoPassPrefillWork(16, 16, 64, 256);
  const PrefillWork partial = TwoPassPrefillWork(16, 16, 1, 65);
  EXPECT_DOUBLE_EQ(long_seq.tensor_macs, 64 * one.tensor_macs);
  EXPECT_DOUBLE_EQ(many.tensor_macs, 256 * one.tensor_macs);
  EXPECT_DOUBLE_EQ(partial.tensor_macs, 2 * one.tensor_macs);
  EXPECT_DOUBLE_EQ(partial.cuda_core_macs, 2 * one.cuda_core_macs);
  EXPECT_DOUBLE_EQ(many.scratch_bytes, 256 * one.scratch_bytes);
  EXPECT_GT(many.io_bytes, long_seq.io_bytes);  // 63 more states
  EXPECT_LT(partial.io_bytes, 2 * one.io_bytes);
}

}  // namespace
}  // namespace rollout::bench
