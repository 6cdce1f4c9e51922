// schedule/balancer.hpp — the online two-level balancer: the spec's controller and its
// "Adjust work distribution" box.
//
// The balancer keeps, for every device, a model of its time at a share s: t = a*s + b (a: the
// time per unit of work, b: the fixed cost of a run), estimated robustly from the runs it watched
// since the device's rate last changed (its *regime*): the interquartile mean of log((t - b)/s)
// over at most kRegimeRuns runs, with b from a least-squares line through the shares the regime
// ran at once the device is steady enough for its slope to be known within 10%, else the last
// such fit (0 at first), but at most half the regime's fastest time (a fixed cost fitted under
// a load can exceed the device's whole time once the load left). Each device also has a noise
// estimate: the median of its run-to-run changes (|log t_i/t_(i-1)| within one plan) as a
// standard deviation, drawn towards +-30% until it has seen enough. On the GPU machine a CPU device's time varies by 15-50% from run to run and
// both devices swing 2-3x under load, so no single run, and no difference within the noise,
// moves work.
//
// What a plan should be is the *load-aware optimum*: the split that minimises the predicted
// makespan max_d(a_d*s_d + b_d), over every set of devices — one device alone (shares 0 for the
// others) when its fixed costs or the others' make that fastest — hedged against the estimates'
// errors and the runs' own noise (hedged_split: the expected makespan over each device's latest
// runs as they came, so a CPU that swings 2-5x under a load gets less than equal finish times at
// its median would give it). Not equal finish times: where the GPU alone is fastest, equal finish
// times would still give the CPU work.
//
// Three paths move a plan:
// - A load step. Each of a device's last kStepRuns times lies beyond 2.5 noise deviations of the
//   median of its earlier runs of the plan, on one side: its rate changed for good (under normal
//   noise a chance of about 1e-7 a run; a load that matters clears it at once). Or a noisy regime
//   started (a load's 2-5x swings, one run in three as fast as before): all but a third of the
//   last four to nine runs beyond, where the plan's earlier runs make that less likely than 1e-3
//   without a step (so that a device's own heavy tail is none). Or a noisy regime ended (a
//   load leaving: 2-5x swings, then runs within a few percent, inside the old spread):
//   the last five runs' median beyond 2.5 of their own deviations from the earlier median, every
//   one beyond the earlier runs' 10% quantile. Its regime and its noise estimate restart from
//   the runs since the step and the plan is re-planned in one move to the optimum
//   of the new rates (the other devices keep their long regimes, so only one estimate is short;
//   idle devices count with the rates they last showed). A one-device plan whose idle devices
//   were never measured asks level 2 instead. The regime a device leaves is kept (the last
//   kPastRegimes): when its runs come back to one (each within that regime's noise band of its
//   model at their shares, the current regime's model twice as far off, and the current
//   regime's earlier runs making that less likely than 1e-3 by chance), that is a step too, and
//   the old regime's runs join the new ones. A load that leaves a device at a small share takes
//   it back to where it was: the runs at the shares it had then give its line at once.
//   A load present from the first run has no earlier runs of the plan to show against: there the
//   plan's runs before this balancer (recall(): the knowledge base's, from training and earlier
//   processes) stand in for them. Each one's time is its slowest device's, so it bounds every
//   device's from above, and only a device slower than them is seen: the median of its last
//   kRecalledRuns runs beyond kZStep standard errors of the two medians' difference, each run
//   beyond the balance bound. Until the plan first moves or steps.
// - Confirmation. After a move, once the new plan has `window` judged runs, the plan moves once
//   more to the optimum of the estimates, which now have twice the moved device's runs, and
//   after that only for a predicted gain beyond the noise (at most level1_steps moves an
//   episode) or, for kYoungRuns runs after a step, whenever the optimum lies kYoungMove of the
//   work away without idling a device: the new regime's noise, which hedges the optimum, is
//   still coming in (a load's swings show over a dozen runs). A step seen again within those
//   runs idles no device either; it keeps kProbeShare, so that the load leaving shows. Then the
//   plan must pay: its median run is compared with the runs of the plan the episode started
//   from; a plan slower by more than kMustPay beyond the comparison's noise goes back (a move
//   made on noise, or a retraining misled by it, does not stick), as does a plan
//   that gave work to a device the old plan left idle and is not faster at all (the model cannot
//   see that device's fixed costs from one share: kept within the noise, such a split would
//   drift towards equal finish times, never back to the device alone), and the balancer
//   then waits (a doubling backoff) before a slow-drift move.
// - Slow drift. Otherwise, lbt(n) = unbalanced(n)*w + lbt(n-1)*(1-w) (the spec's formula) where a
//   run is unbalanced when the move to the optimum is predicted to gain more than 2.5 standard
//   errors of the estimates and more than half the bound; lbt reaching the trigger moves the plan
//   (then confirmation as above). One-device plans move only on a step, or by a probe:
// - A probe. A device the balancer took all work from (the plan it started from gave it some)
//   gets kProbeShare after kProbeFirst watched runs, then twice as many after each probe that did
//   not pay, up to kProbeLast: an idle device has no runs, and the others' plan does not step
//   when a load leaves it. Its probe runs, where its model does not explain them, restart its
//   regime (or recall an earlier one); the probe is an episode like a move, taken back unless
//   the plan it ends with is faster.
//
// Level 2 retrains the distribution within the current fission/overlap (a callback: the runtime
// measures real runs, the tests synthetic device models): only for a one-device plan whose time
// stepped and whose idle devices have no rate yet. Everything else the model answers from the
// runs it watches, at no cost: no program is built (fission and overlap never change), and
// shares stay on a 1% grid (PoCL compiles a kernel per new partition size: hundreds of ms; a move
// back meets sizes compiled before).
//
// A dynamic-schedule plan balances itself while it runs: it is reported, never moved.
//
// Pure logic: no OpenCL, no clock. Not thread-safe; the runtime serialises observe() per plan.
#pragma once

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>

