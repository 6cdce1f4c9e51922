// schedule/train.hpp — finding the best plan for a tree and an input by measuring it.
//
// The spec's training process: for CPU fission x GPU overlap configurations, search the work
// distribution with one of two strategies; a third strategy, `model` (SkePU's tuning), measures
// instead of searching: a linear time model per device from a few runs, the split it predicts,
// within kModelExecutions runs. Whatever the strategy the objective is one: the fastest measured
// plan among all it tried, each device alone included at every level of its own dimension that
// was screened (runs kept for them from the search), the leaders measured again before the
// choice (schedule/train_search.hpp). Everything here works on a `Measure` function (run the
// tree with a Config, return the times), so it is tested against synthetic device models (time =
// a*n + b, noise, load steps) as well as used on real runs.
#pragma once

#include "schedule/model/statistics.hpp"

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

struct Measurement {
  double time_ms = 0;              // the whole run
  std::vector<double> device_ms;   // per device (Report::device_ms); 0 for idle devices
  std::vector<double> level_ms;    // divide-and-conquer trees: each level's time (Report::levels)
};
using Measure = std::function<Measurement(const Config&)>;

// The search as training, level 2 and a derived plan's check run it: the user's resolved
// TrainingSettings, and how much of the search a caller wants.
struct TrainingOptions {
  // Defaults: TrainingSettings' (one home: TrainingSettings::with_defaults()).
  Strategy strategy = defaults().strategy.value();
  double precision = defaults().precision.value();      // times within this fraction count as balanced; smallest step
  unsigned quality = defaults().quality.value();        // executions per measured point (their median counts)
  bool exhaustive = defaults().exhaustive.value();      // the spec's uniform search: the strategy on every combination
  std::size_t max_executions = defaults().max_executions.value();
  // Only the start's fission and overlap (the balancer's level 2): the distribution alone.
  bool fixed_platform = false;
  // A derived plan's check: the start measured, its overlap levels and fissions screened at its
  // distribution (one run each), one rebalancing step on the best, each device alone. No
  // distribution search.
  bool screen_only = false;
  // A derived plan's check: each device alone at these levels (Config::single plans, the cost
  // model's fastest for it, CostPlan::alone_levels) before the leader's levels.
  std::vector<Config> alone_levels;
  // The tree may run with the dynamic schedule (its partitions are independent): a full training
  // measures it beside the static plans it found (the best split's platform configuration, its
  // shares as the chunk weights) and keeps whichever is faster. Not for a derived plan's check nor
  // the balancer's level 2, which tune a distribution.
  bool dynamic = false;
  // One device alone (a run pinned to it, RunOptions::device, that the knowledge base knows
  // nothing of): its own levels screened (a discrete device's overlap levels, a CPU's fissions),
  // one run each, the two fastest once more. No distribution search.
  std::optional<std::size_t> alone;

  // The training part of resolved settings (TrainingSettings::with_defaults()).
  static TrainingOptions from(const TrainingSettings& resolved);
  static const TrainingSettings& defaults();
};

// A derived plan's check: `base` with screen_only, `quality` and at most `executions` runs.
TrainingOptions screen_options(TrainingOptions base, std::size_t executions);

// The balancer's level 2: `base` restricted to the start's fission and overlap (no exhaustive
// search) and to `executions` runs.
TrainingOptions level2_options(TrainingOptions base, std::size_t executions);

struct TrainingPoint {
  Config config;
  double time_ms = 0;
  std::vector<double> device_ms;
};

struct TrainingResult {
  Config best;
  double time_ms = 0;
  std::size_t executions = 0;     // runs of the tree, each fission's untimed first run included
  double seconds = 0;             // wall time of the whole training
  std::string strategy;
  unsigned quality = 0;           // executions per measured point (the model strategy: 2, the faster counts)
  std::vector<TrainingPoint> points;  // every measured point, in order
  std::optional<ModelChoice> model_choice;  // a model's own plan, where the strategy has one
};

// The model strategy's whole training (every run counted) takes at most this many runs of
// the tree, or TrainingOptions::max_executions when that is smaller. Not in exhaustive mode,
// which runs the model at every fission x overlap combination within max_executions.
inline constexpr std::size_t kModelExecutions = 10;

// The runs a training with `options` may take: max_executions, within kModelExecutions for the
// model strategy's own training.
std::size_t execution_budget(const TrainingOptions& options);

// One line per measured point: "[config i/n] shares ... -> t ms (best so far ...)".
using Progress = std::function<void(const std::string&)>;

