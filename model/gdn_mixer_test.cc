#include "model/gdn_mixer.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "model/ops/linear.h"
#include "model/ops/norm.h"

namespace rollout::model {
namespace {

// H = 2 key heads, r = 3 value heads each; odd sizes.
ModelConfig Config() {
  ModelConfig c;
  c.hidden_size = 13;
  c.rms_norm_eps = 1e-6;
  c.gdn.num_k_heads = 2;
  c.gdn.num_v_heads = 6;
  c.gdn.head_k_dim = 5;
  c.gdn.head_v_dim = 3;
  c.gdn.conv_kernel = 4;
  return c;
}

GdnWeights RandomWeights(const ModelConfig& c, std::mt19937& rng) {
  std::normal_distribution<float> d;
  auto fill = [&](size_t n, float s) {
    std::vector<float> v(n);
    for (float& x : v) x = s * d(rng);
    return v;
  };
  const GdnConfig& g = c.gdn;
  const int D = c.hidden_size, C = g.conv_dim(), VD = g.value_dim();
  GdnWeights w;
  w.in_proj = fill(static_cast<size_t>(C + VD + 2 * g.num_v_heads) * D, 0.3f);
  w.conv = fill(static_cast<size_t>(C) * g.conv_kernel, 0.3f);
  w.A_log = fill(g.num_v_heads, 0.5f);
  w.dt_bias = fill(g.num_v_heads, 0.5f);
  w.norm = fill(g.head_v_dim, 0.1f);
  for (float& x : w.norm) x += 1.0f;
  w.out_proj = fill(static_cast<size_t>(D) * VD, 0.3f);
  return w;
}

// The whole-layer reference: the same steps with one call over all heads.
void Reference(const ModelConfig& c, const GdnWeights& w, const float* x, int T,
               std::vector<float>& conv_state, std::vector<float>& S,
               float* out) {
  const gdn::GdnDims dims = ToGdnDims(c.gdn);
  const int D = c.hidden_size, C = dims.conv_dim(), VD = dims.value_dim();
  const int HV = dims.num_v_heads, H = dims.num_k_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim;
  const int width = C + VD + 2 * HV;
  std::vector<float> proj(T * width);
  ops::Linear(x, T, D, w.in_proj.data(), width, proj.data());
  std::vector<float> mixed(T * C), z(T * VD), a(T * HV), b(T * HV);
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < C; ++i) mixed[t * C + i] = proj[t * width + i];
    for (int i = 0; i < VD; ++i) z[t * VD + i] = proj[t * width + C + i];
    for (int i = 0; i < HV; ++i) {
      b[t * HV + i] = proj[t * width + C + VD + i];
      a[t * HV + i] = proj[t * width + C + VD + HV + i];
    }
  }
  std::vector<float> y(T * C), q(T * H * K), k(T * H * K), v(T * HV * V),
      g(T * HV), beta(T * HV), o(T * HV * V);
  gdn::CausalConv(dims, w.conv.data(), mixed.data(), T, conv_state.data(),
                  y.data());
  for (int t = 0; t < T; ++t) {
    gdn::PrepareQkv(dims, &y[t * C], &q[t * H * K], &k[t * H * K],
                    &v[t * HV * V]);
    gdn::Gates(HV, &a[t * HV], &b[t * HV], w.A_log.data(), w.dt_bias.data(),
               &g[t * HV], &beta[t * HV]);
  }
  gdn::ChunkedForward(dims, T, q.data(), k.data(), v.data(), g.data(),
                      beta.data(), S.data(), o.data(), T == 1 ? 1 : 64);
  ops::GatedRmsNorm(o.data(), z.data(), w.norm.data(), T * HV, V, 1e-6f,
                    o.data());
  ops::Linear(o.data(), T, VD, w.out_proj.data(), D, out);
}

TEST(GdnMixerTest, PerGroupRecurrenceEqualsTheWholeLayer) {
  const ModelConfig c = Config();
  std::mt19937 rng(11);
  const GdnWeights w = RandomWeights(c, rng);
  const gdn::GdnDims dims = ToGdnDims(c.gdn);
  const int D = c.hidden_size;
  std::normal_distribution<float> d;
  for (int threads : {1, 3}) {
    ops::ThreadPool pool(threads);
    std::vector<float> conv_ref(dims.conv_state_floats(), 0.0f),
        S_ref(dims.state_floats(), 0.0f);
    std::vector<float> conv(conv_ref), S(S_ref);
    GdnLayerState st{conv.data(), S.data()};
    // A 70-token prefill (two chunks), then decode steps.
    for (int T : {70, 1, 1, 3, 1}) {
      std::vector<float> x(T * D);
      for (float& e : x) e = d(rng);
      std::vector<float> out(T * D), ref(T * D);
      GdnMixer(c, w, x.data(), T, ReplayArgs(), st, out.data(), &pool);
      Reference(c, w, x.data(), T, conv_ref, S_ref, ref.data());
      EXPECT_EQ(out, ref) << "T=" << T << " threads=" << threads;
      EXPECT_EQ(S, S_ref);
      EXPECT_EQ(conv, conv_ref);
    }
  }
}

TEST(GdnMixerTest, RingRowsMatchPlainRowsAndReportFlushes) {
  const ModelConfig c = Config();
  std::mt19937 rng(12);
  const GdnWeights w = RandomWeights(c, rng);
  const gdn::GdnDims dims = ToGdnDims(c.gdn);
  const int D = c.hidden_size, L = 4;
  std::vector<float> conv_a(dims.conv_state_floats(), 0.0f),
      S_a(dims.state_floats(), 0.0f), conv_b(conv_a), S_b(S_a);
  std::vector<float> rk(dims.num_k_heads * L * dims.head_k_dim),
      rd(dims.num_v_heads * L * dims.head_v_dim), rg(dims.num_v_heads * L);
  GdnLayerState plain{conv_a.data(), S_a.data()};
  GdnLayerState ring{conv_b.data(), S_b.data(), rk.data(), rd.data(),
                     rg.data()};
  std::normal_distribution<float> d;
  ops::ThreadPool pool(2);
  int write_pos = 0;
  for (int step = 0; step < 3 * L + 2; ++step) {
    std::vector<float> x(D);
    for (float& e : x) e = d(rng);
    std::vector<float> a(D), b(D);
    EXPECT_FALSE(
        GdnMixer(c, w, x.data(), 1, ReplayArgs(), plain, a.data(), &pool));
    ReplayArgs args{L, write_pos, false};
    const bool flushed =
        GdnMixer(c, w, x.data(), 1, args, ring, b.data(), &pool);
    EXPECT_EQ(flushed, write_pos == L - 1) << step;
    write_pos = flushed ? 0 : write_pos + 1;
    for (int i = 0; i < D; ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::fabs(a[i]))) << step;
    }
    EXPECT_EQ(conv_a, conv_b);  // the ring never touches the conv path
  }
}

}  // namespace
}  // namespace rollout::model
