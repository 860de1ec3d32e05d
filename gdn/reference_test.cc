#include "gdn/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::gdn {
namespace {

using Vec = std::vector<float>;

// ||a - b|| / ||b|| in double; the acceptance metric everywhere below.
double RelErr(const Vec& a, const Vec& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den);
}

Vec Normal(std::mt19937& rng, size_t n, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  Vec v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Vec Uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Random prepared inputs of T tokens: q, k normalised per key head (q scaled),
// v ~ N(0,1), and gates from raw a, b with decays alpha mostly in (0.5, 1) so
// that the history matters (real layers also have fast-forgetting heads: some
// A_log values are large).
struct Tokens {
  int T = 0;
  Vec q, k, v, g, beta;  // [T,H,K] x2, [T,HV,V], [T,HV] x2
};

Tokens RandomTokens(const GdnDims& dims, int T, std::mt19937& rng) {
  Tokens t;
  t.T = T;
  const int HV = dims.num_v_heads;
  t.q.resize(static_cast<size_t>(T) * dims.key_dim());
  t.k.resize(t.q.size());
  t.v.resize(static_cast<size_t>(T) * dims.value_dim());
  t.g.resize(static_cast<size_t>(T) * HV);
  t.beta.resize(t.g.size());
  Vec A_log = Uniform(rng, HV, std::log(0.02f), std::log(0.6f));
  A_log[0] = std::log(4.0f);  // one fast-forgetting head
  const Vec dt_bias = Uniform(rng, HV, -1.0f, 1.0f);
  for (int i = 0; i < T; ++i) {
    const Vec row = Normal(rng, dims.conv_dim());
    PrepareQkv(dims, row.data(), &t.q[static_cast<size_t>(i) * dims.key_dim()],
               &t.k[static_cast<size_t>(i) * dims.key_dim()],
               &t.v[static_cast<size_t>(i) * dims.value_dim()]);
    const Vec a = Normal(rng, HV), b = Normal(rng, HV, 2.0f);
    Gates(HV, a.data(), b.data(), A_log.data(), dt_bias.data(), &t.g[i * HV],
          &t.beta[i * HV]);
  }
  return t;
}

GdnDims SmallDims() {
  GdnDims d;
  d.num_k_heads = 2;
  d.num_v_heads = 6;  // r = 3
  d.head_k_dim = 16;
  d.head_v_dim = 12;
  return d;
}

GdnDims RealDims(int hv) {
  GdnDims d;
  d.num_k_heads = 16;
  d.num_v_heads = hv;
  d.head_k_dim = 128;
  d.head_v_dim = 128;
  return d;
}

TEST(GdnDimsTest, Validate) {
  EXPECT_TRUE(SmallDims().Validate().ok());
  GdnDims bad = SmallDims();
  bad.num_v_heads = 5;
  EXPECT_FALSE(bad.Validate().ok());
  bad = SmallDims();
  bad.head_k_dim = 0;
  EXPECT_FALSE(bad.Validate().ok());
  const GdnDims d = RealDims(32);
  EXPECT_EQ(d.conv_dim(), 2 * 16 * 128 + 32 * 128);
  EXPECT_EQ(d.state_floats(), 32 * 128 * 128);
  EXPECT_EQ(d.ring_floats(16), 16 * (16 * 128 + 32 * 128 + 32));
}

TEST(GatesTest, MatchDirectFormulas) {
  const int HV = 7;
  const Vec a = {-30.0f, -2.0f, 0.0f, 1.5f, 19.0f, 25.0f, 100.0f};
  const Vec b = {-8.0f, -1.0f, 0.0f, 0.5f, 3.0f, 9.0f, -0.25f};
  const Vec A_log = {0.1f, -1.0f, 0.0f, 0.5f, 2.0f, -3.0f, 1.0f};
  const Vec dt_bias = {0.5f, 0.0f, -0.5f, 1.0f, 0.9f, -4.0f, 0.0f};
  Vec g(HV), beta(HV);
  Gates(HV, a.data(), b.data(), A_log.data(), dt_bias.data(), g.data(),
        beta.data());
  for (int h = 0; h < HV; ++h) {
    const double x = static_cast<double>(a[h]) + dt_bias[h];
    // torch softplus(beta=1, threshold=20): identity above 20.
    const double sp = x > 20.0 ? x : std::log1p(std::exp(x));
    const double want_g = -std::exp(static_cast<double>(A_log[h])) * sp;
    const double want_beta = 1.0 / (1.0 + std::exp(-static_cast<double>(b[h])));
    EXPECT_NEAR(g[h], want_g, 2e-6 * std::max(1.0, std::abs(want_g))) << h;
    EXPECT_NEAR(beta[h], want_beta, 1e-7) << h;
    EXPECT_LE(g[h], 0.0f);
  }
  // Above the threshold the softplus is exactly linear (fp32 arithmetic).
  EXPECT_EQ(g[5], -std::exp(A_log[5]) * (a[5] + dt_bias[5]));
}

TEST(L2NormTest, EpsInsideTheRoot) {
  Vec x = {3.0f, 4.0f};
  L2NormInPlace(x.data(), 2);
  EXPECT_NEAR(x[0], 3.0 / std::sqrt(25.0 + 1e-6), 1e-7);
  EXPECT_NEAR(x[1], 4.0 / std::sqrt(25.0 + 1e-6), 1e-7);
  // A tiny vector shows where eps sits: x / sqrt(|x|^2 + eps), not
  // x / (|x| + eps).
  Vec tiny = {1e-4f};
  L2NormInPlace(tiny.data(), 1);
  EXPECT_NEAR(tiny[0], 1e-4 / std::sqrt(1e-8 + 1e-6), 1e-7);
  Vec zero = {0.0f, 0.0f, 0.0f};
  L2NormInPlace(zero.data(), 3);
  EXPECT_EQ(zero, Vec({0.0f, 0.0f, 0.0f}));
}

TEST(PrepareQkvTest, SplitsNormalisesAndScales) {
  std::mt19937 rng(1);
  const GdnDims d = SmallDims();
  const Vec row = Normal(rng, d.conv_dim(), 3.0f);
  Vec q(d.key_dim()), k(d.key_dim()), v(d.value_dim());
  PrepareQkv(d, row.data(), q.data(), k.data(), v.data());
  const int K = d.head_k_dim;
  for (int h = 0; h < d.num_k_heads; ++h) {
    double nq = 0.0, nk = 0.0, raw_q = 0.0;
    for (int c = 0; c < K; ++c) {
      nq += static_cast<double>(q[h * K + c]) * q[h * K + c];
      nk += static_cast<double>(k[h * K + c]) * k[h * K + c];
      raw_q += static_cast<double>(row[h * K + c]) * row[h * K + c];
    }
    EXPECT_NEAR(nk, 1.0, 1e-5);
    EXPECT_NEAR(nq, 1.0 / K, 1e-6);
    // Direction preserved: q = row / sqrt(|row|^2 + eps) / sqrt(K).
    const double s = 1.0 / std::sqrt(raw_q + 1e-6) / std::sqrt(K);
    EXPECT_NEAR(q[h * K + 3], row[h * K + 3] * s, 1e-6);
  }
  for (int i = 0; i < d.value_dim(); ++i) {
    EXPECT_EQ(v[i], row[2 * d.key_dim() + i]);
  }
}

// Direct definition of the conv for a fresh sequence: zero left padding.
Vec ConvDirect(const GdnDims& d, const Vec& w, const Vec& x, int T) {
  const int C = d.conv_dim(), Kc = d.conv_kernel;
  Vec y(static_cast<size_t>(T) * C);
  for (int t = 0; t < T; ++t) {
    for (int c = 0; c < C; ++c) {
      double acc = 0.0;
      for (int i = 0; i < Kc; ++i) {
        const int s = t - (Kc - 1) + i;
        if (s >= 0) acc += static_cast<double>(w[c * Kc + i]) * x[s * C + c];
      }
      y[t * C + c] = static_cast<float>(acc / (1.0 + std::exp(-acc)));
    }
  }
  return y;
}

TEST(CausalConvTest, PrefillThenDecodeEqualsWholeSequence) {
  std::mt19937 rng(2);
  const GdnDims d = SmallDims();
  const int C = d.conv_dim();
  const Vec w = Normal(rng, static_cast<size_t>(C) * d.conv_kernel, 0.5f);
  for (int prefill : {1, 2, 3, 5, 11}) {
    const int total = prefill + 6;
    const Vec x = Normal(rng, static_cast<size_t>(total) * C);
    const Vec want = ConvDirect(d, w, x, total);
    Vec state(d.conv_state_floats(), 0.0f), y(want.size());
    CausalConv(d, w.data(), x.data(), prefill, state.data(), y.data());
    // The state holds the last Kc-1 inputs (zeros where the prompt is
    // shorter).
    for (int m = 0; m < d.conv_kernel - 1; ++m) {
      const int t = prefill - (d.conv_kernel - 1) + m;
      for (int c = 0; c < C; ++c) {
        EXPECT_EQ(state[m * C + c], t >= 0 ? x[t * C + c] : 0.0f);
      }
    }
    for (int t = prefill; t < total; ++t) {
      CausalConv(d, w.data(), &x[static_cast<size_t>(t) * C], 1, state.data(),
                 &y[static_cast<size_t>(t) * C]);
    }
    EXPECT_LT(RelErr(y, want), 1e-6) << "prefill " << prefill;
  }
}

TEST(CausalConvTest, ChunkedPrefillContinuesFromState) {
  std::mt19937 rng(3);
  const GdnDims d = SmallDims();
  const int C = d.conv_dim(), T = 20;
  const Vec w = Normal(rng, static_cast<size_t>(C) * d.conv_kernel, 0.5f);
  const Vec x = Normal(rng, static_cast<size_t>(T) * C);
  const Vec want = ConvDirect(d, w, x, T);
  Vec state(d.conv_state_floats(), 0.0f), y(want.size());
  int t = 0;
  for (int len : {7, 1, 2, 10}) {
    CausalConv(d, w.data(), &x[static_cast<size_t>(t) * C], len, state.data(),
               &y[static_cast<size_t>(t) * C]);
    t += len;
  }
  ASSERT_EQ(t, T);
  EXPECT_LT(RelErr(y, want), 1e-6);
}

TEST(RecurrentTest, ValueHeadUsesKeyHeadHOverR) {
  // Each value head must equal a single-head run on key head h / r
  // (repeat_interleave), which differs from h % H for r > 1.
  std::mt19937 rng(4);
  const GdnDims d = SmallDims();
  const int T = 9, H = d.num_k_heads, HV = d.num_v_heads;
  const int K = d.head_k_dim, V = d.head_v_dim, r = HV / H;
  const Tokens t = RandomTokens(d, T, rng);
  Vec state = Normal(rng, d.state_floats(), 0.1f), o(t.v.size());
  const Vec state0 = state;
  RecurrentForward(d, T, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                   t.beta.data(), state.data(), o.data());
  GdnDims one;
  one.num_k_heads = one.num_v_heads = 1;
  one.head_k_dim = K;
  one.head_v_dim = V;
  for (int h = 0; h < HV; ++h) {
    const int kh = h / r;
    Vec q1, k1, v1, g1, b1;
    for (int i = 0; i < T; ++i) {
      q1.insert(q1.end(), &t.q[(i * H + kh) * K], &t.q[(i * H + kh + 1) * K]);
      k1.insert(k1.end(), &t.k[(i * H + kh) * K], &t.k[(i * H + kh + 1) * K]);
      v1.insert(v1.end(), &t.v[(i * HV + h) * V], &t.v[(i * HV + h + 1) * V]);
      g1.push_back(t.g[i * HV + h]);
      b1.push_back(t.beta[i * HV + h]);
    }
    Vec s1(&state0[h * V * K], &state0[(h + 1) * V * K]), o1(T * V);
    RecurrentForward(one, T, q1.data(), k1.data(), v1.data(), g1.data(),
                     b1.data(), s1.data(), o1.data());
    EXPECT_EQ(s1, Vec(&state[h * V * K], &state[(h + 1) * V * K])) << h;
    for (int i = 0; i < T; ++i) {
      for (int x = 0; x < V; ++x) {
        EXPECT_EQ(o1[i * V + x], o[(i * HV + h) * V + x]);
      }
    }
  }
}

TEST(RecurrentTest, MatchesClosedFormOfOneStep) {
  // o = alpha S q + (k.q) d with d = beta (v - alpha S k), from the definition.
  std::mt19937 rng(5);
  GdnDims d;
  d.num_k_heads = d.num_v_heads = 1;
  d.head_k_dim = 8;
  d.head_v_dim = 5;
  const Tokens t = RandomTokens(d, 1, rng);
  const Vec S0 = Normal(rng, d.state_floats());
  Vec S = S0, o(5);
  RecurrentForward(d, 1, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                   t.beta.data(), S.data(), o.data());
  const double alpha = std::exp(static_cast<double>(t.g[0]));
  double kq = 0.0;
  for (int c = 0; c < 8; ++c) kq += static_cast<double>(t.k[c]) * t.q[c];
  for (int vi = 0; vi < 5; ++vi) {
    double sq = 0.0, sk = 0.0;
    for (int c = 0; c < 8; ++c) {
      sq += static_cast<double>(S0[vi * 8 + c]) * t.q[c];
      sk += static_cast<double>(S0[vi * 8 + c]) * t.k[c];
    }
    const double dd = t.beta[0] * (t.v[vi] - alpha * sk);
    EXPECT_NEAR(o[vi], alpha * sq + kq * dd, 1e-5);
    for (int c = 0; c < 8; ++c) {
      EXPECT_NEAR(S[vi * 8 + c], alpha * S0[vi * 8 + c] + dd * t.k[c], 1e-5);
    }
  }
}

struct ChunkCase {
  int T;
  int chunk;
};

TEST(ChunkedTest, EqualsTokenLoop) {
  std::mt19937 rng(6);
  const GdnDims d = SmallDims();
  for (const ChunkCase& c : std::vector<ChunkCase>{{1, 64},
                                                   {5, 64},
                                                   {63, 64},
                                                   {64, 64},
                                                   {65, 64},
                                                   {130, 64},
                                                   {200, 64},
                                                   {37, 16},
                                                   {48, 16}}) {
    const Tokens t = RandomTokens(d, c.T, rng);
    for (bool fresh : {true, false}) {
      Vec s_ref = fresh ? Vec(d.state_floats(), 0.0f)
                        : Normal(rng, d.state_floats(), 0.3f);
      Vec s_chk = s_ref, o_ref(t.v.size()), o_chk(t.v.size());
      RecurrentForward(d, c.T, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                       t.beta.data(), s_ref.data(), o_ref.data());
      ChunkedForward(d, c.T, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                     t.beta.data(), s_chk.data(), o_chk.data(), c.chunk);
      EXPECT_LT(RelErr(o_chk, o_ref), 1e-5) << c.T << "/" << c.chunk;
      EXPECT_LT(RelErr(s_chk, s_ref), 1e-5) << c.T << "/" << c.chunk;
    }
  }
}

TEST(ChunkedTest, EqualsTokenLoopAtRealHeadSize) {
  std::mt19937 rng(7);
  GdnDims d = RealDims(32);
  d.num_k_heads = 2;  // two key groups of r = 2 keep the test fast
  d.num_v_heads = 4;
  const int T = 150;  // two full chunks and a partial one
  const Tokens t = RandomTokens(d, T, rng);
  Vec s_ref = Normal(rng, d.state_floats(), 0.05f), s_chk = s_ref;
  Vec o_ref(t.v.size()), o_chk(t.v.size());
  RecurrentForward(d, T, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                   t.beta.data(), s_ref.data(), o_ref.data());
  ChunkedForward(d, T, t.q.data(), t.k.data(), t.v.data(), t.g.data(),
                 t.beta.data(), s_chk.data(), o_chk.data());
  EXPECT_LT(RelErr(o_chk, o_ref), 1e-5);
  EXPECT_LT(RelErr(s_chk, s_ref), 1e-5);
}

// Drives one sequence through `steps` decode steps on both paths: plain
// recurrent decode (the truth) and ReplayStep with an fp32 ring. Checks every
// output, and the materialised checkpoint after every flush. `force` marks
// steps that flush early; `fold_at` steps fold the ring before the step.
struct ReplayRun {
  int L = 16;
  int steps = 80;
  std::vector<int> force;
  std::vector<int> fold_at;
  double max_out_err = 0.0;
  double max_state_err = 0.0;
  int flushes = 0;
  bool bit_exact = true;  // outputs and states bitwise equal to the truth
};

void RunReplay(const GdnDims& d, ReplayRun* run, uint32_t seed) {
  std::mt19937 rng(seed);
  const int L = run->L;
  const Tokens t = RandomTokens(d, run->steps, rng);
  Vec truth = Normal(rng, d.state_floats(), 0.2f);
  Vec ckpt = truth;
  Vec ring_k(static_cast<size_t>(d.num_k_heads) * L * d.head_k_dim, NAN);
  Vec ring_d(static_cast<size_t>(d.num_v_heads) * L * d.head_v_dim, NAN);
  Vec ring_g(static_cast<size_t>(d.num_v_heads) * L, NAN);
  Vec o_truth(d.value_dim()), o(d.value_dim());
  int pos = 0;
  auto has = [](const std::vector<int>& v, int i) {
    return std::find(v.begin(), v.end(), i) != v.end();
  };
  for (int i = 0; i < run->steps; ++i) {
    const float* q = &t.q[static_cast<size_t>(i) * d.key_dim()];
    const float* k = &t.k[static_cast<size_t>(i) * d.key_dim()];
    const float* v = &t.v[static_cast<size_t>(i) * d.value_dim()];
    const float* g = &t.g[static_cast<size_t>(i) * d.num_v_heads];
    const float* b = &t.beta[static_cast<size_t>(i) * d.num_v_heads];
    if (has(run->fold_at, i)) {
      ReplayFold(d, L, pos, ckpt.data(), ring_k.data(), ring_d.data(),
                 ring_g.data());
      pos = 0;
      run->max_state_err = std::max(run->max_state_err, RelErr(ckpt, truth));
    }
    RecurrentForward(d, 1, q, k, v, g, b, truth.data(), o_truth.data());
    const bool flushed =
        ReplayStep(d, L, pos, has(run->force, i), q, k, v, g, b, ckpt.data(),
                   ring_k.data(), ring_d.data(), ring_g.data(), o.data());
    run->max_out_err = std::max(run->max_out_err, RelErr(o, o_truth));
    if (o != o_truth) run->bit_exact = false;
    if (flushed) {
      ++run->flushes;
      run->max_state_err = std::max(run->max_state_err, RelErr(ckpt, truth));
      if (ckpt != truth) run->bit_exact = false;
      pos = 0;
    } else {
      ++pos;
    }
  }
}

TEST(ReplayTest, Fp32RingEqualsRecurrentOverFiveCycles) {
  for (int L : {1, 7, 16}) {
    for (const GdnDims& d : {SmallDims(), [] {
                               GdnDims x = RealDims(32);
                               x.num_k_heads =
                                   2;  // 2 key groups, r = 2, real head sizes
                               x.num_v_heads = 4;
                               return x;
                             }()}) {
      ReplayRun run;
      run.L = L;
      run.steps = 5 * L + 3;  // five full cycles and a partial one
      RunReplay(d, &run, 100 + L);
      std::printf(
          "L=%d K=%d: max output rel err %.3g, max state rel err %.3g\n", L,
          d.head_k_dim, run.max_out_err, run.max_state_err);
      EXPECT_EQ(run.flushes, run.steps / L) << "L=" << L;
      EXPECT_GE(run.flushes, 5);
      EXPECT_LT(run.max_out_err, 1e-6) << "L=" << L << " K=" << d.head_k_dim;
      EXPECT_LT(run.max_state_err, 1e-6) << "L=" << L << " K=" << d.head_k_dim;
      if (L == 1) {
        // Every step is a flush with an empty ring: exactly the plain step.
        EXPECT_TRUE(run.bit_exact);
      }
    }
  }
}

TEST(ReplayTest, ForcedFlushMidRing) {
  ReplayRun run;
  run.L = 16;
  run.steps = 90;
  run.force = {3, 4, 20, 37, 38, 60};  // incl. a forced flush on an empty ring
  RunReplay(SmallDims(), &run, 11);
  EXPECT_GE(run.flushes, 8);
  EXPECT_LT(run.max_out_err, 1e-6);
  EXPECT_LT(run.max_state_err, 1e-6);
}

TEST(ReplayTest, FoldAtArbitraryCursorsGivesExactState) {
  // Folds at cursors 0 (empty ring), 1, mid-ring and L-1 (full ring), then
  // decoding continues from cursor 0.
  ReplayRun run;
  run.L = 16;
  run.steps = 100;
  run.fold_at = {0, 1, 9, 10, 26, 41, 73};
  RunReplay(SmallDims(), &run, 12);
  EXPECT_LT(run.max_out_err, 1e-6);
  EXPECT_LT(run.max_state_err, 1e-6);
}

TEST(ReplayTest, NonFlushLeavesCheckpointAndAppendsOnePerKeyHead) {
  std::mt19937 rng(13);
  const GdnDims d = SmallDims();
  const int L = 4;
  const Tokens t = RandomTokens(d, 1, rng);
  const Vec ckpt0 = Normal(rng, d.state_floats());
  Vec ckpt = ckpt0, o(d.value_dim());
  Vec ring_k(static_cast<size_t>(d.num_k_heads) * L * d.head_k_dim, -7.0f);
  Vec ring_d(static_cast<size_t>(d.num_v_heads) * L * d.head_v_dim, -7.0f);
  Vec ring_g(static_cast<size_t>(d.num_v_heads) * L, -7.0f);
  const int pos = 0;
  EXPECT_FALSE(ReplayStep(d, L, pos, false, t.q.data(), t.k.data(), t.v.data(),
                          t.g.data(), t.beta.data(), ckpt.data(), ring_k.data(),
                          ring_d.data(), ring_g.data(), o.data()));
  EXPECT_EQ(ckpt, ckpt0);
  const int K = d.head_k_dim, V = d.head_v_dim;
  for (int kh = 0; kh < d.num_k_heads; ++kh) {
    for (int j = 0; j < L; ++j) {
      for (int c = 0; c < K; ++c) {
        const float got = ring_k[(kh * L + j) * K + c];
        if (j == pos) {
          EXPECT_EQ(got, t.k[kh * K + c]);
        } else {
          EXPECT_EQ(got, -7.0f);
        }
      }
    }
  }
  for (int h = 0; h < d.num_v_heads; ++h) {
    EXPECT_EQ(ring_g[h * L + pos], t.g[h]);
    EXPECT_EQ(ring_g[h * L + pos + 1], -7.0f);
    EXPECT_NE(ring_d[(h * L + pos) * V], -7.0f);
    EXPECT_EQ(ring_d[(h * L + pos + 1) * V], -7.0f);
  }
}

}  // namespace
}  // namespace rollout::gdn
