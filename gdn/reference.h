// Gated DeltaNet (GDN) reference operations in fp32 on the CPU: the oracle for
// every CUDA kernel in gdn/ and the GDN part of the CPU backend. Math:
// ../shared/docs/gdn_replayssm.md sections 1 and 4. Conventions follow Hugging
// Face transformers (qwen3_next / qwen3_5): L2 norm with eps inside the root,
// q scaled by K^-1/2 after the norm, softplus linear above 20, beta kept in
// fp32 (one convention for prefill and decode).
//
// Notation (one GDN layer): H key heads, HV value heads (HV % H == 0,
// r = HV / H; value head h uses key head h / r, repeat_interleave semantics),
// K = key head dim, V = value head dim, Kc = conv kernel size,
// conv_dim = 2*H*K + HV*V (channels in the order [Q | K | V], head-major
// inside each block).
//
// Layouts (row-major, fp32):
//   recurrent state   [HV, V, K]     K contiguous (the serving layout; HF
//                                    stores the transpose [K, V])
//   conv state        [Kc-1, conv_dim]  the last Kc-1 pre-conv inputs, oldest
//                                    first
//   ReplaySSM ring    k: [H, L, K], d: [HV, L, V], g: [HV, L]  (L = ring
//                     length; entry j of a ring is the j-th decode step since
//                     the last flush)
//
// Storage is fp32; reductions (dot products, norms, the small chunk products)
// accumulate in double so that the oracle sits well below the fp32 rounding of
// the kernels it checks.
//
// These functions work on one sequence; callers parallelise over sequences and
// heads. Example (one decode step of one sequence, conv then recurrence):
//
//   CausalConv(dims, conv_w, x, /*T=*/1, conv_state, y);
//   PrepareQkv(dims, y, q, k, v);
//   Gates(dims.num_v_heads, a, b, A_log, dt_bias, g, beta);
//   RecurrentForward(dims, 1, q, k, v, g, beta, state, o);
#ifndef ROLLOUT_GDN_REFERENCE_H_
#define ROLLOUT_GDN_REFERENCE_H_

#include "absl/status/status.h"

namespace rollout::gdn {

struct GdnDims {
  int num_k_heads = 0;  // H
  int num_v_heads = 0;  // HV
  int head_k_dim = 0;   // K
  int head_v_dim = 0;   // V
  int conv_kernel = 4;  // Kc

  int key_dim() const { return num_k_heads * head_k_dim; }
  int value_dim() const { return num_v_heads * head_v_dim; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
  int state_floats() const { return num_v_heads * head_v_dim * head_k_dim; }
  int conv_state_floats() const { return (conv_kernel - 1) * conv_dim(); }
  // Floats of one ring of length L: k [H,L,K] + d [HV,L,V] + g [HV,L].
  int ring_floats(int L) const {
    return L *
           (num_k_heads * head_k_dim + num_v_heads * head_v_dim + num_v_heads);
  }
  // All sizes positive, HV a multiple of H, Kc >= 1.
  absl::Status Validate() const;
};

constexpr float kL2NormEps = 1e-6f;

// ---- Short causal depthwise conv + SiLU -------------------------------------
// weight: [conv_dim, Kc] (HF conv1d.weight [conv_dim, 1, Kc] squeezed), no
// bias. x: [T, conv_dim] pre-conv inputs; y: [T, conv_dim] =
// silu(sum_i w[c,i] * x_{t-Kc+1+i}[c]) where inputs before the first token come
// from `conv_state` (zeros for a fresh sequence). On return conv_state holds
// the last Kc-1 inputs (of the state followed by x). Decode is T == 1. T == 0
// is a no-op.
void CausalConv(const GdnDims& dims, const float* weight, const float* x, int T,
                float* conv_state, float* y);

// ---- Gates -----------------------------------------------------------------
// a, b: [HV] raw projections; A_log, dt_bias: [HV]. g = -exp(A_log) *
// softplus(a + dt_bias) (softplus(x) = x for x > 20), beta = sigmoid(b). Both
// fp32 (one convention for prefill and decode).
void Gates(int num_v_heads, const float* a, const float* b, const float* A_log,
           const float* dt_bias, float* g, float* beta);

// x[0..n) *= 1 / sqrt(sum x^2 + eps)  (eps inside the root, as HF's l2norm).
void L2NormInPlace(float* x, int n, float eps = kL2NormEps);

// Splits one post-conv row [conv_dim] into q [H,K], k [H,K], v [HV,V];
// L2-normalises q and k per head and scales q by K^-1/2. The form every
// recurrence function below takes.
void PrepareQkv(const GdnDims& dims, const float* conv_out_row, float* q,
                float* k, float* v);

// ---- Gated delta rule ------------------------------------------------------
// Per value head h (key head h / r), with alpha = exp(g):
//   S <- alpha * S;  d = beta * (v - S k);  S <- S + d k^T;  o = S q
// q, k: [T, H, K] (prepared); v: [T, HV, V]; g, beta: [T, HV]; state:
// [HV, V, K] in/out; o: [T, HV, V]. Token loop: the definition.
void RecurrentForward(const GdnDims& dims, int T, const float* q,
                      const float* k, const float* v, const float* g,
                      const float* beta, float* state, float* o);

// Same function in the chunked WY/UT form (fla / HF
// torch_chunk_gated_delta_rule algebra), chunk size `chunk` (64 in HF); any T,
// including T not a multiple of `chunk` (the last chunk is simply shorter, the
// same as HF's zero padding). Writes the exact final state (the ReplaySSM
// checkpoint after a prefill; the ring is empty then).
void ChunkedForward(const GdnDims& dims, int T, const float* q, const float* k,
                    const float* v, const float* g, const float* beta,
                    float* state, float* o, int chunk = 64);

// ---- ReplaySSM decode ------------------------------------------------------
// One decode step of one sequence on the ring path. `checkpoint` is the state
// slot [HV,V,K] (the state at the last flush); the ring holds `write_pos`
// entries (k_j, d_j, g_j) appended since, 0 <= write_pos < L. Non-flush step
// (write_pos < L-1 and !force_flush): computes o by the fp32 history route
// without materialising S, appends (k_t, d_t, g_t) at index write_pos;
// checkpoint untouched. Flush step (write_pos == L-1 or force_flush):
// materialises S_t into `checkpoint` (the entries 0..write_pos-1 folded, then
// the plain step), appends nothing. The caller advances its cursor: write_pos+1
// after a non-flush step, 0 after a flush. q, k: [H, K] (prepared); v: [HV, V];
// g, beta: [HV]; o: [HV, V]. Returns whether it flushed. With write_pos == 0 a
// flush is bit-identical to RecurrentForward with T == 1 (so L == 1 is the
// plain step).
bool ReplayStep(const GdnDims& dims, int L, int write_pos, bool force_flush,
                const float* q, const float* k, const float* v, const float* g,
                const float* beta, float* checkpoint, float* ring_k,
                float* ring_d, float* ring_g, float* o);

// Folds the first `write_pos` ring entries into `checkpoint` (no new token):
// afterwards the checkpoint is the exact current state and the ring is empty
// (cursor 0). Any consumer of a slot other than the ring path (chunked-prefill
// continuation, fork/copy, export) calls this first.
void ReplayFold(const GdnDims& dims, int L, int write_pos, float* checkpoint,
                const float* ring_k, const float* ring_d, const float* ring_g);

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_REFERENCE_H_