#include <cmath>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace sinew::detail {

// Level 2: a better plan within `current`'s fission and overlap.
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

// One device's time model, t = a*share + b, from `runs` watched runs; se: the standard error of
// log(a); spread: each of the latest runs' time as a factor of the model's at its share (a*s + b),
// ascending (empty: taken as {1}), the runs' own noise as it came, heavy tails and all. Unknown (runs == 0): never measured.
struct DeviceRate {
  double a = 0, b = 0, se = 0;
  std::vector<double> spread;
  std::size_t runs = 0;
  bool known() const { return runs > 0 && a > 0; }
  double at(double share) const { return share > 0 ? a * share + b : 0.0; }
};

// The median (0 of none), by selection (the balancer takes medians of up to 96 values many times
// a run; schedule/balancer_regimes.cpp).
double median_of(std::vector<double> v);

// Shares on a grid of 1%, slivers (below Balancer::kMinShare) dropped, the rest renormalised
// (schedule/split_model.cpp, as the functions below).
std::vector<double> on_grid(std::vector<double> shares);
// The split minimising the predicted makespan of the known devices in `rates` (the others get
// 0), over every set of them; shares on the 1% grid, slivers (below kMinShare) dropped. Empty
// when no device is known.
std::vector<double> fastest_split(const std::vector<DeviceRate>& rates);
// fastest_split() hedged against the rates' errors (DeviceRate::se) and the runs' own noise
// (DeviceRate::spread): the split, near it, with the least expected makespan. Overloading a
// device whose rate was overestimated costs its whole error, underloading it only the others'
// part, so an uncertain device gets a little less; and a run lasts as long as its slowest
// device, so a device that is slow now and then (a CPU under load: 2-5x in one run in five)
// holds the others up in those runs and gets less than equal finish times at the median.
// `expected`, where given: the returned split's expected_ms().
std::vector<double> hedged_split(const std::vector<DeviceRate>& rates, double* expected = nullptr);
// The expected makespan of `shares`: over the rates' errors (three-point Gauss-Hermite per
// device, up to four devices) and over the active devices' spreads (every combination, each
// device independent of the others).
double expected_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares);
// The predicted makespan of `shares` (the slowest active device); +inf when an active device is
// unknown.
double predicted_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares);

