// schedule/model/statistics.cpp — medians, quantiles and the interquartile mean
// (schedule/model/statistics.hpp).
#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace sinew::detail {

namespace {
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return kNone;
  const std::size_t n = values.size();
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), middle, values.end());
  return n % 2 ? *middle : 0.5 * (*std::max_element(values.begin(), middle) + *middle);
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return kNone;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

double interquartile_mean(std::vector<double> values) {
  if (values.size() <= 4) return median(std::move(values));
  std::sort(values.begin(), values.end());
  const std::size_t quarter = values.size() / 4;
  double sum = 0;
  for (std::size_t i = quarter; i < values.size() - quarter; ++i) sum += values[i];
  return sum / static_cast<double>(values.size() - 2 * quarter);
}

}  // namespace sinew::detail
