#include "bench/step_fit.h"

#include <cstddef>

namespace rollout::bench {

std::optional<StepFit> FitStep(const std::vector<int>& batches,
                               const std::vector<double>& us) {
  const size_t n = batches.size();
  if (n < 2 || us.size() != n) return std::nullopt;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += batches[i];
    my += us[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (batches[i] - mx) * (batches[i] - mx);
    sxy += (batches[i] - mx) * (us[i] - my);
  }
  if (sxx == 0) return std::nullopt;  // one batch only
  StepFit f;
  f.per_row_us = sxy / sxx;
  f.fixed_us = my - f.per_row_us * mx;
  return f;
}

std::optional<CycleFit> FitCycle(const std::vector<int>& batches,
                                 const std::vector<double>& packed_us,
                                 const std::vector<double>& nonflush_us,
                                 const std::vector<double>& flush_us,
                                 int ring_len) {
  if (ring_len < 1) return std::nullopt;
  const std::optional<StepFit> p = FitStep(batches, packed_us);
  const std::optional<StepFit> nf = FitStep(batches, nonflush_us);
  const std::optional<StepFit> f = FitStep(batches, flush_us);
  if (!p || !nf || !f) return std::nullopt;
  CycleFit c;
  c.packed = *p;
  c.nonflush = *nf;
  c.flush = *f;
  const double l = ring_len;
  c.cycle.per_row_us = ((l - 1) * nf->per_row_us + f->per_row_us) / l;
  c.cycle.fixed_us = ((l - 1) * nf->fixed_us + f->fixed_us) / l;
  if (c.cycle.per_row_us > 0) {
    c.per_row_ratio = p->per_row_us / c.cycle.per_row_us;
  }
  return c;
}

}  // namespace rollout::bench
