#include "gdn/reference.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::gdn {
namespace {

// Dot product of two fp32 vectors accumulated in double.
double Dot(const float* a, const float* b, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * b[i];
  return acc;
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// torch.nn.functional.softplus with beta = 1, threshold = 20.
float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// One token of the gated delta rule for one value head, the definition:
//   S <- alpha S;  d = beta (v - S k);  S <- S + d k^T;  o = S q.
// S: [V, K] (K contiguous); q, k: [K]; v, o: [V].
void HeadStep(int V, int K, const float* q, const float* k, const float* v,
              float g, float beta, float* S, float* o) {
  // Each state element is computed in double from the fp32 state and rounded
  // once (alpha S + d k^T), like ChunkedForward: the decay and the update are
  // not rounded separately.
  const double alpha = std::exp(static_cast<double>(g));
  for (int vi = 0; vi < V; ++vi) {
    float* row = S + static_cast<size_t>(vi) * K;
    const double d = beta * (v[vi] - alpha * Dot(row, k, K));
    double oq = 0.0;
    for (int c = 0; c < K; ++c) {
      const double s = alpha * row[c] + d * k[c];
      row[c] = static_cast<float>(s);
      oq += s * q[c];
    }
    o[vi] = static_cast<float>(oq);
  }
}

// Ring weights of one value head with n committed entries: w[j] =
// exp(sum_{i=j+1..n-1} g_i) (suffix sums: no cancellation, all <= 1) and the
// checkpoint decay exp(sum_{i<n} g_i), which is returned.
double RingWeights(const float* ring_g_head, int n, double* w) {
  // In double: the plain path applies one exact-in-double decay per step, so
  // fp32 prefix sums here would be a systematic ~1e-6 scale difference.
  double s = 0.0;
  for (int j = n - 1; j >= 0; --j) {
    w[j] = std::exp(s);
    s += ring_g_head[j];
  }
  return std::exp(s);
}

// S <- A S + sum_{j<n} w_j d_j k_j^T for one value head. S: [V, K];
// ring_k_head: [L, K] of its key head; ring_d_head: [L, V].
void FoldHead(int V, int K, int n, double A, const double* w,
              const float* ring_k_head, const float* ring_d_head, float* S) {
  if (n == 0) return;
  for (int vi = 0; vi < V; ++vi) {
    float* row = S + static_cast<size_t>(vi) * K;
    for (int c = 0; c < K; ++c) {
      double acc = A * row[c];
      for (int j = 0; j < n; ++j) {
        acc += w[j] * ring_d_head[j * V + vi] *
               ring_k_head[static_cast<size_t>(j) * K + c];
      }
      row[c] = static_cast<float>(acc);
    }
  }
}

}  // namespace

absl::Status GdnDims::Validate() const {
  if (num_k_heads <= 0 || num_v_heads <= 0 || head_k_dim <= 0 ||
      head_v_dim <= 0 || conv_kernel <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GdnDims: every size must be positive (H=", num_k_heads,
                     " HV=", num_v_heads, " K=", head_k_dim, " V=", head_v_dim,
                     " Kc=", conv_kernel, ")"));
  }
  if (num_v_heads % num_k_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GdnDims: num_v_heads (", num_v_heads,
        ") must be a multiple of num_k_heads (", num_k_heads, ")"));
  }
  return absl::OkStatus();
}

