// schedule/balancer.hpp — the online balancer's interface: the spec's controller and its "Adjust
// work distribution" box, as a policy behind a small interface.
//
// A balancer watches one tree and input (or one given plan): before each run the runtime asks it
// for the plan (config()), after the run it hands it each device's time (observe()), and the
// balancer may move the plan for the following runs (a BalanceEvent). The Cluster drives one the
// same way with its ranks as the devices. Balancers are made by name through the registry
// (schedule/balancer_registry.hpp; BalancerSettings::policy); the two-level balancer
// (schedule/balancer_two_level.hpp) is the default.
//
// Pure logic: no OpenCL, no clock. Not thread-safe; the runtime serialises the calls per plan.
#pragma once

#include <sinew/config.hpp>
#include <sinew/report.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace sinew::detail {

// Level 2: a better plan within `current`'s fission and overlap (a measured search).
using Retrain = std::function<Config(const Config& current)>;

// What one observed run led to.
struct BalanceStep {
  std::size_t execution = 0;          // the run's number (1-based)
  double deviation = 0;               // 1 - fastest/slowest active device time (median of the plan's last runs)
  bool unbalanced = false;            // the optimum is predicted to gain beyond the noise (or a load step)
  bool step = false;                  // a lasting change in a device's rate was detected at this run
  double lbt = 0;                     // after this run
  std::optional<BalanceEvent> event;  // the plan changed for the following runs
  bool settled = false;               // a rebalance finished here: config() is worth storing
};

class OnlineBalancer {
 public:
  virtual ~OnlineBalancer() = default;
  // The plan for the next run (the start until the balancer moves it).
  virtual const Config& config() const = 0;
  // Runs observed so far.
  virtual std::size_t executions() const = 0;
  // The times of config()'s runs before this balancer (the knowledge base's: training, earlier
  // processes), oldest first; called before the first observe(), if at all. A policy that has no
  // use for them ignores them.
  virtual void recall(const std::vector<double>& plan_ms) { (void)plan_ms; }
  // Observes the run just made with config(): `device_ms` per device, 0 for idle ones. `retrain`
  // may be empty (no level 2).
  virtual BalanceStep observe(const std::vector<double>& device_ms, const Retrain& retrain) = 0;
};

// 1 - fastest/slowest over the devices with a share in `c` and a time; 0 with fewer than two.
double deviation(const Config& c, const std::vector<double>& device_ms);

}  // namespace sinew::detail
