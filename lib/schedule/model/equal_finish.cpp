// schedule/model/equal_finish.cpp — the equal-finish split (schedule/model/equal_finish.hpp).
#include "schedule/model/equal_finish.hpp"

namespace sinew::detail {

std::optional<EqualFinish> finish_together(const std::vector<LinearCost>& costs, double units) {
  if (costs.empty()) return std::nullopt;
  double rate = 0, fixed_in_units = 0;  // sum 1 / ms_per_unit, sum fixed / ms_per_unit
  for (const LinearCost& c : costs) {
    if (!(c.ms_per_unit > 0)) return std::nullopt;
    rate += 1 / c.ms_per_unit;
    fixed_in_units += c.fixed_ms / c.ms_per_unit;
  }
  EqualFinish out;
  out.finish_ms = (units + fixed_in_units) / rate;
  for (const LinearCost& c : costs) out.shares.push_back((out.finish_ms - c.fixed_ms) / (c.ms_per_unit * units));
  return out;
}

}  // namespace sinew::detail