void CausalConv(const GdnDims& dims, const float* weight, const float* x, int T,
                float* conv_state, float* y) {
  const int Kc = dims.conv_kernel;
  const int S = Kc - 1;  // conv state rows
  const int C = dims.conv_dim();
  if (T <= 0) return;
  // Input at time t' in [-S, T): from the state before 0, from x after.
  auto input = [&](int t, int c) -> float {
    return t >= 0 ? x[static_cast<size_t>(t) * C + c]
                  : conv_state[static_cast<size_t>(S + t) * C + c];
  };
  for (int t = 0; t < T; ++t) {
    for (int c = 0; c < C; ++c) {
      float acc = 0.0f;
      for (int i = 0; i < Kc; ++i) {
        acc += weight[static_cast<size_t>(c) * Kc + i] * input(t - S + i, c);
      }
      y[static_cast<size_t>(t) * C + c] = acc * Sigmoid(acc);
    }
  }
  // New state = the last S inputs of [state | x]; built aside because it may
  // read the old state.
  std::vector<float> next(static_cast<size_t>(S) * C);
  for (int m = 0; m < S; ++m) {
    for (int c = 0; c < C; ++c) {
      next[static_cast<size_t>(m) * C + c] = input(T - S + m, c);
    }
  }
  if (S > 0) std::memcpy(conv_state, next.data(), next.size() * sizeof(float));
}

void Gates(int num_v_heads, const float* a, const float* b, const float* A_log,
           const float* dt_bias, float* g, float* beta) {
  for (int h = 0; h < num_v_heads; ++h) {
    g[h] = -std::exp(A_log[h]) * Softplus(a[h] + dt_bias[h]);
    beta[h] = Sigmoid(b[h]);
  }
}

void L2NormInPlace(float* x, int n, float eps) {
  const double inv = 1.0 / std::sqrt(Dot(x, x, n) + static_cast<double>(eps));
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * inv);
}

void PrepareQkv(const GdnDims& dims, const float* conv_out_row, float* q,
                float* k, float* v) {
  const int H = dims.num_k_heads, K = dims.head_k_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(K));
  std::memcpy(q, conv_out_row, sizeof(float) * dims.key_dim());
  std::memcpy(k, conv_out_row + dims.key_dim(), sizeof(float) * dims.key_dim());
  std::memcpy(v, conv_out_row + 2 * dims.key_dim(),
              sizeof(float) * dims.value_dim());
  for (int h = 0; h < H; ++h) {
    L2NormInPlace(q + h * K, K);
    L2NormInPlace(k + h * K, K);
    for (int c = 0; c < K; ++c) q[h * K + c] *= scale;
  }
}

void RecurrentForward(const GdnDims& dims, int T, const float* q,
                      const float* k, const float* v, const float* g,
                      const float* beta, float* state, float* o) {
  const int H = dims.num_k_heads, HV = dims.num_v_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim;
  const int r = HV / H;
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < HV; ++h) {
      const int kh = h / r;  // repeat_interleave: value head h -> key head h/r
      HeadStep(V, K, q + (static_cast<size_t>(t) * H + kh) * K,
               k + (static_cast<size_t>(t) * H + kh) * K,
               v + (static_cast<size_t>(t) * HV + h) * V, g[t * HV + h],
               beta[t * HV + h], state + static_cast<size_t>(h) * V * K,
               o + (static_cast<size_t>(t) * HV + h) * V);
    }
  }
}

