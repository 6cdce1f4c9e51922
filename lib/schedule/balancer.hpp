// schedule/balancer.hpp — the online two-level balancer: the spec's controller and its
// "Adjust work distribution" box.
//
// After every run of a plan it watches, the Balancer judges the deviation between the active
// devices' times and keeps the load-balancing threshold lbt(n) = unbalanced(n)*w + lbt(n-1)*(1-w),
// so a single slow run (a page-fault storm, another process's burst) moves nothing. When lbt
// reaches the trigger, level 1 moves work between device kinds (and between devices of a kind) in
// proportion to their measured rates — the median of the last few runs, so one outlier cannot
// size the move — and keeps moving after each following run until the times agree within the
// bound; from the second move on, each device's line t = a*share + b through its two latest
// points gives the equal-finish shares (SkePU's model), so fixed costs do not slow convergence. When a bounded number of level-1 moves has not converged, level 2 retrains the
// distribution within the current fission/overlap configuration (a callback: the runtime
// measures real runs, the tests synthetic device models). A plan on one device cannot be
// unbalanced; it is watched for drift instead — its time leaving the bound around its settled
// time, either way — and a lasting drift goes straight to level 2, whose search includes
// adding the idle devices back.
//
// Two guards against noise. Level 1 judges one run per move when device times are steady, but
// waits for `window` runs of each new plan when they swing (the median run-to-run change of a
// device's time above half the bound, or too few runs yet to tell): on a loaded machine one run says little. And an episode (level
// 1 moves, or level 2) must pay: once its plan has `window` runs, their median is compared with
// the runs of the plan before it that started the episode; a plan slower by more than the bound
// is dropped for the old one (a level-1 event), so a move made on noise — a right plan on one
// device retrained because its time wandered — does not stick.
//
// Pure logic: no OpenCL, no clock. Not thread-safe; the runtime serialises observe() per plan.
#pragma once

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>

#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace sinew::detail {

// Level 2: a better plan within `current`'s fission and overlap.
using Retrain = std::function<Config(const Config& current)>;

// What one observed run led to.
struct BalanceStep {
  std::size_t execution = 0;            // the run's number (1-based)
  double deviation = 0;                 // 1 - fastest/slowest active device time
  bool unbalanced = false;
  double lbt = 0;                       // after this run
  std::optional<BalanceEvent> event;    // the plan changed for the following runs
  bool settled = false;                 // a rebalance finished here: config() is worth storing
};

class Balancer {
 public:
  // Unset settings take their defaults; bad ones throw sinew::Error naming them.
  Balancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings);

  // The plan for the next run.
  const Config& config() const { return config_; }
  double lbt() const { return lbt_; }
  std::size_t executions() const { return executions_; }

  // Observes the run just made with config(): `device_ms` per device, 0 for idle ones.
  BalanceStep observe(const std::vector<double>& device_ms, const Retrain& retrain);

  // 1 - fastest/slowest over the devices with a share and a time; 0 with fewer than two.
  static double deviation(const Config& c, const std::vector<double>& device_ms);

 private:
  enum class State { watching, level1 };
  bool noisy() const;  // run-to-run changes too large to judge one run (or not seen yet)
  void begin_episode(double run_ms);
  Config level1(const std::vector<double>& device_ms) const;  // the next level-1 plan
  BalanceEvent level2(const std::vector<double>& device_ms, double deviation, const Retrain& retrain);
  BalanceEvent move(int level, const Config& after, const std::vector<double>& device_ms, double deviation);

  std::vector<DeviceInfo> devices_;
  Config config_;
  BalancerSettings s_;
  State state_ = State::watching;
  double lbt_ = 0;
  std::size_t executions_ = 0;
  unsigned level1_moves_ = 0;
  std::optional<std::pair<Config, std::vector<double>>> last_;  // before the last level-1 move
  std::vector<double> last_delta_;  // the last level-1 move's share changes, in this episode
  bool reversed_ = false;           // a level-1 move of this episode went back against the one before
  std::deque<std::vector<double>> recent_;  // device times of the runs since the plan last changed
  // After a level 2 that could not balance the devices (the fastest plan need not be balanced),
  // the balancer waits this many runs before acting again, doubling each time, so an
  // unbalanceable tree is not retrained over and over.
  std::size_t hold_ = 0, backoff_ = 0;
  bool fresh_ = false;  // the next run is the first of a new plan
  // The plan that started the current or last episode and the median time of the runs that
  // started it; `confirm_` once the episode's plan stands, until it is compared with it.
  std::optional<std::pair<Config, double>> episode_;
  bool confirm_ = false;
  std::vector<double> last_ms_;      // the previous run of the same plan (empty: none)
  std::deque<double> changes_;       // |log| of a device's run-to-run time ratios within a plan, newest last
  // A plan on one device: its settled time, and the runs that set it.
  double reference_ms_ = 0;
  std::vector<double> reference_runs_;
};

}  // namespace sinew::detail
