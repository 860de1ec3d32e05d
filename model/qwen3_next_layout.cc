#include "model/qwen3_next_layout.h"

namespace rollout::model {

std::vector<int> QkvzSourceRows(const GdnConfig& gdn) {
  const int H = gdn.num_k_heads, K = gdn.head_k_dim, V = gdn.head_v_dim;
  const int r = gdn.num_v_heads / H;
  const int group = 2 * K + 2 * r * V;  // rows per key head in the source
  std::vector<int> rows;
  rows.reserve(static_cast<size_t>(H) * group);
  // Offsets of q_g, k_g, v_g, z_g inside group g.
  const int offsets[4] = {0, K, 2 * K, 2 * K + r * V};
  const int sizes[4] = {K, K, r * V, r * V};
  for (int part = 0; part < 4; ++part) {
    for (int g = 0; g < H; ++g) {
      for (int i = 0; i < sizes[part]; ++i) {
        rows.push_back(g * group + offsets[part] + i);
      }
    }
  }
  return rows;
}

std::vector<int> BaSourceRows(const GdnConfig& gdn) {
  const int H = gdn.num_k_heads;
  const int r = gdn.num_v_heads / H;
  std::vector<int> rows;
  rows.reserve(static_cast<size_t>(2) * H * r);
  for (int part = 0; part < 2; ++part) {  // b, then a
    for (int g = 0; g < H; ++g) {
      for (int j = 0; j < r; ++j) rows.push_back(g * 2 * r + part * r + j);
    }
  }
  return rows;
}

}  // namespace rollout::model
