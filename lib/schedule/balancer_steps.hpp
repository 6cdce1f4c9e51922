// schedule/balancer_steps.hpp — when a device's rate changed for good: a *step* (a load arriving
// or leaving), seen in the plan's runs by the rules below. Each device's noise decides how far a
// run must lie to count, so that noise alone moves nothing.
//
// - Three in a row: each of the device's last Steps::runs times lies beyond Steps::deviations
//   noise deviations of the median of its earlier runs of the plan, on one side (under normal
//   noise a chance of about 1e-7 a run; a load that matters clears it at once;
//   docs/decisions/002).
// - A noisy regime started (a load's 2-5x swings, now and then a run as fast as before): all but
//   a third of the last runs (up to Steps::noisy_runs) beyond, where the plan's earlier runs make
//   that less likely than Steps::chance without a step, so that a device's own heavy tail is
//   none (docs/decisions/003).
// - A noisy regime ended (2-5x swings, then runs within a few percent, inside the old spread):
//   the last Steps::quiet_runs runs' median beyond their own band from the earlier median, every
//   one beyond the earlier runs' edge quantile on that side.
// - Back in a regime the device left (DeviceWatch::returned, docs/decisions/014).
// - Slower than the plan's runs before this balancer (a load present from the first run, which
//   has no earlier runs of the plan to show against): the recalled runs' times are the runs'
//   (their slowest device's), so they bound each device's from above and only slower is seen
//   (docs/decisions/006). Until the plan first moves or steps.
#pragma once

#include "schedule/balancer_watch.hpp"

#include <sinew/options.hpp>

#include <cstddef>
#include <vector>

namespace sinew::detail {

// A device whose rate changed, and how many of its latest runs came since.
struct DeviceStep {
  std::size_t device = 0;
  std::size_t since = 0;
};

// The steps shown at the plan's latest run: the rules within the plan for every device first,
// then (for the devices without such a step) a return to a kept regime, then the recalled runs.
// `shares`: the plan's; `log_bound`: the balance bound as a log time ratio.
std::vector<DeviceStep> detect_steps(const std::vector<double>& shares, const PlanRuns& plan,
                                     const std::vector<DeviceWatch>& watches, double log_bound,
                                     const BalancerTuning& tuning);

}  // namespace sinew::detail
