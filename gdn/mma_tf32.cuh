// fp32 matrix products on tensor cores (private to gdn/*.cu): 3xTF32 with
// mma.sync m16n8k8. Each operand is split x = hi + lo (both tf32) and each
// product sums lo*hi + hi*lo + hi*hi in fp32: ~fp32 accuracy (relative error
// ~1e-6, against ~1e-3 for a single tf32 pass) at a third of tf32's rate.
#ifndef ROLLOUT_GDN_MMA_TF32_CUH_
#define ROLLOUT_GDN_MMA_TF32_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace rollout::gdn::internal {

// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k8", .tf32), with
// g = lane / 4, t = lane % 4: A (16 x 8, row) a0 (g, t), a1 (g + 8, t),
// a2 (g, t + 4), a3 (g + 8, t + 4); B (8 x 8, col) b0 (k = t, n = g), b1 (k =
// t + 4, n = g); C (16 x 8) c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t),
// c3 (g + 8, 2t + 1).
struct Tf32x2 {
  uint32_t hi, lo;
};
#ifdef GDN_CUDA_EMU
}  // namespace rollout::gdn::internal
#include "gdn/emu/mma_tf32_ops.h"  // the two below on the CPU emulation
namespace rollout::gdn::internal {
#else
__device__ __forceinline__ Tf32x2 SplitTf32(float x) {
  uint32_t hi, lo;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(hi) : "f"(x));
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(lo) : "f"(x - __uint_as_float(hi)));
  return {hi, lo};
}
__device__ __forceinline__ void MmaTf32(float (&c)[4], uint32_t a0, uint32_t a1,
                                        uint32_t a2, uint32_t a3, uint32_t b0,
                                        uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#endif  // GDN_CUDA_EMU
// A 16 x 8 tile of A at a (element (r, k) = a[r * rs + k * ks]), split.
struct FragA {
  Tf32x2 x[4];
};
__device__ __forceinline__ FragA LoadFragA(const float* a, int rs, int ks) {
  const int g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;
  FragA f;
  f.x[0] = SplitTf32(a[g * rs + t * ks]);
  f.x[1] = SplitTf32(a[(g + 8) * rs + t * ks]);
  f.x[2] = SplitTf32(a[g * rs + (t + 4) * ks]);
  f.x[3] = SplitTf32(a[(g + 8) * rs + (t + 4) * ks]);
  return f;
}
// An 8 x 8 tile of B at b (element (k, n) = b[k * ks + n * ns]), split.
struct FragB {
  Tf32x2 x[2];
};
__device__ __forceinline__ FragB LoadFragB(const float* b, int ks, int ns) {
  const int g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;
  FragB f;
  f.x[0] = SplitTf32(b[t * ks + g * ns]);
  f.x[1] = SplitTf32(b[(t + 4) * ks + g * ns]);
  return f;
}
// c += a b in 3xTF32 (the small terms first).
__device__ __forceinline__ void Mma3xTf32(float (&c)[4], const FragA& a,
                                          const FragB& b) {
  MmaTf32(c, a.x[0].lo, a.x[1].lo, a.x[2].lo, a.x[3].lo, b.x[0].hi, b.x[1].hi);
  MmaTf32(c, a.x[0].hi, a.x[1].hi, a.x[2].hi, a.x[3].hi, b.x[0].lo, b.x[1].lo);
  MmaTf32(c, a.x[0].hi, a.x[1].hi, a.x[2].hi, a.x[3].hi, b.x[0].hi, b.x[1].hi);
}

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_MMA_TF32_CUH_
