// Dense SwiGLU MLP: y = down(silu(gate(x)) * up(x)), with the gate and up
// projections stored as one [2I, D] matrix (gate rows first).
#ifndef ROLLOUT_MODEL_OPS_MLP_H_
#define ROLLOUT_MODEL_OPS_MLP_H_

namespace rollout::model::ops {

struct MlpView {
  const float* gate_up = nullptr;  // [2I, D]
  const float* down = nullptr;     // [D, I]
  int intermediate = 0;            // I
};

// x: [M, D]; y: [M, D] (overwritten, must not alias x).
void SwiGluMlp(const float* x, int M, int D, const MlpView& w, float* y);

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_MLP_H_
