// The CPU emulation's gdn/cache_policy.cuh (included from there under
// GDN_CUDA_EMU): the same functions on gdn/emu/emu.h. A cache policy only
// steers L2, so here it is a value the loads and stores ignore.
#ifndef ROLLOUT_GDN_EMU_CACHE_POLICY_H_
#define ROLLOUT_GDN_EMU_CACHE_POLICY_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "gdn/emu/emu.h"

namespace rollout::gdn {

inline uint64_t EvictLastPolicy() { return 1; }
inline uint64_t EvictFirstPolicy() { return 2; }

inline float4 LoadHint4(const void* p, uint64_t) {
  float4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void StoreHint4(void* p, float4 v, uint64_t) {
  std::memcpy(p, &v, sizeof(v));
}
inline uint2 LoadHint8(const void* p, uint64_t) {
  uint2 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void StoreHint8(void* p, uint2 v, uint64_t) {
  std::memcpy(p, &v, sizeof(v));
}

inline void CpAsync16Hint(void* smem, const void* gmem, uint64_t) {
  ::gdn_emu::CpAsync(smem, gmem, 16);
}

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_EMU_CACHE_POLICY_H_
