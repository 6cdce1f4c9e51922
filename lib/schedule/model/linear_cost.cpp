// schedule/model/linear_cost.cpp — the least-squares fits of a linear time model
// (schedule/model/linear_cost.hpp).
#include "schedule/model/linear_cost.hpp"

#include <algorithm>
#include <cmath>

namespace sinew::detail {

LineFit least_squares(const std::vector<CostPoint>& points) {
  LineFit f;
  double units = 0, ms = 0;
  for (const CostPoint& p : points) {
    f.weight += p.weight;
    units += p.weight * p.units;
    ms += p.weight * p.ms;
  }
  if (!(f.weight > 0)) return f;
  f.mean_units = units / f.weight;
  f.mean_ms = ms / f.weight;
  double covariance = 0;
  for (const CostPoint& p : points) {
    f.units_spread += p.weight * (p.units - f.mean_units) * (p.units - f.mean_units);
    covariance += p.weight * (p.units - f.mean_units) * (p.ms - f.mean_ms);
  }
  if (f.sloped()) {
    f.cost.ms_per_unit = covariance / f.units_spread;
    f.cost.fixed_ms = f.mean_ms - f.cost.ms_per_unit * f.mean_units;
  } else {
    f.cost.fixed_ms = f.mean_ms;
  }
  return f;
}

double slope_through_origin(const std::vector<CostPoint>& points) {
  double product = 0, square = 0;
  for (const CostPoint& p : points) {
    product += p.weight * p.units * p.ms;
    square += p.weight * p.units * p.units;
  }
  return square > 0 ? product / square : 0.0;
}

std::size_t distinct_units(const std::vector<CostPoint>& points, double tolerance) {
  if (points.empty()) return 0;
  std::vector<double> units;
  for (const CostPoint& p : points) units.push_back(p.units);
  std::sort(units.begin(), units.end());
  std::size_t distinct = 1;
  for (std::size_t i = 1; i < units.size(); ++i) distinct += units[i] - units[i - 1] > tolerance;
  return distinct;
}

double relative_squares(const LinearCost& cost, const std::vector<CostPoint>& points) {
  double squares = 0;
  for (const CostPoint& p : points) squares += std::pow((p.ms - cost.ms_per_unit * p.units - cost.fixed_ms) / p.ms, 2);
  return squares;
}

LinearCost fit_relative(std::vector<CostPoint> points) {
  for (CostPoint& p : points) p.weight = 1 / (p.ms * p.ms);
  const LineFit fit = least_squares(points);
  if (!fit.sloped() || !(fit.cost.ms_per_unit > 0)) return {.fixed_ms = fit.mean_ms, .ms_per_unit = 0};
  if (fit.cost.fixed_ms < 0) return {.fixed_ms = 0, .ms_per_unit = slope_through_origin(points)};
  return fit.cost;
}

LinearCost fit_positive(const std::vector<CostPoint>& points, double nearly_free) {
  if (points.empty()) return {};
  const LineFit fit = least_squares(points);
  if (distinct_units(points) < 2) return {.fixed_ms = 0, .ms_per_unit = fit.mean_ms / fit.mean_units};
  if (fit.cost.ms_per_unit <= 0) {
    const double slope = nearly_free * fit.mean_ms;
    return {.fixed_ms = fit.mean_ms - slope * fit.mean_units, .ms_per_unit = slope};
  }
  if (fit.cost.fixed_ms < 0) return {.fixed_ms = 0, .ms_per_unit = slope_through_origin(points)};
  return fit.cost;
}

}  // namespace sinew::detail
