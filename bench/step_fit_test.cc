#include "bench/step_fit.h"

#include <gtest/gtest.h>

namespace rollout::bench {
namespace {

TEST(StepFitTest, RecoversAStraightLine) {
  const std::optional<StepFit> f = FitStep(
      {64, 96, 128, 256},
      {0.7 * 64 + 2.5, 0.7 * 96 + 2.5, 0.7 * 128 + 2.5, 0.7 * 256 + 2.5});
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->per_row_us, 0.7, 1e-12);
  EXPECT_NEAR(f->fixed_us, 2.5, 1e-10);
}

TEST(StepFitTest, LeastSquaresThroughScatter) {
  // Points 1, 2, 2 at B = 0, 1, 2: slope 0.5, intercept 7/6.
  const std::optional<StepFit> f = FitStep({0, 1, 2}, {1.0, 2.0, 2.0});
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->per_row_us, 0.5, 1e-12);
  EXPECT_NEAR(f->fixed_us, 7.0 / 6.0, 1e-12);
}

TEST(StepFitTest, NeedsTwoDistinctBatches) {
  EXPECT_FALSE(FitStep({}, {}).has_value());
  EXPECT_FALSE(FitStep({128}, {93.0}).has_value());
  EXPECT_FALSE(FitStep({128, 128}, {93.0, 94.0}).has_value());
  EXPECT_FALSE(FitStep({64, 128}, {48.0}).has_value());
}

TEST(StepFitTest, CycleIsTheStepsWeightedByTheRing) {
  const std::vector<int> b = {64, 128, 256};
  auto line = [&](double slope, double fixed) {
    std::vector<double> us;
    for (int x : b) us.push_back(slope * x + fixed);
    return us;
  };
  const std::optional<CycleFit> c =
      FitCycle(b, line(0.71, 2.1), line(0.39, 2.7), line(0.78, 5.1), 16);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->cycle.per_row_us, (15 * 0.39 + 0.78) / 16, 1e-12);
  EXPECT_NEAR(c->cycle.fixed_us, (15 * 2.7 + 5.1) / 16, 1e-9);
  EXPECT_NEAR(c->per_row_ratio, 0.71 / ((15 * 0.39 + 0.78) / 16), 1e-9);
  EXPECT_NEAR(c->packed.fixed_us, 2.1, 1e-9);
  EXPECT_FALSE(FitCycle(b, line(0.71, 2.1), line(0.39, 2.7), line(0.78, 5.1), 0)
                   .has_value());
  EXPECT_FALSE(FitCycle({128}, {93.0}, {53.0}, {104.0}, 16).has_value());
}

}  // namespace
}  // namespace rollout::bench
