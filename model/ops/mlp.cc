#include "model/ops/mlp.h"

#include <cstddef>
#include <vector>

#include "model/ops/activation.h"
#include "model/ops/linear.h"

namespace rollout::model::ops {

void SwiGluMlp(const float* x, int M, int D, const MlpView& w, float* y) {
  const int I = w.intermediate;
  std::vector<float> h(static_cast<size_t>(M) * 2 * I);  // [M, 2I]
  Linear(x, M, D, w.gate_up, 2 * I, h.data());
  std::vector<float> act(static_cast<size_t>(M) * I);  // [M, I]
  for (int m = 0; m < M; ++m) {
    const float* gate = h.data() + static_cast<size_t>(m) * 2 * I;
    const float* up = gate + I;
    float* a = act.data() + static_cast<size_t>(m) * I;
    for (int i = 0; i < I; ++i) a[i] = Silu(gate[i]) * up[i];
  }
  Linear(act.data(), M, I, w.down, D, y);
}

}  // namespace rollout::model::ops
