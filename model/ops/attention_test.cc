#include "model/ops/attention.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::model::ops {
namespace {

// Naive attention over contiguous k, v [P, nkv, hd].
void Naive(const AttentionShape& s, const float* q, const float* gate, int T,
           int start, const std::vector<float>& k, const std::vector<float>& v,
           std::vector<double>* out) {
  const int nh = s.num_heads, hd = s.head_dim, nkv = s.num_kv_heads;
  out->assign(T * nh * hd, 0.0);
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < nh; ++h) {
      const int kvh = h / (nh / nkv);
      std::vector<double> sc(start + t + 1);
      double mx = -1e300, den = 0;
      for (int p = 0; p <= start + t; ++p) {
        double dot = 0;
        for (int i = 0; i < hd; ++i)
          dot += double(q[(t * nh + h) * hd + i]) * k[(p * nkv + kvh) * hd + i];
        sc[p] = dot * s.scale;
        mx = std::max(mx, sc[p]);
      }
      for (double& x : sc) den += (x = std::exp(x - mx));
      for (int i = 0; i < hd; ++i) {
        double acc = 0;
        for (int p = 0; p <= start + t; ++p)
          acc += sc[p] / den * v[(p * nkv + kvh) * hd + i];
        const double g = gate[t * nh * hd + h * hd + i];
        (*out)[(t * nh + h) * hd + i] = acc / (1 + std::exp(-g));
      }
    }
  }
}

TEST(AttentionTest, PagedGqaMatchesNaive) {
  const AttentionShape s{6, 2, 8, 1.0f / std::sqrt(8.0f)};
  const int block = 3, start = 4, T = 5, P = start + T;
  const int layers = 2, layer = 1;
  const int64_t token = s.num_kv_heads * s.head_dim;
  const int64_t block_floats = layers * 2 * block * token;
  // Scattered, out-of-order block table.
  const std::vector<int32_t> table = {4, 0, 2};
  std::vector<float> pool(5 * block_floats, NAN);
  PagedKv kv{pool.data(), block_floats,   layer * 2 * block * token,
             block,       s.num_kv_heads, s.head_dim,
             table};
  std::mt19937 rng(5);
  std::normal_distribution<float> d;
  std::vector<float> k(P * token), v(P * token);
  for (float& x : k) x = d(rng);
  for (float& x : v) x = d(rng);
  for (int p = 0; p < P; ++p) {
    std::copy_n(&k[p * token], token, kv.Key(p));
    std::copy_n(&v[p * token], token, kv.Value(p));
  }
  std::vector<float> q(T * s.num_heads * s.head_dim);
  const int gate_stride = s.num_heads * s.head_dim + 5;
  std::vector<float> gate(T * gate_stride);
  for (float& x : q) x = 2 * d(rng);
  for (float& x : gate) x = d(rng);
  std::vector<double> ref;
  // Naive() reads the gate without a stride: give it a compact copy.
  std::vector<float> compact(T * s.num_heads * s.head_dim);
  for (int t = 0; t < T; ++t)
    std::copy_n(&gate[t * gate_stride], s.num_heads * s.head_dim,
                &compact[t * s.num_heads * s.head_dim]);
  Naive(s, q.data(), compact.data(), T, start, k, v, &ref);
  for (int threads : {1, 3}) {
    ThreadPool pool_threads(threads);
    std::vector<float> out(T * s.num_heads * s.head_dim);
    GatedAttention(s, q.data(), gate.data(), gate_stride, T, start, kv,
                   out.data(), &pool_threads);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-6);
  }
}

}  // namespace
}  // namespace rollout::model::ops
