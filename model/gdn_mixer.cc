#include "model/gdn_mixer.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/ops/linear.h"
#include "model/ops/norm.h"

namespace rollout::model {
namespace {

// Copies columns [col, col + n) of the rows of a [T, width] matrix.
std::vector<float> Columns(const float* m, int T, int width, int col, int n) {
  std::vector<float> out(static_cast<size_t>(T) * n);
  for (int t = 0; t < T; ++t) {
    std::copy_n(m + static_cast<size_t>(t) * width + col, n,
                out.data() + static_cast<size_t>(t) * n);
  }
  return out;
}

}  // namespace

gdn::GdnDims ToGdnDims(const GdnConfig& g) {
  gdn::GdnDims d;
  d.num_k_heads = g.num_k_heads;
  d.num_v_heads = g.num_v_heads;
  d.head_k_dim = g.head_k_dim;
  d.head_v_dim = g.head_v_dim;
  d.conv_kernel = g.conv_kernel;
  return d;
}

bool GdnMixer(const ModelConfig& config, const GdnWeights& w, const float* x,
              int T, const ReplayArgs& replay, GdnLayerState& state, float* out,
              ops::ThreadPool* pool) {
  const gdn::GdnDims dims = ToGdnDims(config.gdn);
  const int D = config.hidden_size;
  const int H = dims.num_k_heads, HV = dims.num_v_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim, r = HV / H;
  const int C = dims.conv_dim(), VD = dims.value_dim();
  const int width = C + VD + 2 * HV;

  std::vector<float> proj(static_cast<size_t>(T) * width);  // [T, C+VD+2HV]
  ops::Linear(x, T, D, w.in_proj.data(), width, proj.data());
  std::vector<float> mixed = Columns(proj.data(), T, width, 0, C);    // [T, C]
  std::vector<float> z = Columns(proj.data(), T, width, C, VD);       // [T, VD]
  std::vector<float> b = Columns(proj.data(), T, width, C + VD, HV);  // [T,HV]
  std::vector<float> a =
      Columns(proj.data(), T, width, C + VD + HV, HV);  // [T, HV]

  std::vector<float> conv(static_cast<size_t>(T) * C);  // [T, C]
  gdn::CausalConv(dims, w.conv.data(), mixed.data(), T, state.conv_state,
                  conv.data());
  std::vector<float> q(static_cast<size_t>(T) * H * K);   // [T, H, K]
  std::vector<float> k(static_cast<size_t>(T) * H * K);   // [T, H, K]
  std::vector<float> v(static_cast<size_t>(T) * HV * V);  // [T, HV, V]
  std::vector<float> g(static_cast<size_t>(T) * HV);      // [T, HV]
  std::vector<float> beta(static_cast<size_t>(T) * HV);   // [T, HV]
  for (int t = 0; t < T; ++t) {
    gdn::PrepareQkv(dims, conv.data() + static_cast<size_t>(t) * C,
                    q.data() + static_cast<size_t>(t) * H * K,
                    k.data() + static_cast<size_t>(t) * H * K,
                    v.data() + static_cast<size_t>(t) * HV * V);
    gdn::Gates(HV, a.data() + static_cast<size_t>(t) * HV,
               b.data() + static_cast<size_t>(t) * HV, w.A_log.data(),
               w.dt_bias.data(), g.data() + static_cast<size_t>(t) * HV,
               beta.data() + static_cast<size_t>(t) * HV);
  }

  // Recurrence per key-head group: key head j and value heads j*r .. j*r+r-1.
  gdn::GdnDims group_dims = dims;
  group_dims.num_k_heads = 1;
  group_dims.num_v_heads = r;
  std::vector<float> o(static_cast<size_t>(T) * HV * V);  // [T, HV, V]
  std::vector<char> flushed(H, 0);
  const int L = replay.ring_length;
  ops::ParallelFor(pool, H, [&](int j) {
    float* S = state.recurrent + static_cast<size_t>(j) * r * V * K;
    if (L > 0 && (replay.force_flush || replay.write_pos == L - 1)) {
      // Flush: fold the live entries into the checkpoint (S_{t-1}), then the
      // same one-token step as a plain row below, so a flush computes exactly
      // what an OFF row computes from that state (L == 1 is bit-identical to
      // OFF). The ring is empty afterwards; nothing is appended.
      gdn::ReplayFold(group_dims, L, replay.write_pos, S,
                      state.ring_k + static_cast<size_t>(j) * L * K,
                      state.ring_d + static_cast<size_t>(j) * r * L * V,
                      state.ring_g + static_cast<size_t>(j) * r * L);
      flushed[j] = 1;
    } else if (L > 0) {
      // Non-flush ring step: the history route, checkpoint untouched. One
      // token: the group's slices are contiguous.
      gdn::ReplayStep(group_dims, L, replay.write_pos, /*force_flush=*/false,
                      q.data() + static_cast<size_t>(j) * K,
                      k.data() + static_cast<size_t>(j) * K,
                      v.data() + static_cast<size_t>(j) * r * V,
                      g.data() + static_cast<size_t>(j) * r,
                      beta.data() + static_cast<size_t>(j) * r, S,
                      state.ring_k + static_cast<size_t>(j) * L * K,
                      state.ring_d + static_cast<size_t>(j) * r * L * V,
                      state.ring_g + static_cast<size_t>(j) * r * L,
                      o.data() + static_cast<size_t>(j) * r * V);
      return;
    }
    // Plain rows (prefill chunks, OFF decode rows) and ring flush steps.
    // Gather the group's [T, ...] slices.
    std::vector<float> qg(static_cast<size_t>(T) * K),
        kg(static_cast<size_t>(T) * K), vg(static_cast<size_t>(T) * r * V),
        gg(static_cast<size_t>(T) * r), bg(static_cast<size_t>(T) * r),
        og(static_cast<size_t>(T) * r * V);
    for (int t = 0; t < T; ++t) {
      std::copy_n(q.data() + (static_cast<size_t>(t) * H + j) * K, K,
                  qg.data() + static_cast<size_t>(t) * K);
      std::copy_n(k.data() + (static_cast<size_t>(t) * H + j) * K, K,
                  kg.data() + static_cast<size_t>(t) * K);
      std::copy_n(v.data() + (static_cast<size_t>(t) * HV + j * r) * V, r * V,
                  vg.data() + static_cast<size_t>(t) * r * V);
      std::copy_n(g.data() + static_cast<size_t>(t) * HV + j * r, r,
                  gg.data() + static_cast<size_t>(t) * r);
      std::copy_n(beta.data() + static_cast<size_t>(t) * HV + j * r, r,
                  bg.data() + static_cast<size_t>(t) * r);
    }
    // The chunked form accumulates in double and rounds the fp32 state once
    // per call, also for one token (chunk 1): the decode step then carries
    // less rounding noise than the fp32 token loop (RecurrentForward), and
    // ReplaySSM ON rows (history route in double) stay well within 1e-5 of
    // OFF rows in the logits (the token loop alone reached ~1.1e-5 on the
    // tiny MoE model).
    gdn::ChunkedForward(group_dims, T, qg.data(), kg.data(), vg.data(),
                        gg.data(), bg.data(), S, og.data(),
                        /*chunk=*/T == 1 ? 1 : 64);
    for (int t = 0; t < T; ++t) {
      std::copy_n(og.data() + static_cast<size_t>(t) * r * V, r * V,
                  o.data() + (static_cast<size_t>(t) * HV + j * r) * V);
    }
  });

  // Gated RMSNorm per (token, value head) over V, then out_proj.
  ops::GatedRmsNorm(o.data(), z.data(), w.norm.data(), T * HV, V,
                    static_cast<float>(config.rms_norm_eps), o.data());
  ops::Linear(o.data(), T, VD, w.out_proj.data(), D, out);
  return L > 0 && flushed[0] != 0;
}

}  // namespace rollout::model
