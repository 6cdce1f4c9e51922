// schedule/model/linear_cost.hpp — a device's time as a line in the work it is given, and the
// least-squares fits of that line that derivation, the model strategy and the balancer use.
//
// One convention everywhere: time_ms = fixed_ms + ms_per_unit * units, where a unit is what the
// caller measures work in (a share of the input, an element of it).
#pragma once

#include <cstddef>
#include <vector>

namespace sinew::detail {

struct LinearCost {
  double fixed_ms = 0;     // the time of a run that does no work (launches, latencies)
  double ms_per_unit = 0;  // the time each unit of work adds
  double at(double units) const { return fixed_ms + ms_per_unit * units; }
};

// One measured time at some work, and how much it counts in a fit.
struct CostPoint {
  double units = 0;
  double ms = 0;
  double weight = 1;
};

// A weighted least-squares line and the sums behind it.
struct LineFit {
  LinearCost cost;        // the line; where the units do not vary: flat at the mean time
  double weight = 0;      // the points' summed weight
  double mean_units = 0;  // weighted means
  double mean_ms = 0;
  double units_spread = 0;  // sum of weight * (units - mean_units)^2: 0 where the units do not vary
  bool sloped() const { return units_spread > 0; }
};

// The line minimising sum weight * (ms - line(units))^2 (the normal equations about the weighted
// means). Empty points: a zero LineFit.
LineFit least_squares(const std::vector<CostPoint>& points);

// The slope of the best weighted line through the origin: sum w*x*t / sum w*x^2 (0 without
// points or where every point has no work).
double slope_through_origin(const std::vector<CostPoint>& points);

// The units values that differ by more than `tolerance` (0 without points).
std::size_t distinct_units(const std::vector<CostPoint>& points, double tolerance = 1e-9);

// sum ((ms - line(units)) / ms)^2 over the points: the relative scatter about `cost`.
double relative_squares(const LinearCost& cost, const std::vector<CostPoint>& points);

// Least squares of the relative residuals ((ms - line) / ms)^2 (each point weighted 1/ms^2, so
// small works' fixed costs count as much as large works' rates); the points' own weights are
// replaced. Never negative: times that do not grow with the work are a fixed cost (ms_per_unit 0,
// fixed_ms their weighted mean), and a negative fixed cost is noise (the best line through the
// origin). Needs two distinct units values for a slope; with fewer it is flat (no points: zero).
LinearCost fit_relative(std::vector<CostPoint> points);

// Least squares of the plain residuals, weighted, as a time model that a split can be solved
// from: ms_per_unit > 0 and fixed_ms >= 0 wherever the times are positive. One distinct units
// value: proportional (fixed 0, the mean time over the mean work). A slope not above 0 (noise
// over a fixed cost) becomes nearly free work, `nearly_free` times the mean time per unit, through
// the means. A negative fixed cost is noise: the best line through the origin. No points: a zero cost.
LinearCost fit_positive(const std::vector<CostPoint>& points, double nearly_free);

}  // namespace sinew::detail