void ChunkedForward(const GdnDims& dims, int T, const float* q, const float* k,
                    const float* v, const float* g, const float* beta,
                    float* state, float* o, int chunk) {
  const int H = dims.num_k_heads, HV = dims.num_v_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim;
  const int r = HV / H;
  assert(chunk > 0);
  // Per-chunk scratch (double: the chunk algebra is the oracle).
  std::vector<double> gam(chunk), A(static_cast<size_t>(chunk) * chunk);
  std::vector<double> W(static_cast<size_t>(chunk) * K);  // [c, K]
  std::vector<double> U(static_cast<size_t>(chunk) * V);  // [c, V]
  std::vector<double> S0(static_cast<size_t>(V) * K);     // [V, K]
  for (int h = 0; h < HV; ++h) {
    const int kh = h / r;
    float* S = state + static_cast<size_t>(h) * V * K;
    auto qrow = [&](int t) {
      return q + (static_cast<size_t>(t) * H + kh) * K;
    };
    auto krow = [&](int t) {
      return k + (static_cast<size_t>(t) * H + kh) * K;
    };
    for (int t0 = 0; t0 < T; t0 += chunk) {
      const int c = std::min(chunk, T - t0);
      // gam_i: cumulative log decay inside the chunk.
      double run = 0.0;
      for (int i = 0; i < c; ++i) {
        run += g[(t0 + i) * HV + h];
        gam[i] = run;
      }
      // A_ij = beta_i exp(gam_i - gam_j) (k_i . k_j), j < i.
      for (int i = 0; i < c; ++i) {
        const double bi = beta[(t0 + i) * HV + h];
        for (int j = 0; j < i; ++j) {
          A[i * chunk + j] = bi * std::exp(gam[i] - gam[j]) *
                             Dot(krow(t0 + i), krow(t0 + j), K);
        }
      }
      // W = (I+A)^-1 (beta e^gam k), U~ = (I+A)^-1 (beta v) by forward
      // substitution (row i depends on rows j < i).
      for (int i = 0; i < c; ++i) {
        const double bi = beta[(t0 + i) * HV + h];
        const double wi = bi * std::exp(gam[i]);
        const float* ki = krow(t0 + i);
        const float* vi = v + (static_cast<size_t>(t0 + i) * HV + h) * V;
        for (int x = 0; x < K; ++x) W[i * K + x] = wi * ki[x];
        for (int x = 0; x < V; ++x) U[i * V + x] = bi * vi[x];
        for (int j = 0; j < i; ++j) {
          const double a = A[i * chunk + j];
          for (int x = 0; x < K; ++x) W[i * K + x] -= a * W[j * K + x];
          for (int x = 0; x < V; ++x) U[i * V + x] -= a * U[j * V + x];
        }
      }
      for (size_t x = 0; x < S0.size(); ++x) S0[x] = S[x];
      // U = U~ - W S0^T: the corrected values d of the chunk's tokens.
      for (int i = 0; i < c; ++i) {
        for (int vv = 0; vv < V; ++vv) {
          double acc = 0.0;
          for (int x = 0; x < K; ++x) acc += W[i * K + x] * S0[vv * K + x];
          U[i * V + vv] -= acc;
        }
      }
      // O_i = e^gam_i (S0 q_i) + sum_{j<=i} e^(gam_i-gam_j) (q_i.k_j) U_j.
      for (int i = 0; i < c; ++i) {
        const float* qi = qrow(t0 + i);
        float* oi = o + (static_cast<size_t>(t0 + i) * HV + h) * V;
        std::vector<double> coef(i + 1);
        for (int j = 0; j <= i; ++j) {
          coef[j] = std::exp(gam[i] - gam[j]) * Dot(qi, krow(t0 + j), K);
        }
        const double ei = std::exp(gam[i]);
        for (int vv = 0; vv < V; ++vv) {
          double acc = 0.0;
          for (int x = 0; x < K; ++x) acc += S0[vv * K + x] * qi[x];
          acc *= ei;
          for (int j = 0; j <= i; ++j) acc += coef[j] * U[j * V + vv];
          oi[vv] = static_cast<float>(acc);
        }
      }
      // S = e^gam_c S0 + sum_j e^(gam_c - gam_j) U_j k_j^T.
      const double ec = std::exp(gam[c - 1]);
      std::vector<double> dj(c);
      for (int j = 0; j < c; ++j) dj[j] = std::exp(gam[c - 1] - gam[j]);
      for (int vv = 0; vv < V; ++vv) {
        for (int x = 0; x < K; ++x) {
          double acc = ec * S0[vv * K + x];
          for (int j = 0; j < c; ++j) {
            acc += dj[j] * U[j * V + vv] * krow(t0 + j)[x];
          }
          S[static_cast<size_t>(vv) * K + x] = static_cast<float>(acc);
        }
      }
    }
  }
}

