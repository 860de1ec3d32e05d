#include "worker/engine/philox.h"

namespace rollout::worker {
namespace {

// Multipliers and Weyl key increments from the Random123 specification.
constexpr uint32_t kM0 = 0xD2511F53u;
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;
constexpr uint32_t kW1 = 0xBB67AE85u;

inline PhiloxBlock Round(const PhiloxBlock& c, const PhiloxKey& k) {
  const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32);
  const uint32_t lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32);
  const uint32_t lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

PhiloxBlock Philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  PhiloxBlock c = counter;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    c = Round(c, key);
  }
  return c;
}

double UniformDouble(const PhiloxBlock& block) {
  // 27 high bits of word 0 and 26 of word 1: 53 bits, exactly representable.
  const uint64_t a = block[0] >> 5;
  const uint64_t b = block[1] >> 6;
  return static_cast<double>((a << 26) | b) * (1.0 / 9007199254740992.0);
}

double SampleUniform(uint64_t seed, uint32_t completion_index, uint64_t step,
                     uint32_t stream) {
  const PhiloxCounter ctr = {static_cast<uint32_t>(step),
                             static_cast<uint32_t>(step >> 32),
                             completion_index, stream};
  const PhiloxKey key = {static_cast<uint32_t>(seed),
                         static_cast<uint32_t>(seed >> 32)};
  return UniformDouble(Philox4x32_10(ctr, key));
}

}  // namespace rollout::worker