class Balancer {
 public:
  // A device's share below this is not worth its run's fixed costs and noise: it goes idle.
  static constexpr double kMinShare = 0.02;
  // Runs per device that its model remembers (its regime's latest).
  static constexpr std::size_t kRegimeRuns = 48;
  // Runs that show a load step: all on one side of the plan's earlier median, beyond the noise.
  static constexpr std::size_t kStepRuns = 3;
  // ... or all but a third of the last few runs (up to this many), on one side: a load's 2-5x swings.
  static constexpr std::size_t kNoisyStepRuns = 9;
  // A plan that ends an episode slower than its predecessor by more than this (and the noise of
  // the comparison) goes back.
  static constexpr double kMustPay = 0.03;
  // Run-to-run changes each device's noise is taken over.
  static constexpr std::size_t kNoiseRuns = 64;
  // Standard deviations of one run a load step's each run must lie beyond (and a regime's band).
  static constexpr double kZStep = 2.5;
  // The standard error of a median (or interquartile mean) of n runs is about this many sigma/sqrt(n).
  static constexpr double kCentreEfficiency = 1.25;

  // Unset settings take their defaults; bad ones throw sinew::Error naming them.
  Balancer(std::vector<DeviceInfo> devices, Config start, const BalancerSettings& settings);

  // The plan for the next run.
  const Config& config() const { return config_; }
  double lbt() const { return lbt_; }
  std::size_t executions() const { return executions_; }
  // Device d's model and noise (a standard deviation of log time) as the balancer sees them now.
  DeviceRate rate(std::size_t d) const;
  double noise(std::size_t d) const;

  // The times of config()'s runs before this balancer (the knowledge base's: training, earlier
  // processes), oldest first; the latest kRegimeRuns are kept. Before the first observe().
  void recall(const std::vector<double>& plan_ms);

  // Observes the run just made with config(): `device_ms` per device, 0 for idle ones.
  BalanceStep observe(const std::vector<double>& device_ms, const Retrain& retrain);

  // 1 - fastest/slowest over the devices with a share and a time; 0 with fewer than two.
  static double deviation(const Config& c, const std::vector<double>& device_ms);

 private:
  enum class State { watching, confirming };
  struct Sample {
    double share = 0, ms = 0;
    bool first = false;  // the first run of its plan: counted only where the plan's later runs agree
  };
  struct Gain {
    std::vector<double> target;  // the optimum of the active devices (empty: none)
    double gain = 0;             // log(predicted(current) / predicted(target))
    double se = 0;               // its standard error, from the devices' estimates
  };

