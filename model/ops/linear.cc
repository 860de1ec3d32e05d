#include "model/ops/linear.h"

#include <cblas.h>

namespace rollout::model::ops {

void Linear(const float* x, int M, int in, const float* w, int out, float* y,
            int ldy) {
  if (M <= 0 || out <= 0) return;
  if (ldy == 0) ldy = out;
  if (M == 1) {
    // y = W x: the same kernel for every decode row.
    cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, w, in, x, 1, 0.0f,
                y, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, out, in, 1.0f, x, in,
              w, in, 0.0f, y, ldy);
}

}  // namespace rollout::model::ops
