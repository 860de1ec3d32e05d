// The inline PTX of the GDN decode kernels besides the cache-policy forms
// (cache_policy.cuh), one wrapper each: cp.async copies and their groups, the
// relaxed index load, a 16-byte shared-memory load, bf16 tensor-core
// products with their shared-memory fragment loads, and programmatic
// dependent launch's grid control. Under
// GDN_CUDA_EMU (the CPU emulation, gdn/emu) gdn/emu/ptx_ops.h defines the
// same functions.
#ifndef ROLLOUT_GDN_PTX_OPS_CUH_
#define ROLLOUT_GDN_PTX_OPS_CUH_

#ifdef GDN_CUDA_EMU
#include "gdn/emu/ptx_ops.h"
#else

#include <cstdint>

namespace rollout::gdn::internal {

// 16-byte global -> shared copy that bypasses L1 and holds no register.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s),
               "l"(gmem));
}
__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void CpAsyncWaitAll() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
// All but the most recent commit group complete.
__device__ __forceinline__ void CpAsyncWaitAllButLast() {
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}

// A ReplaySSM row's index (slot, ring cursor) loaded where it stands. As
// plain loads, ptxas sank the ring cursor loads below the padding-row branch
// and each below the next test, so a CTA waited for three memory latencies
// in a row before its first state and ring copies (ncu SASS, run 63: 16/32
// B = 1). A relaxed (strong) load is not moved past those branches, so all
// three are in flight together. Run 65: cycles 1-8 % shorter (16/16 B = 8:
// -8 %), except 16/32 B = 8 (+5 %). As volatile loads (system scope) they
// cost 13 % at 16/32 B = 1 (run 64). The packed step's single slot load
// stays plain (strong, it measured 1-2 % slower at B = 8).
__device__ __forceinline__ int LoadIndex(const int32_t* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}

// A float4 of shared memory in one 16-byte load (NVVM may split a plain
// float4 read of a constant shared address into four).
__device__ __forceinline__ float4 LdShared4(const float4* p) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
  return v;
}

// bf16 products on tensor cores with fp32 accumulation: D = A B + C for one
// warp, A 16 x 16 (row), B 16 x 8 (col). Fragment layouts (PTX ISA, "Matrix
// fragments for mma.m16n8k16", .bf16), g = lane / 4, t = lane % 4: A a0 =
// (g; 2t, 2t + 1), a1 = (g + 8; 2t, 2t + 1), a2 = (g; 2t + 8, 2t + 9), a3 =
// (g + 8; 2t + 8, 2t + 9); B b0 = (2t, 2t + 1; g), b1 = (2t + 8, 2t + 9; g);
// two bf16 per register, the lower index in the low half; C c0, c1 = (g; 2t,
// 2t + 1), c2, c3 = (g + 8; 2t, 2t + 1). Products of bf16 operands are exact
// in fp32.
__device__ __forceinline__ void MmaBf16(float (&c)[4], const uint32_t (&a)[4],
                                        uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Four 8 x 8 bf16 matrices from shared memory: lane l passes the address of
// row l % 8 of matrix l / 8 (16 bytes, 16-byte aligned) and gets, of matrix
// i, row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 in a[i]: for a 16 x 16
// A tile, lane l passes row (l % 8) + 8 ((l / 8) % 2) at column 8 (l / 16).
__device__ __forceinline__ void LdMatrixX4(uint32_t (&a)[4],
                                           const uint16_t* p) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
      : "r"(s));
}
// The same, transposed: of matrix i, lane l gets elements (2 (l % 4), l / 4)
// and (2 (l % 4) + 1, l / 4) in b[i]: from a row-major [k][n] array, the B
// fragments of two n8 tiles (b[0], b[1] and b[2], b[3] for matrices of rows
// k 0-7, 8-15 at columns n, then n + 8).
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&b)[4],
                                                const uint16_t* p) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
      : "r"(s));
}

// Programmatic dependent launch (sm_90; a no-op unless the launch allowed
// it). GridDependencyWait: wait for the preceding kernel's completion and
// memory. GridLaunchDependents: let the next kernel, if launched with PDL, be
// scheduled now; it still reads nothing of ours before its own wait.
__device__ __forceinline__ void GridDependencyWait() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}
__device__ __forceinline__ void GridLaunchDependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
}

}  // namespace rollout::gdn::internal

#endif  // GDN_CUDA_EMU
#endif  // ROLLOUT_GDN_PTX_OPS_CUH_
