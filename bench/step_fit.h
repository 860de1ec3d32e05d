// A decode step's time over a sweep's batches as a cost per row plus a fixed
// cost per call, and the ReplaySSM cycle's from its steps' (host code, no
// GPU). The fixed cost is what a step pays at its ends (launch, the first
// wave's ramp, the last CTAs' drain): shared by the packed step and the
// ReplaySSM cycle, it lowers their ratio more the shorter the cycle is
// (docs/benchmarks/gdn_history.md, "Run 124").
#ifndef ROLLOUT_BENCH_STEP_FIT_H_
#define ROLLOUT_BENCH_STEP_FIT_H_

#include <optional>
#include <vector>

namespace rollout::bench {

struct StepFit {
  double per_row_us = 0;  // slope: µs per decode row
  double fixed_us = 0;    // intercept: µs per call
};

// Least squares of us[i] = per_row_us * batches[i] + fixed_us. Empty unless
// the two lists have the same length and hold at least two distinct batches.
std::optional<StepFit> FitStep(const std::vector<int>& batches,
                               const std::vector<double>& us);

struct CycleFit {
  StepFit packed, nonflush, flush;
  StepFit cycle;  // ((L - 1) non-flush + flush) / L, term by term
  // packed.per_row_us / cycle.per_row_us: the ratio large batches tend to.
  double per_row_ratio = 0;
};

// The fits of one head shape's packed step, non-flush step and flush over
// the same batches, for a ring of `ring_len` (L) entries.
std::optional<CycleFit> FitCycle(const std::vector<int>& batches,
                                 const std::vector<double>& packed_us,
                                 const std::vector<double>& nonflush_us,
                                 const std::vector<double>& flush_us,
                                 int ring_len);

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_STEP_FIT_H_
