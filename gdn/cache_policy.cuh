// L2 cache policies for the .L2::cache_hint forms of ld/st/cp.async (PTX
// createpolicy, sm_80+), shared by the decode kernels (decode_kernel.cuh) and
// the memory-pattern microbenchmarks (bench/rmw_micro.cu) that measured them.
#ifndef ROLLOUT_GDN_CACHE_POLICY_CUH_
#define ROLLOUT_GDN_CACHE_POLICY_CUH_

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

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_CACHE_POLICY_CUH_
