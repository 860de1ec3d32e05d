// Philox4x32-10: the counter-based random generator of Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3" (SC'11), as specified by the
// Random123 library. A pure function of (counter, key): the same inputs give
// the same four 32-bit words on every machine, in any order of evaluation.
//
// The sampler keys it by (seed, completion index, step), so a completion's
// random draws never depend on batch composition, preemption or restarts:
//
//   PhiloxCounter ctr = {step_lo, step_hi, completion_index, stream};
//   PhiloxKey key = {seed_lo, seed_hi};
//   PhiloxBlock r = Philox4x32_10(ctr, key);
//   double u = UniformDouble(r);  // in [0, 1)
#ifndef ROLLOUT_WORKER_ENGINE_PHILOX_H_
#define ROLLOUT_WORKER_ENGINE_PHILOX_H_

#include <array>
#include <cstdint>

namespace rollout::worker {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;
using PhiloxBlock = std::array<uint32_t, 4>;

// Ten rounds of Philox4x32 (the Random123 default and the published
// known-answer vectors' variant).
PhiloxBlock Philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A double in [0, 1) with 53 random bits taken from words 0 and 1.
double UniformDouble(const PhiloxBlock& block);

// The draw the sampler uses for one (seed, completion index, step): a uniform
// double in [0, 1). `stream` separates independent uses of the same
// (seed, index, step) (0 = token sampling).
double SampleUniform(uint64_t seed, uint32_t completion_index, uint64_t step,
                     uint32_t stream = 0);

}  // namespace rollout::worker

#endif  // ROLLOUT_WORKER_ENGINE_PHILOX_H_