bool ReplayStep(const GdnDims& dims, int L, int write_pos, bool force_flush,
                const float* q, const float* k, const float* v, const float* g,
                const float* beta, float* checkpoint, float* ring_k,
                float* ring_d, float* ring_g, float* o) {
  const int H = dims.num_k_heads, HV = dims.num_v_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim;
  const int r = HV / H;
  const int n = write_pos;
  assert(L >= 1 && n >= 0 && n < L);
  const bool flush = force_flush || n == L - 1;
  std::vector<double> w(L > 0 ? L : 1);
  std::vector<double> cq(n), ck(n);
  for (int h = 0; h < HV; ++h) {
    const int kh = h / r;
    const float* qh = q + static_cast<size_t>(kh) * K;
    const float* kh_vec = k + static_cast<size_t>(kh) * K;
    const float* rk = ring_k + static_cast<size_t>(kh) * L * K;  // [L, K]
    float* rd = ring_d + static_cast<size_t>(h) * L * V;         // [L, V]
    float* rg = ring_g + static_cast<size_t>(h) * L;             // [L]
    float* C = checkpoint + static_cast<size_t>(h) * V * K;      // [V, K]
    float* oh = o + static_cast<size_t>(h) * V;
    const double A = RingWeights(rg, n, w.data());
    if (flush) {
      // Materialise S_{t-1} in place, then the plain step writes S_t.
      FoldHead(V, K, n, A, w.data(), rk, rd, C);
      HeadStep(V, K, qh, kh_vec, v + static_cast<size_t>(h) * V, g[h], beta[h],
               C, oh);
      continue;
    }
    // History route: y_x = A (C x) + sum_j w_j (k_j . x) d_j for x = q, k.
    for (int j = 0; j < n; ++j) {
      cq[j] = w[j] * Dot(rk + static_cast<size_t>(j) * K, qh, K);
      ck[j] = w[j] * Dot(rk + static_cast<size_t>(j) * K, kh_vec, K);
    }
    const double alpha = std::exp(static_cast<double>(g[h]));
    const double kq = Dot(kh_vec, qh, K);
    for (int vi = 0; vi < V; ++vi) {
      const float* row = C + static_cast<size_t>(vi) * K;
      double yq = A * Dot(row, qh, K);
      double yk = A * Dot(row, kh_vec, K);
      for (int j = 0; j < n; ++j) {
        yq += cq[j] * rd[j * V + vi];
        yk += ck[j] * rd[j * V + vi];
      }
      const double d =
          beta[h] * (v[static_cast<size_t>(h) * V + vi] - alpha * yk);
      oh[vi] = static_cast<float>(alpha * yq + kq * d);
      rd[n * V + vi] = static_cast<float>(d);
    }
    rg[n] = g[h];
    // One k per key head: written once, by the first value head of the group.
    if (h % r == 0) {
      std::memcpy(ring_k + (static_cast<size_t>(kh) * L + n) * K, kh_vec,
                  sizeof(float) * K);
    }
  }
  return flush;
}

void ReplayFold(const GdnDims& dims, int L, int write_pos, float* checkpoint,
                const float* ring_k, const float* ring_d, const float* ring_g) {
  const int H = dims.num_k_heads, HV = dims.num_v_heads;
  const int K = dims.head_k_dim, V = dims.head_v_dim;
  const int r = HV / H;
  const int n = write_pos;
  assert(L >= 1 && n >= 0 && n <= L);
  std::vector<double> w(L > 0 ? L : 1);
  for (int h = 0; h < HV; ++h) {
    const double A =
        RingWeights(ring_g + static_cast<size_t>(h) * L, n, w.data());
    FoldHead(V, K, n, A, w.data(), ring_k + static_cast<size_t>(h / r) * L * K,
             ring_d + static_cast<size_t>(h) * L * V,
             checkpoint + static_cast<size_t>(h) * V * K);
  }
}

}  // namespace rollout::gdn
