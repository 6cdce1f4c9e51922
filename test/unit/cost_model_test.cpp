// The cost-model library (lib/schedule/model/): each fit and the equal-finish solve against
// hand-computed values, and what each does with empty and degenerate inputs (no points, one
// point, equal units, slopes at or below zero, a device whose fixed cost exceeds the finish time);
// the median, quantile and interquartile mean, NaN for no values.
#include "schedule/model/equal_finish.hpp"
#include "schedule/model/linear_cost.hpp"
#include "schedule/model/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace sinew::detail;

namespace {

constexpr double kExact = 1e-12;

}  // namespace

TEST(LinearCost, IsTheFixedCostPlusTheWorkTimesItsRate) {
  const LinearCost c{.fixed_ms = 2, .ms_per_unit = 3};
  EXPECT_DOUBLE_EQ(c.at(4), 14);
  EXPECT_DOUBLE_EQ(c.at(0), 2);
}

TEST(LeastSquares, FitsThePlainResidualsAboutTheWeightedMeans) {
  // On the line 3 + 2x: slope, intercept, means and the spread of the units (2: (-1)^2 + 0 + 1^2).
  const LineFit f = least_squares({{1, 5}, {2, 7}, {3, 9}});
  EXPECT_NEAR(f.cost.ms_per_unit, 2, kExact);
  EXPECT_NEAR(f.cost.fixed_ms, 3, kExact);
  EXPECT_DOUBLE_EQ(f.mean_units, 2);
  EXPECT_DOUBLE_EQ(f.mean_ms, 7);
  EXPECT_DOUBLE_EQ(f.units_spread, 2);
  EXPECT_DOUBLE_EQ(f.weight, 3);
  EXPECT_TRUE(f.sloped());
  // Weighted: (0, 1) once and (1, 3) three times. Means 0.75 and 2.5; spread 0.5625 + 3 * 0.0625;
  // the line through both points, 1 + 2x.
  const LineFit w = least_squares({{.units = 0, .ms = 1, .weight = 1}, {.units = 1, .ms = 3, .weight = 3}});
  EXPECT_DOUBLE_EQ(w.mean_units, 0.75);
  EXPECT_DOUBLE_EQ(w.mean_ms, 2.5);
  EXPECT_DOUBLE_EQ(w.units_spread, 0.75);
  EXPECT_NEAR(w.cost.ms_per_unit, 2, kExact);
  EXPECT_NEAR(w.cost.fixed_ms, 1, kExact);
  // Noisy points: (0, 1), (1, 2), (2, 6): slope 2.5, intercept 3 - 2.5 = 0.5.
  const LineFit n = least_squares({{0, 1}, {1, 2}, {2, 6}});
  EXPECT_NEAR(n.cost.ms_per_unit, 2.5, kExact);
  EXPECT_NEAR(n.cost.fixed_ms, 0.5, kExact);
}

TEST(LeastSquares, WithoutSpreadInTheUnitsIsFlatAtTheMean) {
  const LineFit none = least_squares({});
  EXPECT_FALSE(none.sloped());
  EXPECT_EQ(none.cost.fixed_ms, 0);
  EXPECT_EQ(none.cost.ms_per_unit, 0);
  const LineFit one = least_squares({{2, 7}});
  EXPECT_FALSE(one.sloped());
  EXPECT_DOUBLE_EQ(one.cost.fixed_ms, 7);
  EXPECT_EQ(one.cost.ms_per_unit, 0);
  const LineFit same = least_squares({{2, 6}, {2, 8}});
  EXPECT_FALSE(same.sloped());
  EXPECT_DOUBLE_EQ(same.cost.fixed_ms, 7);
  EXPECT_EQ(same.cost.ms_per_unit, 0);
}

