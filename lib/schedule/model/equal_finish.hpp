// schedule/model/equal_finish.hpp — the split of work at which a set of devices, each with a
// linear time (schedule/model/linear_cost.hpp), finish together: the closed form that
// derivation, the model strategy and the balancer's split model solve for each set they try.
//
// The devices finish at T when each gets (T - fixed_d) / ms_per_unit_d units and those add up
// to the work: T = (units + sum fixed_d / ms_per_unit_d) / sum 1 / ms_per_unit_d. Which sets are
// tried, and what a share below zero or below a threshold means, is the caller's policy.
#pragma once

#include "schedule/model/linear_cost.hpp"

#include <optional>
#include <vector>

namespace sinew::detail {

struct EqualFinish {
  std::vector<double> shares;  // per cost, as fractions of the work (they sum to 1 up to rounding)
  double finish_ms = 0;        // T, when every device finishes
};

// `units` of work split over devices with `costs` so that all finish at one time. A device whose
// fixed cost exceeds that time gets a share below 0 (the set without it finishes sooner). Nothing
// when `costs` is empty or some ms_per_unit is not positive (free work has no finite split).
std::optional<EqualFinish> finish_together(const std::vector<LinearCost>& costs, double units = 1);

}  // namespace sinew::detail
