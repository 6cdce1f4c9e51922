// schedule/balancer_two_level.hpp — the online two-level balancer (registered as "two_level", the
// default BalancerSettings::policy).
//
// It keeps a time model and a noise estimate per device over the runs it watched since the
// device's rate last changed (schedule/balancer_watch.hpp), and moves the plan towards the
// load-aware optimum those models predict (schedule/split_model.hpp). Three paths move a plan:
// - A load step (schedule/balancer_steps.hpp): the stepped devices' regimes and noise restart
//   from the runs since the step and the plan is re-planned in one move to the optimum of the new
//   rates (the other devices keep their long regimes, so only one estimate is short; idle devices
//   count with the rates they last showed). A one-device plan whose idle devices were never
//   measured asks level 2 instead. A step seen again within a young regime idles no device: it
//   keeps a probe's share, so that the load leaving shows.
// - Slow drift, and lopsided plans (schedule/balancer_drift.hpp). One-device plans move only on
//   a step, or by a probe (schedule/balancer_probes.hpp).
// Every move starts or continues an episode (schedule/balancer_episode.hpp): confirmed, then kept
// only where it pays.
//
// Level 2 retrains the distribution within the current fission/overlap (a callback: the runtime
// measures real runs, the tests synthetic device models): only for a one-device plan whose time
// stepped and whose idle devices have no rate yet. Everything else the model answers from the
// runs it watches, at no cost: no program is built (fission and overlap never change), and shares
// stay on a grid (a move back meets partition sizes compiled before; docs/decisions/011). The
// first run of a new plan may pay one-off costs: it is reported, not judged.
//
// A dynamic-schedule plan balances itself while it runs: it is reported, never moved.
#pragma once

#include "schedule/balancer.hpp"
#include "schedule/balancer_drift.hpp"
#include "schedule/balancer_episode.hpp"
#include "schedule/balancer_probes.hpp"
#include "schedule/balancer_steps.hpp"
#include "schedule/balancer_watch.hpp"

#include <sinew/device.hpp>
#include <sinew/options.hpp>

#include <memory>
#include <vector>

namespace sinew::detail {

class TwoLevelBalancer final : public OnlineBalancer {
 public:
  // Unset settings take their defaults; bad ones throw sinew::Error naming them.
  TwoLevelBalancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings);

  const Config& config() const override { return config_; }
  std::size_t executions() const override { return executions_; }
  // The latest Watch::regime_runs are kept; before the first observe() (else sinew::Error).
  void recall(const std::vector<double>& plan_ms) override;
  BalanceStep observe(const std::vector<double>& device_ms, const Retrain& retrain) override;

  double lbt() const { return drift_.lbt(); }
  // Device d's model and noise (a standard deviation of log time) as the balancer sees them now.
  DeviceRate rate(std::size_t d) const { return watches_[d].rate(tuning_.watch); }
  double noise(std::size_t d) const { return watches_[d].noise(tuning_.watch); }

 private:
  // The optimum over the active (and, `idle_too`, the known idle) devices' rates, its gain over
  // the plan (log of the plan's expected time over the optimum's) and that gain's standard error.
  struct Gain {
    std::vector<double> target;  // empty: none
    double gain = 0;
    double se = 0;
  };

  BalanceStep first_run_of_plan(BalanceStep step, const std::vector<double>& ms);
  std::size_t record(const std::vector<double>& ms);  // the devices that ran
  BalanceStep on_step(BalanceStep step, const std::vector<DeviceStep>& changed, std::size_t active,
                      const std::vector<double>& ms, const Retrain& retrain);
  BalanceStep confirm(BalanceStep step, const std::vector<double>& ms);
  BalanceStep settle(BalanceStep step, const std::vector<double>& ms);
  BalanceStep watch(BalanceStep step, const std::vector<double>& ms, const std::vector<double>& judged,
                    std::size_t active);
  std::optional<BalanceEvent> probe(const BalanceStep& step, const std::vector<double>& ms);
  bool lopsided(const BalanceStep& step, const std::vector<double>& judged, const Gain& g) const;
  void restart_probed_device();
  Gain gain(bool idle_too) const;
  EpisodeOrigin origin(std::size_t last = 0) const;
  BalanceEvent move(int level, Config after, const std::vector<double>& ms, double deviation);
  // The balance bound: the fraction of the slowest device's time by which the fastest may finish
  // early (1 - balanced_within); and as a log time ratio, log(1 / balanced_within).
  double balance_bound() const;
  double log_bound() const;

  std::vector<DeviceInfo> devices_;
  Config config_;
  BalancerSettings settings_;  // resolved
  BalancerTuning tuning_;
  std::size_t executions_ = 0;
  std::vector<DeviceWatch> watches_;
  PlanRuns plan_;
  Episode episode_;
  SlowDrift drift_;
  ProbeSchedule probes_;
};

// The registry's factory (schedule/balancer_registry.cpp).
std::unique_ptr<OnlineBalancer> make_two_level_balancer(const std::vector<DeviceInfo>& devices, const Config& start,
                                                        const BalancerSettings& settings);

}  // namespace sinew::detail
