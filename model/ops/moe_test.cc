#include "model/ops/moe.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

TEST(MoeTest, RoutingTopKAndRenormalisation) {
  const float logits[5] = {0.1f, 2.0f, -1.0f, 1.5f, 2.0f};
  Routing r = RouteToken(logits, 5, 3, /*norm=*/false);
  // Ties go to the lower index: 1 before 4.
  EXPECT_EQ(r.experts, (std::vector<int32_t>{1, 4, 3}));
  double den = 0;
  for (float l : logits) den += std::exp(l);
  EXPECT_NEAR(r.weights[0], std::exp(2.0) / den, 1e-7);
  EXPECT_NEAR(r.weights[2], std::exp(1.5) / den, 1e-7);
  Routing n = RouteToken(logits, 5, 3, /*norm=*/true);
  EXPECT_NEAR(n.weights[0] + n.weights[1] + n.weights[2], 1.0, 1e-6);
  EXPECT_NEAR(n.weights[2] / n.weights[0], std::exp(-0.5), 1e-6);
}

TEST(MoeTest, ForwardMatchesPerTokenReference) {
  const int M = 6, D = 9, E = 5, I = 4, Is = 3, k = 2;
  std::mt19937 rng(7);
  std::normal_distribution<float> d;
  auto randv = [&](size_t n, float s) {
    std::vector<float> v(n);
    for (float& x : v) x = s * d(rng);
    return v;
  };
  std::vector<float> x = randv(M * D, 1), router = randv(E * D, 1);
  std::vector<std::vector<float>> gu(E), dn(E);
  MoeView w;
  w.router = router.data();
  for (int e = 0; e < E; ++e) {
    gu[e] = randv(2 * I * D, 0.3f);
    dn[e] = randv(D * I, 0.3f);
    w.experts.push_back({gu[e].data(), dn[e].data(), I});
  }
  std::vector<float> sgu = randv(2 * Is * D, 0.3f), sdn = randv(D * Is, 0.3f);
  std::vector<float> sg = randv(D, 0.5f);
  w.shared = {sgu.data(), sdn.data(), Is};
  w.shared_gate = sg.data();
  w.top_k = k;
  w.norm_topk_prob = true;
  std::vector<float> y(M * D);
  ThreadPool pool(3);
  MoeForward(x.data(), M, D, w, y.data(), &pool);
  for (int m = 0; m < M; ++m) {
    // Reference: one token at a time.
    std::vector<float> logit(E);
    for (int e = 0; e < E; ++e) {
      double s = 0;
      for (int j = 0; j < D; ++j) s += double(router[e * D + j]) * x[m * D + j];
      logit[e] = static_cast<float>(s);
    }
    Routing r = RouteToken(logit.data(), E, k, true);
    std::vector<double> ref(D, 0.0);
    auto add_mlp = [&](const MlpView& mv, double scale) {
      std::vector<float> out(D);
      SwiGluMlp(&x[m * D], 1, D, mv, out.data());
      for (int j = 0; j < D; ++j) ref[j] += scale * out[j];
    };
    for (int j = 0; j < k; ++j) add_mlp(w.experts[r.experts[j]], r.weights[j]);
    double g = 0;
    for (int j = 0; j < D; ++j) g += double(sg[j]) * x[m * D + j];
    add_mlp(w.shared, 1 / (1 + std::exp(-g)));
    for (int j = 0; j < D; ++j) EXPECT_NEAR(y[m * D + j], ref[j], 1e-5);
  }
}

}  // namespace
}  // namespace rollout::model::ops
