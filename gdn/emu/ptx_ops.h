// The CPU emulation's gdn/ptx_ops.cuh (included from there under
// GDN_CUDA_EMU): the same functions on gdn/emu/emu.h. cp.async copies are
// completed by the wait that retires their group (emu.h); the relaxed load
// is a plain one (the emulation runs a thread until it blocks).
#ifndef ROLLOUT_GDN_EMU_PTX_OPS_H_
#define ROLLOUT_GDN_EMU_PTX_OPS_H_

#include <cstdint>
#include <cstring>

#include "gdn/emu/cuda_emu.h"
#include "gdn/emu/emu.h"

namespace rollout::gdn::internal {

inline void CpAsync16(void* smem, const void* gmem) {
  ::gdn_emu::CpAsync(smem, gmem, 16);
}
inline void CpAsyncCommit() { ::gdn_emu::CpAsyncCommit(); }
inline void CpAsyncWaitAll() { ::gdn_emu::CpAsyncWaitGroup(0); }
inline void CpAsyncWaitAllButLast() { ::gdn_emu::CpAsyncWaitGroup(1); }

inline int LoadIndex(const int32_t* p) { return *p; }

inline float4 LdShared4(const float4* p) { return *p; }

// mma.m16n8k16 bf16 (ptx_ops.cuh has the fragment layouts): the warp's
// fragments gathered, each lane's four results as fp32 sums of the exact
// products in k order (the tensor cores' own summation order and rounding
// are not modelled; the kernels' tolerances cover both).
inline float Bf16Half(uint32_t pair, int hi) {
  return __uint_as_float(hi ? (pair & 0xffff0000u) : (pair << 16));
}
inline void MmaBf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                    uint32_t b1) {
  struct Frag {
    uint32_t a[4], b0, b1;
  };
  const Frag mine = {{a[0], a[1], a[2], a[3]}, b0, b1};
  Frag all[32];
  ::gdn_emu::WarpAllGather(&mine, sizeof(Frag), all);
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int e = 0; e < 2; ++e) {
      A[g][2 * t + e] = Bf16Half(all[l].a[0], e);
      A[g + 8][2 * t + e] = Bf16Half(all[l].a[1], e);
      A[g][2 * t + 8 + e] = Bf16Half(all[l].a[2], e);
      A[g + 8][2 * t + 8 + e] = Bf16Half(all[l].a[3], e);
      B[2 * t + e][g] = Bf16Half(all[l].b0, e);
      B[2 * t + 8 + e][g] = Bf16Half(all[l].b1, e);
    }
  }
  const int lane = ::gdn_emu::LaneId(), g = lane / 4, t = lane % 4;
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r / 2), col = 2 * t + (r % 2);
    float sum = 0.f;
    for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
    c[r] += sum;
  }
}
// ldmatrix .x4: each lane's rows come from the addresses other lanes pass
// (row r of matrix i from lane 8 i + r), gathered once.
inline void LdMatrixX4(uint32_t (&a)[4], const uint16_t* p) {
  const uint16_t* rows[32];
  ::gdn_emu::WarpAllGather(&p, sizeof(p), rows);
  const int lane = ::gdn_emu::LaneId();
  for (int i = 0; i < 4; ++i) {
    std::memcpy(&a[i], rows[8 * i + lane / 4] + 2 * (lane % 4), 4);
  }
}
inline void LdMatrixX4Trans(uint32_t (&b)[4], const uint16_t* p) {
  const uint16_t* rows[32];
  ::gdn_emu::WarpAllGather(&p, sizeof(p), rows);
  const int lane = ::gdn_emu::LaneId(), r = 2 * (lane % 4), c = lane / 4;
  for (int i = 0; i < 4; ++i) {
    b[i] = static_cast<uint32_t>(rows[8 * i + r][c]) |
           (static_cast<uint32_t>(rows[8 * i + r + 1][c]) << 16);
  }
}

// The wait holds a PDL launch's threads until the preceding kernel completes
// (the emulation checks that nothing before it touches that kernel's memory:
// gdn/emu/device_memory.h); letting dependents launch early changes nothing
// here (the check assumes they may).
inline void GridDependencyWait() { ::gdn_emu::GridDependencyWait(); }
inline void GridLaunchDependents() {}

}  // namespace rollout::gdn::internal

#endif  // ROLLOUT_GDN_EMU_PTX_OPS_H_