  // A regime a device left at a step: its runs, their run-to-run changes, its fixed cost, and
  // the model and noise band they gave. A device is back in it when each of its latest runs lies
  // within the band of the model's time at its share (see stepped(), restart()).
  struct Past {
    std::deque<Sample> runs;
    std::deque<double> changes;
    double fixed = 0;
    DeviceRate rate;
    double band = 0;  // kZStep of the regime's noise (at least the balance bound), in log time
    double off(double share, double ms) const { return std::log(ms / rate.at(share)); }
  };
  // The model t = a*s + b of a regime's runs under noise `sigma`; `fixed`: the fixed cost last
  // fitted, refitted where the runs allow.
  static DeviceRate model(const std::deque<Sample>& regime, double sigma, double& fixed);
  static double noise_of(const std::deque<double>& changes);
  // Device d's rate changed `since` runs ago: its regime and noise restart from those runs, or
  // from an earlier regime of its that they fit (recalled), and the one it left is kept.
  void restart(std::size_t d, std::size_t since);
  // Devices whose rate changed for good at this run, each with the number of its latest runs
  // since the change.
  std::vector<std::pair<std::size_t, std::size_t>> stepped() const;
  std::vector<std::pair<std::size_t, std::size_t>> stepped_within_plan() const;  // the plan's runs alone
  // Device d is back in a regime it left (past_): the number of its latest runs that show it, or 0.
  std::size_t returned(std::size_t d) const;
  // Device d slower than the plan's recalled runs (recall()): the number of its latest runs that
  // show it, or 0.
  std::size_t above_recalled(std::size_t d) const;
  // How far the last `last` of `runs` lie from the model of the runs before them (the median
  // |log| ratio of time to model; -1 where those runs give no rate).
  static double off_model(const std::deque<Sample>& runs, std::size_t last, double sigma, double fixed);
  double log_bound() const;  // the balance bound as a log time ratio: log(1 / balanced_within)
  Gain gain(bool idle_too) const;  // the optimum over the active (and known idle) devices
  // The median run (slowest device) of the plan's last `last` runs (0: all), and the device that
  // is slowest in their element-wise median.
  double plan_ms(std::size_t last = 0) const;
  std::size_t slowest_device(std::size_t last = 0) const;
  BalanceEvent move(int level, Config after, const std::vector<double>& device_ms, double deviation);
  void backoff();

  std::vector<DeviceInfo> devices_;
  Config config_;
  BalancerSettings s_;
  State state_ = State::watching;
  double lbt_ = 0;
  std::size_t executions_ = 0;
  unsigned moves_ = 0;                       // level-1 moves of the current episode
  std::vector<std::deque<Sample>> regime_;   // per device: its runs since its rate last changed
  std::vector<std::deque<double>> changes_;  // per device: |log| run-to-run ratios within a plan
  // Per device: the regimes it left, the latest first (at most kPastRegimes).
  static constexpr std::size_t kPastRegimes = 3;
  std::vector<std::deque<Past>> past_;
  // Per device: the fixed cost b last fitted (0: none); kept by rate() for the regimes after.
  mutable std::vector<double> fixed_;
  std::deque<std::vector<double>> runs_;  // the device times of the plan's judged runs
  bool fresh_ = false;                    // the next run is the first of a new plan
  // The plan that started the current episode: its median run then, and the device that was
  // slowest in those runs (whose noise the comparison with the new plan must see past).
  struct Episode {
    Config plan;
    double ms = 0;
    std::size_t slowest = 0;
  };
  std::optional<Episode> episode_;
  // After a plan went back, the balancer waits this many runs before a slow-drift move, doubling
  // each time, so a plan that cannot be improved is not moved over and over.
  std::size_t hold_ = 0, backoff_ = 0;
  std::size_t lopsided_ = 0;  // watched runs in a row whose plan was lopsided (observe())
  // Probes of a device the balancer left idle (observe()): the shares it started from, watched
  // runs since such a device was idle, and how many before the next probe.
  static constexpr double kProbeShare = 0.05;
  static constexpr std::size_t kProbeFirst = 32, kProbeLast = 128;
  std::vector<double> start_;
  std::size_t idle_runs_ = 0, probe_wait_ = kProbeFirst;
  bool probing_ = false;  // the current episode is a probe
  std::size_t probed_ = 0;  // its device
  // After a step, until this execution, the episode follows the model's optimum as the new
  // regime's runs and noise come in: for kYoungRuns runs, by moves of at least kYoungMove.
  static constexpr std::size_t kYoungRuns = 12;
  static constexpr double kYoungMove = 0.05;
  std::size_t young_until_ = 0;
  // The plan's runs before this balancer (recall()), as log times; cleared when the plan moves
  // or a device steps. Its runs here that show a device slower: kRecalledRuns.
  static constexpr std::size_t kRecalledRuns = 4;
  std::vector<double> recalled_;
};

}  // namespace sinew::detail
