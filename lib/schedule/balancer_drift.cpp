// schedule/balancer_drift.cpp — lbt and lopsided plans (schedule/balancer_drift.hpp).
#include "schedule/balancer_drift.hpp"

#include <algorithm>

namespace sinew::detail {

bool SlowDrift::lopsided_for_long(bool now, std::size_t window, const BalancerTuning::Moves& tuning) {
  lopsided_runs_ = now ? lopsided_runs_ + 1 : 0;
  return lopsided_runs_ >= tuning.lopsided_windows * window;
}

void SlowDrift::force(double trigger) { lbt_ = std::max(lbt_, trigger); }

double SlowDrift::update(bool unbalanced, double weight) {
  lbt_ = (unbalanced ? weight : 0.0) + lbt_ * (1.0 - weight);
  return lbt_;
}

}  // namespace sinew::detail
