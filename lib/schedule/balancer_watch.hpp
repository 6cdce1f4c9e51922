// schedule/balancer_watch.hpp — what the two-level balancer keeps of the runs it watches: each
// device's *regime* (its runs since its rate last changed), its noise, the time model those runs
// give (DeviceRate), the regimes it left; and the current plan's own runs.
//
// A device's model is time = fixed + ms_per_unit * share, estimated robustly from its regime's
// runs (schedule/balancer_rate.cpp): ms_per_unit the exponential of the interquartile mean of
// log((t - fixed) / share); fixed from a least-squares line through the shares the regime ran at
// once the device is steady enough for the slope to be known, else the last such fit (0 at
// first), but at most a fraction of the regime's fastest time (a fixed cost fitted under a load
// can exceed the device's whole time once the load left; docs/decisions/005). Its noise is the
// median of its run-to-run changes (|log t_i / t_(i-1)| within one plan) as a standard deviation,
// drawn towards an unknown noise until it has seen enough (docs/decisions/001), so that no single
// run, and no difference within the noise, moves work.
#pragma once

#include "schedule/split_model.hpp"

#include <sinew/options.hpp>

#include <cmath>
#include <cstddef>
#include <deque>
#include <vector>

namespace sinew::detail {

// One run of one device as its watch keeps it.
struct WatchedRun {
  double share = 0, ms = 0;
  bool first_of_plan = false;  // counted only where the plan's later runs agree (fit_rate)
};
using RunHistory = std::deque<WatchedRun>;

// A device's noise (a standard deviation of log time) from its run-to-run changes.
double noise_of(const std::deque<double>& changes, const BalancerTuning::Watch& tuning);

// The model of `runs` under noise `sigma`; `fixed_ms`: the fixed cost last fitted, refitted
// where the runs allow (schedule/balancer_rate.cpp).
DeviceRate fit_rate(const RunHistory& runs, double sigma, double& fixed_ms, const BalancerTuning::Watch& tuning);

// How far the last `last` of `runs` lie from the model of the runs before them: the median
// |log| ratio of time to model; -1 where those runs give no rate.
double off_model(const RunHistory& runs, std::size_t last, double sigma, double fixed_ms,
                 const BalancerTuning::Watch& tuning);

// A regime a device left at a step: its runs, their run-to-run changes, its fixed cost, and the
// model and noise band they gave. A device is back in it when each of its latest runs lies within
// the band of the model's time at its share (schedule/balancer_regimes.cpp).
struct KeptRegime {
  RunHistory runs;
  std::deque<double> changes;
  double fixed_ms = 0;
  DeviceRate rate;
  double band = 0;  // Steps::deviations of the regime's noise (at least the balance bound), in log time
  // The log ratio of `ms` to the regime's model at `share`.
  double off(double share, double ms) const { return std::log(ms / rate.at(share)); }
};

// One device's watch.
class DeviceWatch {
 public:
  // A plan's first run: kept, counted only where the plan's later runs agree.
  void record_first_run(double share, double ms, const BalancerTuning::Watch& tuning);
  // A judged run; `previous_ms`: the device's time in the plan's previous judged run (0: none),
  // whose change to this one is noise.
  void record(double share, double ms, double previous_ms, const BalancerTuning::Watch& tuning);

  double noise(const BalancerTuning::Watch& tuning) const { return noise_of(changes_, tuning); }
  // The model of the current regime. Refits the fixed cost it keeps for the regimes after
  // (the one piece of state a model carries over).
  DeviceRate rate(const BalancerTuning::Watch& tuning) const {
    return fit_rate(regime_, noise(tuning), fixed_ms_, tuning);
  }
  const RunHistory& regime() const { return regime_; }
  double fixed_ms() const { return fixed_ms_; }

  // schedule/balancer_regimes.cpp. The rate changed `since` runs ago: the regime and noise
  // restart from those runs, or from a kept regime that they fit (its runs join them), and the
  // regime left is kept.
  void restart(std::size_t since, double log_bound, const BalancerTuning& tuning);
  // Back in a kept regime: the number of its latest runs that show it, or 0.
  std::size_t returned(double log_bound, const BalancerTuning& tuning) const;

 private:
  KeptRegime leave_regime(std::size_t since);
  void recall_regime_fitting_runs(const BalancerTuning& tuning);

  RunHistory regime_;            // the runs since the rate last changed (at most Watch::regime_runs)
  std::deque<double> changes_;   // |log| run-to-run ratios within a plan (at most Watch::noise_runs)
  mutable double fixed_ms_ = 0;  // the fixed cost last fitted (0: none)
  std::deque<KeptRegime> kept_;  // the regimes left, the latest first (at most Regimes::kept)
};

// The current plan's judged runs (each device's times, 0 for idle ones), and the plan's runs
// before this balancer (recall()).
class PlanRuns {
 public:
  // A run of the plan, keeping the latest `keep`.
  void add(std::vector<double> device_ms, std::size_t keep);
  // A new plan starts (`changed`: a different plan, whose first run is reported, not judged,
  // and whose recalled runs were the old plan's).
  void start_plan(bool changed);
  // Consumes the first-run flag: true when this run is the first of a new plan.
  bool take_first_run();

  std::size_t size() const { return runs_.size(); }
  bool empty() const { return runs_.empty(); }
  const std::vector<double>& operator[](std::size_t i) const { return runs_[i]; }
  const std::vector<double>& back() const { return runs_.back(); }

  // The median run (its slowest device's time) of the last `last` runs (0: all).
  double slowest_median(std::size_t last = 0) const;
  // The device slowest in the element-wise median of the last `last` runs (0: all).
  std::size_t slowest_device(std::size_t devices, std::size_t last = 0) const;
  // Each device's median time over the last `window` runs.
  std::vector<double> window_medians(std::size_t devices, std::size_t window) const;

  // The plan's runs before this balancer, as log times (the latest `keep` positive ones);
  // cleared when the plan changes or a device steps.
  void recall(const std::vector<double>& plan_ms, std::size_t keep);
  void forget_recalled() { recalled_.clear(); }
  const std::vector<double>& recalled() const { return recalled_; }

 private:
  std::size_t first_of_last(std::size_t last) const;

  std::deque<std::vector<double>> runs_;
  bool first_run_pending_ = false;
  std::vector<double> recalled_;
};

}  // namespace sinew::detail
