#include "model/qwen3_next_layout.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model {
namespace {

TEST(Qwen3NextLayoutTest, QkvzRowsFollowTheKeyHeadGrouping) {
  GdnConfig g;
  g.num_k_heads = 2;
  g.num_v_heads = 6;  // r = 3
  g.head_k_dim = 4;
  g.head_v_dim = 5;
  const std::vector<int> rows = QkvzSourceRows(g);
  const int group = 2 * 4 + 2 * 3 * 5;  // 38 rows per key head
  ASSERT_EQ(rows.size(), 2u * group);
  // A permutation of the source rows.
  std::vector<int> sorted = rows;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> iota(rows.size());
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  // Q of key head 1 starts at the start of group 1; K of head 0 after q_0;
  // value head 3 (= group 1, j 0) starts after q_1, k_1 of group 1; Z last.
  EXPECT_EQ(rows[4], group + 0);        // Q row 4 = head 1, dim 0
  EXPECT_EQ(rows[8], 4);                // K row 0 = group 0 offset K
  EXPECT_EQ(rows[16 + 15], group + 8);  // V row 15 = value head 3, dim 0
  EXPECT_EQ(rows[16 + 30], 8 + 15);     // Z row 0 = group 0 after q,k,v
  EXPECT_EQ(rows.back(), 2 * group - 1);
}

TEST(Qwen3NextLayoutTest, BaRowsAreBThenAPerGroup) {
  GdnConfig g;
  g.num_k_heads = 2;
  g.num_v_heads = 4;  // r = 2: source [b0 b1 a0 a1 | b2 b3 a2 a3]
  g.head_k_dim = 1;
  g.head_v_dim = 1;
  EXPECT_EQ(BaSourceRows(g), (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
}

}  // namespace
}  // namespace rollout::model
