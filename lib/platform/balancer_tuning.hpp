// platform/balancer_tuning.hpp — what each of the balancer's tuned values accepts
// (BalancerTuning, sinew/options.hpp): checked by BalancerSettings::with_defaults().
#pragma once

#include <sinew/options.hpp>

namespace sinew::detail {

// Throws sinew::Error(errc::invalid_argument) naming the first value out of its range
// ("BalancerSettings::tuning.steps.runs = 0 is not ...").
void check_balancer_tuning(const BalancerTuning& tuning);

}  // namespace sinew::detail
