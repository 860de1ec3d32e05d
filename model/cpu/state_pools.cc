#include "model/cpu/state_pools.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::model::cpu {

PoolSizes PoolSizes::For(const ModelConfig& c, int L, int block_size) {
  PoolSizes s;
  const GdnConfig& g = c.gdn;
  if (c.num_gdn_layers() > 0) {
    s.conv_floats = static_cast<int64_t>(g.conv_kernel - 1) * g.conv_dim();
    s.state_floats =
        static_cast<int64_t>(g.num_v_heads) * g.head_v_dim * g.head_k_dim;
    s.ring_layer_floats =
        static_cast<int64_t>(L) *
        (static_cast<int64_t>(g.num_k_heads) * g.head_k_dim +
         static_cast<int64_t>(g.num_v_heads) * g.head_v_dim + g.num_v_heads);
  }
  s.slot_floats = c.num_gdn_layers() * (s.conv_floats + s.state_floats);
  s.ring_floats = c.num_gdn_layers() * s.ring_layer_floats;
  if (c.num_attention_layers() > 0) {
    s.kv_token_floats =
        static_cast<int64_t>(c.attention.num_kv_heads) * c.attention.head_dim;
  }
  s.kv_block_floats =
      c.num_attention_layers() * 2 * s.kv_token_floats * block_size;
  return s;
}

absl::Status StatePools::Init(const ModelConfig& config,
                              const PoolConfig& pools) {
  RETURN_IF_ERROR(pools.Validate());
  const PoolSizes sizes =
      PoolSizes::For(config, pools.ring_length, pools.kv_block_size);
  const double total_floats =
      static_cast<double>(sizes.slot_floats) * pools.num_state_slots +
      static_cast<double>(sizes.ring_floats) * pools.num_ring_slots +
      static_cast<double>(sizes.kv_block_floats) * pools.num_kv_blocks;
  if (total_floats * sizeof(float) > 1e12) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "pools of ", total_floats * sizeof(float), " bytes requested"));
  }
  initialized_ = false;
  // Free the old pools before allocating the new ones.
  slots_ = {};
  rings_ = {};
  kv_ = {};
  slots_.assign(sizes.slot_floats * pools.num_state_slots, 0.0f);
  rings_.assign(sizes.ring_floats * pools.num_ring_slots, 0.0f);
  kv_.assign(sizes.kv_block_floats * pools.num_kv_blocks, 0.0f);
  pools_ = pools;
  sizes_ = sizes;
  initialized_ = true;
  return absl::OkStatus();
}

int64_t StatePools::bytes() const {
  return static_cast<int64_t>((slots_.size() + rings_.size() + kv_.size()) *
                              sizeof(float));
}

SequenceState StatePools::View(const ModelConfig& config, int state_slot,
                               int ring_slot,
                               absl::Span<const int32_t> kv_blocks) {
  SequenceState st;
  float* slot_base = slot(state_slot);
  float* ring_base = ring_slot >= 0 ? ring(ring_slot) : nullptr;
  const GdnConfig& g = config.gdn;
  const int L = pools_.ring_length;
  for (int i = 0; i < config.num_gdn_layers(); ++i) {
    GdnLayerState l;
    l.conv_state = slot_base + i * (sizes_.conv_floats + sizes_.state_floats);
    l.recurrent = l.conv_state + sizes_.conv_floats;
    if (ring_base != nullptr) {
      l.ring_k = ring_base + i * sizes_.ring_layer_floats;
      l.ring_d =
          l.ring_k + static_cast<int64_t>(g.num_k_heads) * L * g.head_k_dim;
      l.ring_g =
          l.ring_d + static_cast<int64_t>(g.num_v_heads) * L * g.head_v_dim;
    }
    st.gdn.push_back(l);
  }
  for (int i = 0; i < config.num_attention_layers(); ++i) {
    ops::PagedKv kv;
    kv.pool = kv_.data();
    kv.block_floats = sizes_.kv_block_floats;
    kv.layer_offset = static_cast<int64_t>(i) * 2 * pools_.kv_block_size *
                      sizes_.kv_token_floats;
    kv.block_size = pools_.kv_block_size;
    kv.num_kv_heads = config.attention.num_kv_heads;
    kv.head_dim = config.attention.head_dim;
    kv.blocks = kv_blocks;
    st.kv.push_back(kv);
  }
  if (ring_base != nullptr) st.replay.ring_length = L;
  return st;
}

}  // namespace rollout::model::cpu