TEST(LeastSquares, HelpersForTheOriginTheUnitsAndTheScatter) {
  // sum w x t / sum w x^2: (2 + 8) / (1 + 4).
  EXPECT_DOUBLE_EQ(slope_through_origin({{1, 2}, {2, 4}}), 2);
  EXPECT_DOUBLE_EQ(slope_through_origin({{1, 1}, {2, 5}}), 11.0 / 5);
  EXPECT_EQ(slope_through_origin({}), 0);
  EXPECT_EQ(slope_through_origin({{0, 3}}), 0);  // no work at all
  EXPECT_EQ(distinct_units({}), 0u);
  EXPECT_EQ(distinct_units({{1, 1}, {1 + 1e-12, 2}, {2, 3}}), 2u);  // within the tolerance: one
  EXPECT_EQ(distinct_units({{0.5, 1}, {0.25, 2}, {0.75, 3}}), 3u);
  // ((ms - line) / ms)^2: 0 on the line; (4 - 2) / 4 off it.
  const LinearCost c{.fixed_ms = 1, .ms_per_unit = 1};
  EXPECT_EQ(relative_squares(c, {{1, 2}}), 0);
  EXPECT_DOUBLE_EQ(relative_squares(c, {{1, 2}, {1, 4}}), 0.25);
  EXPECT_EQ(relative_squares(c, {}), 0);
}

TEST(FitRelative, RecoversALineAndStaysAtOrAboveZero) {
  // On the line 2 + 0.5x the relative weights change nothing.
  const LinearCost line = fit_relative({{2, 3}, {4, 4}, {8, 6}});
  EXPECT_NEAR(line.fixed_ms, 2, kExact);
  EXPECT_NEAR(line.ms_per_unit, 0.5, kExact);
  // Times that fall with the work are a fixed cost: the mean weighted 1/t^2,
  // (4/16 + 2/4) / (1/16 + 1/4) = 2.4, and no slope.
  const LinearCost falling = fit_relative({{1, 4}, {2, 2}});
  EXPECT_NEAR(falling.fixed_ms, 2.4, kExact);
  EXPECT_EQ(falling.ms_per_unit, 0);
  // The line through (1, 1) and (2, 3) has the fixed cost -1: noise; the weighted line through
  // the origin instead, (1 + 6/9) / (1 + 4/9) = 15/13.
  const LinearCost negative = fit_relative({{1, 1}, {2, 3}});
  EXPECT_EQ(negative.fixed_ms, 0);
  EXPECT_NEAR(negative.ms_per_unit, 15.0 / 13, kExact);
  // One point, or one size: flat at the time. None: zero.
  const LinearCost one = fit_relative({{5, 3}});
  EXPECT_DOUBLE_EQ(one.fixed_ms, 3);
  EXPECT_EQ(one.ms_per_unit, 0);
  const LinearCost none = fit_relative({});
  EXPECT_EQ(none.fixed_ms, 0);
  EXPECT_EQ(none.ms_per_unit, 0);
}

TEST(FitPositive, AModelASplitCanBeSolvedFrom) {
  const LinearCost line = fit_positive({{0.25, 3}, {0.5, 5}, {1, 9}}, 1e-3);  // 1 + 8x
  EXPECT_NEAR(line.fixed_ms, 1, kExact);
  EXPECT_NEAR(line.ms_per_unit, 8, kExact);
  // One share: proportional, the mean time over the mean share (11 / 0.5).
  const LinearCost proportional = fit_positive({{0.5, 10}, {0.5, 12}}, 1e-3);
  EXPECT_EQ(proportional.fixed_ms, 0);
  EXPECT_DOUBLE_EQ(proportional.ms_per_unit, 22);
  // Falling times: nearly free work through the means (0.5, 9): slope 1e-3 * 9.
  const LinearCost falling = fit_positive({{0.2, 10}, {0.8, 8}}, 1e-3);
  EXPECT_DOUBLE_EQ(falling.ms_per_unit, 0.009);
  EXPECT_NEAR(falling.fixed_ms, 9 - 0.009 * 0.5, kExact);
  // A negative fixed cost (the line through (0.5, 1) and (1, 3) is -1 + 4x): through the origin,
  // (0.5 + 3) / (0.25 + 1).
  const LinearCost negative = fit_positive({{0.5, 1}, {1, 3}}, 1e-3);
  EXPECT_EQ(negative.fixed_ms, 0);
  EXPECT_NEAR(negative.ms_per_unit, 2.8, kExact);
  const LinearCost none = fit_positive({}, 1e-3);
  EXPECT_EQ(none.fixed_ms, 0);
  EXPECT_EQ(none.ms_per_unit, 0);
}

