// schedule/balancer_probes.cpp — when an idle device is probed (schedule/balancer_probes.hpp).
#include "schedule/balancer_probes.hpp"

#include <algorithm>

namespace sinew::detail {

std::optional<std::size_t> ProbeSchedule::due(const std::vector<double>& shares,
                                              const std::function<bool(std::size_t)>& known) {
  std::optional<std::size_t> idle;
  for (std::size_t d = 0; d < shares.size() && !idle; ++d)
    if (shares[d] <= 0 && start_[d] > 0 && known(d)) idle = d;
  idle_runs_ = idle ? idle_runs_ + 1 : 0;
  if (idle && idle_runs_ >= wait_) return idle;
  return std::nullopt;
}

void ProbeSchedule::begin(std::size_t d) {
  probing_ = true;
  device_ = d;
  idle_runs_ = 0;
}

void ProbeSchedule::end(bool paid, const BalancerTuning::Probes& tuning) {
  if (!probing_) return;
  probing_ = false;
  wait_ = paid ? tuning.first_wait : std::min(2 * wait_, tuning.last_wait);
}

}  // namespace sinew::detail
