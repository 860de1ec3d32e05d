// Division by a divisor fixed at launch time, for kernel index math: a
// multiply-high, an add and a shift instead of the ~20-instruction integer
// division sequence (the decode kernels split their block index by the
// runtime head count at the start of every CTA, on the path to the first
// load).
#ifndef ROLLOUT_GDN_FAST_DIV_H_
#define ROLLOUT_GDN_FAST_DIV_H_

#include <cstdint>

#include "gdn/host_device.h"

namespace rollout::gdn {

// Exact x / d and x % d for 0 <= x < 2^31 and 1 <= d < 2^31
// (Granlund-Montgomery with a rounded-up 33-bit multiplier 2^32 + mul):
// with s = ceil(log2 d) and m' = ceil(2^(32+s) / d) = 2^32 + mul, the error
// e = m' d - 2^(32+s) is below d <= 2^s, so x e < 2^(32+s) for any 32-bit x
// and floor(x m' / 2^(32+s)) = floor(x / d). The sum hi + x stays below 2^32
// because hi < x < 2^31.
struct FastDiv {
  uint32_t d = 1;
  uint32_t mul = 0;
  uint32_t shift = 0;

  FastDiv() = default;
  explicit FastDiv(uint32_t divisor) : d(divisor) {
    while ((uint64_t{1} << shift) < d) ++shift;
    const uint64_t two32 = uint64_t{1} << 32;
    const uint64_t top = uint64_t{1} << (32 + shift);  // shift <= 31
    mul = static_cast<uint32_t>((top + d - 1) / d - two32);
  }

  ROLLOUT_HD int Div(int x) const {
    const uint32_t ux = static_cast<uint32_t>(x);
#ifdef __CUDA_ARCH__
    const uint32_t hi = __umulhi(ux, mul);
#else
    const uint32_t hi =
        static_cast<uint32_t>((static_cast<uint64_t>(ux) * mul) >> 32);
#endif
    return static_cast<int>((hi + ux) >> shift);
  }
  ROLLOUT_HD int Mod(int x) const { return x - Div(x) * static_cast<int>(d); }
};

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_FAST_DIV_H_