TEST(FinishTogether, SolvesTheSplitAtWhichEveryDeviceFinishesAtOnce) {
  // Rates 1 and 3 ms per unit, no fixed costs: T = 1 / (1 + 1/3) = 0.75, shares 3/4 and 1/4.
  auto s = finish_together({{.fixed_ms = 0, .ms_per_unit = 1}, {.fixed_ms = 0, .ms_per_unit = 3}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->finish_ms, 0.75, kExact);
  EXPECT_NEAR(s->shares[0], 0.75, kExact);
  EXPECT_NEAR(s->shares[1], 0.25, kExact);
  // With a fixed cost: T = (1 + 1/1 + 0/2) / (1 + 1/2) = 4/3; shares 1/3 and 2/3.
  s = finish_together({{.fixed_ms = 1, .ms_per_unit = 1}, {.fixed_ms = 0, .ms_per_unit = 2}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->finish_ms, 4.0 / 3, kExact);
  EXPECT_NEAR(s->shares[0], 1.0 / 3, kExact);
  EXPECT_NEAR(s->shares[1], 2.0 / 3, kExact);
  // In units of work: 10 units, T = (10 + 2) / 2 = 6, shares (6 - 2) / 10 and 6 / 10.
  s = finish_together({{.fixed_ms = 2, .ms_per_unit = 1}, {.fixed_ms = 0, .ms_per_unit = 1}}, 10);
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->finish_ms, 6, kExact);
  EXPECT_NEAR(s->shares[0], 0.4, kExact);
  EXPECT_NEAR(s->shares[1], 0.6, kExact);
  // One device: all the work, at its whole time.
  s = finish_together({{.fixed_ms = 2, .ms_per_unit = 5}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->finish_ms, 7, kExact);
  EXPECT_NEAR(s->shares[0], 1, kExact);
}

TEST(FinishTogether, LeavesTheCallerTheDeviceWhoseFixedCostExceedsTheTime) {
  // T = (1 + 10) / 2 = 5.5: below the first device's fixed cost, which gets a negative share
  // (the set without it finishes sooner: the other alone at 1).
  const auto s = finish_together({{.fixed_ms = 10, .ms_per_unit = 1}, {.fixed_ms = 0, .ms_per_unit = 1}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->finish_ms, 5.5, kExact);
  EXPECT_NEAR(s->shares[0], -4.5, kExact);
  EXPECT_NEAR(s->shares[1], 5.5, kExact);
}

TEST(FinishTogether, HasNoSplitWithoutDevicesOrForFreeWork) {
  EXPECT_FALSE(finish_together({}));
  EXPECT_FALSE(finish_together({{.fixed_ms = 1, .ms_per_unit = 0}, {.fixed_ms = 0, .ms_per_unit = 1}}));
  EXPECT_FALSE(finish_together({{.fixed_ms = 1, .ms_per_unit = -2}}));
  EXPECT_FALSE(finish_together({{.fixed_ms = 0, .ms_per_unit = std::nan("")}}));
}

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({5, 5}), 5);
}

TEST(Statistics, QuantileInterpolatesBetweenRanks) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_EQ(quantile(v, 0), 1);
  EXPECT_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);  // position 0.75 between 1 and 2
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_EQ(quantile(v, -1), 1);  // clamped
  EXPECT_EQ(quantile(v, 2), 4);
  EXPECT_EQ(quantile({9}, 0.3), 9);
}

TEST(Statistics, InterquartileMeanDropsAQuarterEachSide) {
  // Eight values: the two lowest and two highest out, the mean of 2, 3, 4, 5.
  EXPECT_DOUBLE_EQ(interquartile_mean({100, 1, 2, 3, 4, 5, 6, -100}), 3.5);
  // Five values: one out each side.
  EXPECT_DOUBLE_EQ(interquartile_mean({1, 2, 3, 4, 50}), 3);
  // Up to four: the median.
  EXPECT_EQ(interquartile_mean({1, 2, 10}), 2);
  EXPECT_EQ(interquartile_mean({1, 2, 3, 10}), 2.5);
}

TEST(Statistics, NoValuesHaveNoCentre) {
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
  EXPECT_TRUE(std::isnan(interquartile_mean({})));
}
