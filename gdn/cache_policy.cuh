// L2 cache policies (PTX createpolicy, sm_80+) and the .L2::cache_hint forms
// of the 16-byte global load, store and cp.async that take them, shared by
// the decode kernels (decode_kernel.cuh) and the memory-pattern
// microbenchmarks (bench/rmw_micro.cu) that measured them. Under
// GDN_CUDA_EMU (the CPU emulation, gdn/emu) gdn/emu/cache_policy.h defines
// the same functions.
#ifndef ROLLOUT_GDN_CACHE_POLICY_CUH_
#define ROLLOUT_GDN_CACHE_POLICY_CUH_

#ifdef GDN_CUDA_EMU
#include "gdn/emu/cache_policy.h"
#else

#include <cstdint>

namespace rollout::gdn {

// Lines touched under this policy are kept in L2 in preference to others.
__device__ __forceinline__ uint64_t EvictLastPolicy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n"
               : "=l"(pol));
  return pol;
}

// Lines touched under this policy are the first L2 evicts (read-once data).
__device__ __forceinline__ uint64_t EvictFirstPolicy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n"
               : "=l"(pol));
  return pol;
}

// 16-byte global load / store under policy `pol`.
__device__ __forceinline__ float4 LoadHint4(const void* p, uint64_t pol) {
  float4 v;
  asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void StoreHint4(void* p, float4 v, uint64_t pol) {
  asm volatile(
      "st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(p),
      "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol)
      : "memory");
}

// 8-byte global load and store of raw bits under policy `pol`.
__device__ __forceinline__ uint2 LoadHint8(const void* p, uint64_t pol) {
  uint2 v;
  asm volatile("ld.global.L2::cache_hint.v2.b32 {%0, %1}, [%2], %3;\n"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void StoreHint8(void* p, uint2 v, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;\n" ::"l"(p),
               "r"(v.x), "r"(v.y), "l"(pol)
               : "memory");
}

// 16-byte global -> shared cp.async (L1 bypassed) under policy `pol`.
__device__ __forceinline__ void CpAsync16Hint(void* smem, const void* gmem,
                                              uint64_t pol) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile(
      "cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(s),
      "l"(gmem), "l"(pol));
}

}  // namespace rollout::gdn

#endif  // GDN_CUDA_EMU
#endif  // ROLLOUT_GDN_CACHE_POLICY_CUH_
