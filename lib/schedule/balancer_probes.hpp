// schedule/balancer_probes.hpp — probes of a device the two-level balancer took all work from
// (the plan it started from gave it some): an idle device has no runs, and a plan of the others
// does not step when a load leaves it, so nothing else would ever show that it got faster again.
// After Probes::first_wait watched runs it gets Probes::share; then twice as long a wait after
// each probe that did not pay, up to Probes::last_wait (docs/decisions/013). A probe is an episode
// like a move, taken back unless the plan it ends with is faster.
#pragma once

#include <sinew/options.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace sinew::detail {

class ProbeSchedule {
 public:
  ProbeSchedule(std::vector<double> start_shares, const BalancerTuning::Probes& tuning)
      : start_(std::move(start_shares)), wait_(tuning.first_wait) {}

  // A watched run of a plan with `shares`, when a probe may start: the device to probe now, if
  // any. `known(d)`: whether device d has a rate (asked only of devices idle now that the start
  // gave work).
  std::optional<std::size_t> due(const std::vector<double>& shares, const std::function<bool(std::size_t)>& known);
  // A probe of device d starts (its episode).
  void begin(std::size_t d);
  // Whether the current episode is a probe, and of which device.
  bool probing() const { return probing_; }
  std::size_t device() const { return device_; }
  // The episode ended; `paid`: its plan stayed. After a probe, the wait starts again from the
  // first, or doubles where it did not pay.
  void end(bool paid, const BalancerTuning::Probes& tuning);

 private:
  std::vector<double> start_;  // the shares the balancer started from
  std::size_t idle_runs_ = 0;  // watched runs in a row with such a device idle
  std::size_t wait_;           // runs before the next probe
  bool probing_ = false;
  std::size_t device_ = 0;
};

}  // namespace sinew::detail
