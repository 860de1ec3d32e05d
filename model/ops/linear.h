// y = x W^T for torch-Linear weights (W [out, in], row-major), through
// OpenBLAS. One call per row of the batch keeps rows independent: the
// arithmetic for a token depends only on the call's own shapes, never on what
// else is in the batch.
#ifndef ROLLOUT_MODEL_OPS_LINEAR_H_
#define ROLLOUT_MODEL_OPS_LINEAR_H_

namespace rollout::model::ops {

// x: [M, in], w: [out, in], y: [M, out] (overwritten). ldy >= out is y's row
// stride (so a result can land in a slice of a wider buffer); 0 means out.
void Linear(const float* x, int M, int in, const float* w, int out, float* y,
            int ldy = 0);

}  // namespace rollout::model::ops

#endif  // ROLLOUT_MODEL_OPS_LINEAR_H_
