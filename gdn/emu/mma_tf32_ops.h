// The CPU emulation's tf32 operations of gdn/mma_tf32.cuh (included from
// there under GDN_CUDA_EMU): the rounding of cvt.rna.tf32.f32 and
// mma.sync m16n8k8 tf32 with the fragment layouts documented there.
#ifndef ROLLOUT_GDN_EMU_MMA_TF32_OPS_H_
#define ROLLOUT_GDN_EMU_MMA_TF32_OPS_H_

#include <cstdint>
#include <cstring>

#include "gdn/emu/cuda_emu.h"
#include "gdn/emu/emu.h"

namespace rollout::gdn::internal {

// fp32 -> tf32 (10 mantissa bits), to nearest with ties away from zero, as
// fp32 bits with the low 13 bits clear; NaN and infinities unchanged.
inline uint32_t RoundTf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  return (u + 0x1000u) & 0xffffe000u;
}

inline Tf32x2 SplitTf32(float x) {
  const uint32_t hi = RoundTf32(x);
  return {hi, RoundTf32(x - __uint_as_float(hi))};
}

inline void MmaTf32(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                    uint32_t a3, uint32_t b0, uint32_t b1) {
  struct Frag {
    uint32_t a[4], b[2];
  };
  const Frag mine = {{a0, a1, a2, a3}, {b0, b1}};
  Frag all[32];
  ::gdn_emu::WarpAllGather(&mine, sizeof(Frag), all);
  float A[16][8], B[8][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    A[g][t] = __uint_as_float(all[l].a[0]);
    A[g + 8][t] = __uint_as_float(all[l].a[1]);
    A[g][t + 4] = __uint_as_float(all[l].a[2]);
    A[g + 8][t + 4] = __uint_as_float(all[l].a[3]);
    B[t][g] = __uint_as_float(all[l].b[0]);
    B[t + 4][g] = __uint_as_float(all[l].b[1]);
  }
  const int lane = ::gdn_emu::LaneId(), g = lane / 4, t = lane % 4;
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r / 2), col = 2 * t + (r % 2);
    float sum = 0.f;
    for (int k = 0; k < 8; ++k) sum += A[row][k] * B[k][col];
    c[r] += sum;
  }
}

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_EMU_MMA_TF32_OPS_H_