// Searches fission x overlap x distribution for `devices`. `start`, when given (e.g. the nearest
// knowledge-base entry), is where the search begins. `untimed`, when given, runs the untimed
// first runs (a new fission's, a device alone's) in place of `measure`: the caller records only
// the timed ones.
TrainingResult train(const std::vector<DeviceInfo>& devices, const Measure& measure, const TrainingOptions& options,
                     const Progress& progress = {}, const std::optional<Config>& start = {},
                     const Measure& untimed = {});

// `c` with the platform levels that none of its working devices uses reset to their defaults:
// the overlap level (1) where no discrete device has a share, the fission ("none") where no CPU
// has (divide-and-conquer plans, whose upper device may have no share, as they are). One plan,
// one name: the CPU alone "at overlap 2" is the CPU alone, measured and run as that device alone
// is (training measured it under each overlap level's name, kept the luckiest and stored it as
// a plan of its own).
Config without_idle_levels(Config c, const std::vector<DeviceInfo>& devices);
// A static plan of shares that gives all the work to one device: that device alone at the plan's
// levels (without_idle_levels) and the device's index; nothing for any other plan.
std::optional<std::pair<Config, std::size_t>> alone_plan(const Config& c, const std::vector<DeviceInfo>& devices);
// The devices `c` gives a share to.
std::size_t working_devices(const Config& c);

// The groups work moves between: the device kinds when the machine has several (CPU vs GPU),
// else every device on its own (several GPUs, or several PoCL CPUs).
std::vector<std::vector<std::size_t>> device_groups(const std::vector<DeviceInfo>& devices);

// Rebalances shares from one measurement: each active group's share becomes proportional to its
// measured rate (share / time), and inside a group each device's likewise — the closed form for
// time = a*share (SkePU's), a fixed point where all groups finish together otherwise. Groups or
// devices without a share keep none. Used by training and by the level-1 balancer.
std::vector<double> rebalance(const std::vector<DeviceInfo>& devices, const std::vector<double>& shares,
                              const std::vector<double>& device_ms, double damping = 1.0);

// ---------------------------------------------------------------------------------------------
// Divide-and-conquer trees (sinew::divide_and_conquer): the plan is a crossover level, the device
// of the levels from it up, and the shares of the levels below it.

// Shared by the trainers (train.cpp, train_dc.cpp): shares as "[0.250 0.750]" for progress lines.
// (The median of a point's runs is schedule/model/statistics.hpp's.)
std::string shares_str(const std::vector<double>& s);

// The HPU paper's model (Section V), measured: each device's time for each level with every
// element on it (one run per device), and the cost of moving the vector to it and back (that
// run's time beyond its levels). A level split by shares takes each device its share of its
// whole-vector time (the levels below a crossover have many subproblems: every device is
// saturated), so the split levels end when the slowest device's part does; the crossover moves
// the vector through the host to the upper device and back once.
struct DcModel {
  std::vector<std::vector<double>> level_ms;  // [device][level]
  std::vector<double> transfer_ms;            // [device]
  // Subproblems at each level: a device's part of the split levels is whole subproblems of the
  // highest of them, so shares come in steps of 1 / subproblems[crossover - 1].
  std::vector<std::size_t> subproblems;

  std::size_t levels() const { return level_ms.empty() ? 0 : level_ms.front().size(); }
  // The plan for `crossover` (1 .. levels - 1) and `upper`: shares below the crossover
  // proportional to each device's rate over those levels (they finish together).
  Config plan(std::size_t crossover, std::size_t upper) const;
  // Everything on `device` (no crossing).
  Config single(std::size_t device) const;
  // The model's time for a plan made by plan() or single().
  double predict(const Config& c) const;
  // The fastest plan the model knows: every crossover level on every upper device, and each
  // device alone.
  Config best() const;
};

// Training for a divide-and-conquer tree with `subproblems[l]` subproblems at level l: each device alone (the model's
// runs), the model's best plan, then every crossover level on the model's upper device with the
// model's shares, then the shares below the best measured level moved by a quarter each way; the
// fastest measured plan wins. TrainingResult::strategy is "dc_model"; `analytic` is set to the
// model's plan. A derived plan's check and the balancer's level 2 (screen_only, fixed_platform)
// skip the sweep: the model's runs, its plan for this size and `start` (the plan of the nearest
// size, its crossover within this size's levels) are measured, and the faster kept.
TrainingResult train_divide_and_conquer(const std::vector<DeviceInfo>& devices, const Measure& measure,
                                        const TrainingOptions& options, const std::vector<std::size_t>& subproblems,
                                        const Progress& progress = {}, Config* analytic = nullptr,
                                        const std::optional<Config>& start = {});

}  // namespace sinew::detail
