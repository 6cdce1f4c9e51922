// schedule/split_model.hpp — a device's rate as the balancer estimates it (DeviceRate), the split
// the devices' rates predict best, and the makespans they predict. Pure functions of the rates.
//
// What a plan should be is the *load-aware optimum*: the split that minimises the predicted
// makespan max_d(cost_d(share_d)), over every set of devices — one device alone (shares 0 for the
// others) when its fixed costs or the others' make that fastest — hedged against the estimates'
// errors and the runs' own noise. Not equal finish times: where one device alone is fastest,
// equal finish times would still give the others work.
#pragma once

#include "schedule/model/linear_cost.hpp"

#include <sinew/options.hpp>

#include <cstddef>
#include <vector>

namespace sinew::detail {

// One device's time model: `cost` in its share of the work (time = fixed_ms + ms_per_unit *
// share), from `runs` watched runs; se: the standard error of log(ms_per_unit); spread: each of
// the latest runs' time as a factor of the model's at its share, ascending (empty: taken as
// {1}), the runs' own noise as it came, heavy tails and all. Unknown (runs == 0): never measured.
struct DeviceRate {
  LinearCost cost;
  double se = 0;
  std::vector<double> spread;
  std::size_t runs = 0;
  bool known() const { return runs > 0 && cost.ms_per_unit > 0; }
  // The time at `share`; an idle device takes none.
  double at(double share) const { return share > 0 ? cost.at(share) : 0.0; }
};

using SplitTuning = BalancerTuning::Split;

// Shares on the grid (SplitTuning::grid_steps), slivers (below least_share) dropped, the rest
// renormalised.
std::vector<double> on_grid(std::vector<double> shares, const SplitTuning& tuning = {});

// The split minimising the predicted makespan of the known devices in `rates` (the others get
// 0), over every set of them (up to every_set_up_to known devices; beyond, all and each alone);
// shares on the grid, slivers dropped; of splits that tie, the one with fewer devices. Empty when
// no device is known.
std::vector<double> fastest_split(const std::vector<DeviceRate>& rates, const SplitTuning& tuning = {});

// fastest_split() hedged against the rates' errors (DeviceRate::se) and the runs' own noise
// (DeviceRate::spread): the split, near it, with the least expected makespan (grid steps of work
// moved between any two devices while that helps). Overloading a device whose rate was
// overestimated costs its whole error, underloading it only the others' part, so an uncertain
// device gets a little less; and a run lasts as long as its slowest device, so a device that is
// slow now and then holds the others up in those runs and gets less than equal finish times at
// its median would give it (docs/decisions/012). `expected`, where given: the returned split's
// expected_ms().
std::vector<double> hedged_split(const std::vector<DeviceRate>& rates, double* expected = nullptr,
                                 const SplitTuning& tuning = {});

// The expected makespan of `shares`: over the rates' errors (three-point Gauss-Hermite per known
// device, up to hedged_up_to of them; beyond, predicted_ms()) and over the active devices'
// spreads (every combination, each device independent of the others).
double expected_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares,
                   const SplitTuning& tuning = {});

// The predicted makespan of `shares` (the slowest active device); +inf when an active device is
// unknown.
double predicted_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares);

}  // namespace sinew::detail
