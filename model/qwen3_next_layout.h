// Qwen3-Next stores the GDN input projections fused and grouped per key head
// (gdn_replayssm.md section 1; transformers' fix_query_key_value_ordering):
//   in_proj_qkvz [2*key_dim + 2*value_dim, D]: for each key head g = 0..H-1
//       the rows [q_g (K) | k_g (K) | v_g (r*V) | z_g (r*V)]
//   in_proj_ba   [2*HV, D]: for each key head g the rows [b_g (r) | a_g (r)]
// with r = HV / H; value head g*r + j belongs to group g. The serving layout
// (Qwen3.5's) is [Q all heads | K all heads | V all heads] + Z, and b, a.
//
// These functions give, for every destination row of the serving layout, the
// source row of the fused tensor, so a loader can permute rows of any dtype.
#ifndef ROLLOUT_MODEL_QWEN3_NEXT_LAYOUT_H_
#define ROLLOUT_MODEL_QWEN3_NEXT_LAYOUT_H_

#include <vector>

#include "model/config.h"

namespace rollout::model {

// Destination rows [Q | K | V | Z] (conv_dim + value_dim rows) -> source row
// of in_proj_qkvz.
std::vector<int> QkvzSourceRows(const GdnConfig& gdn);

// Destination rows [b (HV) | a (HV)] -> source row of in_proj_ba.
std::vector<int> BaSourceRows(const GdnConfig& gdn);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_QWEN3_NEXT_LAYOUT_H_
