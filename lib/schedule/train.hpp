// schedule/train.hpp — finding the best plan for a tree and an input by measuring it.
//
// Training measures plans and keeps the fastest: the trainer named by the user's strategy
// (even_split, cpu_assisted, model) or by the tree's node kind (dc_model for a divide-and-conquer
// tree) decides which plans, a shared ledger (schedule/train_ledger.hpp) counts the executions
// and keeps every point. Trainers are plug-ins registered by name (schedule/trainer.hpp). Every
// request is one of four purposes: a training, a derived plan's check, the balancer's level 2,
// one device's screening (TrainingPurpose). Everything here works on a `Measure` function (run
// the tree with a Config, return the times), so it is tested against synthetic device models
// (time = a*n + b, noise, load steps) as well as used on real runs.
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
  // The plan as it ran (Report::config), where the devices ran another than the one asked (one
  // fitted to their memory, train_on_copies); empty shares: the one asked.
  Config ran;
  // Of time_ms, what building or loading programs took (ProgramCache::Stats::build_seconds): left
  // out of a training's time budget.
  double build_ms = 0;
  // The units of the tree's partitioned dimension the run split (0: not known): what a fitted
  // device cost per share is per unit (TrainingSession::device_cost).
  std::size_t units = 0;
};
using Measure = std::function<Measurement(const Config&)>;

// What a caller asks of training.
enum class TrainingPurpose {
  train,          // a plan for an input: the trainer's whole search (Planner::plan)
  check_derived,  // a derived plan's check: its overlap levels and fissions screened at its
                  // distribution (one run each), one rebalancing step on the best, each device
                  // alone; no distribution search (screen_options)
  rebalance,      // the balancer's level 2: the distribution at the start's fission and overlap
                  // (level2_options)
  screen_device,  // one device alone (a run pinned to it that the knowledge base knows nothing
                  // of): its own levels, one run each, the two fastest once more (one_device_options)
};

// The trainers' values that measurements or design chose, in one place; the defaults are pinned
// by unit.TrainingTuning.Defaults. The decision records give the figures behind them.
struct TrainingTuning {
  // The model strategy's whole training (every run counted) takes at most this many runs, or
  // max_executions where that is smaller; not in exhaustive mode. docs/decisions/047
  std::size_t model_executions = 10;
  // Of those, the model's first fit at the start's platform configuration takes at most this
  // many when other levels are left to screen at its split.
  std::size_t model_first_fit_executions = 4;
  // The model's own plan stands for splits at its platform configuration measured faster by at
  // most this many precisions (and at least one): docs/decisions/048
  double model_margin_precisions = 2;
  // The model's second plan is the first one rebalanced where that moves every share by at least
  // this fraction of it (else shares skewed by powers of two).
  double model_rebalanced_move = 0.2;
  // The leaders measured once more each before the choice: docs/decisions/051
  std::size_t finalists = 2;
  // In a derived plan's check, each group's fastest plan alone runs this many times more before
  // the choice (a median of three): docs/decisions/045
  unsigned alone_again_runs = 2;
  // A device alone timed above its splits' bound by more than this many precisions is measured
  // again: docs/decisions/043
  double suspect_precisions = 2;
  // The even split's rebalancing steps at one platform configuration, at most.
  unsigned even_split_steps = 8;
  // The CPU-assisted search's first step of the CPU's share (halved on each step that loses).
  double assist_first_step = 0.1;
  // A training's start that leaves a device group idle gives it this share (split evenly
  // inside the group), so the search has its times to move work by.
  double idle_group_share = 0.05;
  // The overlap level a training starts at where the discrete devices offer it (else their
  // first level).
  unsigned start_overlap = 2;
  // A divide-and-conquer tree's shares below the best crossover are moved by this fraction of
  // each device's share, each way.
  double crossover_share_move = 0.25;
  // A training's time budget grows with the fastest plan it measured: it may run this many times
  // that plan's time where that is more than TrainingSettings::time_budget_s. docs/decisions/110
  double budget_best_plan_times = 50;
  // A device group not measured yet gets this share of the work in a probe plan (the rest on the
  // group expected fastest) before any plan gives it more. docs/decisions/111
  double probe_share = 1.0 / 64;
  // A plan that the devices' fitted costs put at this many times the fastest measured plan's time
  // or more is not run. docs/decisions/112
  double slow_plan_factor = 3;
  // A device's fitted cost drops a plan only within this many times the largest share the device
  // was measured at; beyond, the device is measured at the share its fit gives the fastest
  // plan's time first (a cost that is not linear shows there). docs/decisions/113
  double extrapolation_limit = 4;
  // Another platform level of a device (a CPU's other fission, a discrete device's other overlap
  // level) makes it at most this many times faster at a share than a measured level: a device's
  // measured points bound its time at a level it was not measured at, and a plan that bound puts
  // at slow_plan_factor times the fastest plan or more is not run, nor a probe before it; no
  // measurement starts whose runs at that bound do not fit the time budget. docs/decisions/173
  double level_speedup_limit = 3;
};

// The search as training, level 2, a derived plan's check and a pinned device's screening run it:
// the user's resolved TrainingSettings, and what the caller asks.
struct TrainingOptions {
  // Defaults: TrainingSettings' (one home: TrainingSettings::with_defaults()).
  Strategy strategy = defaults().strategy.value();      // the trainer: to_string(strategy) is its registered name
  double precision = defaults().precision.value();      // times within this fraction count as balanced; smallest step
  unsigned quality = defaults().quality.value();        // executions per measured point (their median counts)
  bool exhaustive = defaults().exhaustive.value();      // the spec's uniform search: the trainer's distribution
                                                        // search on every combination (TrainingPurpose::train only)
  std::size_t max_executions = defaults().max_executions.value();
  double time_budget_s = defaults().time_budget_s.value();  // the least time budget; 0: none
  TrainingTuning tuning;

  TrainingPurpose purpose = TrainingPurpose::train;
  // check_derived: each device alone at these levels (Config::single plans, the cost model's
  // fastest for it, CostPlan::alone_levels) before the leader's levels.
  std::vector<Config> alone_levels;
  // train: the tree may run with the dynamic schedule (its partitions are independent); the
  // training measures it beside the static plans it found (the best split's platform
  // configuration, its shares as the chunk weights) and keeps whichever is faster.
  bool dynamic = false;
  // The tree has a leaf written for the whole range whose launched source moves pointers
  // (moves_pointers_off_the_start), and a discrete device's share is one partition per overlap
  // queue (the tree neither streams nor keeps a device's share on one queue): each partition off
  // the range's first unit runs slower than the user's own kernel (docs/decisions/167). Of the
  // chosen plan's overlap levels measured within the precision of the fastest plan, the choice
  // keeps the one that runs the user's kernel on the most work (PlanSearch::choose_fastest,
  // docs/decisions/170).
  bool moved_pointer_leaves = false;
  // The tree keeps a discrete device's share on one queue whatever the overlap level (it exchanges
  // halos or refreshes replicas: decompose.hpp, Streaming::one_queue), so its static plans at two
  // levels run the same partitions (docs/decisions/171).
  bool one_queue = false;
  // Of the chosen plan's levels measured within the precision of the fastest plan, the choice
  // keeps the lowest (PlanSearch::choose_fastest): the tree's levels cost more than their times
  // show (PreparedTree::keeps_lowest_level: one_queue, or every partitioned vector resident,
  // docs/decisions/178).
  bool keeps_lowest_level = false;
  // screen_device: the device (a runtime index).
  std::size_t device = 0;

  // The training part of resolved settings (TrainingSettings::with_defaults()).
  static TrainingOptions from(const TrainingSettings& resolved);
  static const TrainingSettings& defaults();
};

// A derived plan's check: `base` for check_derived, at most `executions` runs.
TrainingOptions screen_options(TrainingOptions base, std::size_t executions);

// The balancer's level 2: `base` for rebalance (no exhaustive search), at most `executions` runs.
TrainingOptions level2_options(TrainingOptions base, std::size_t executions);

// One device's screening: `base` for screen_device of `device`, with runs for each of its levels
// once (each with an untimed first run) and the two fastest again.
TrainingOptions one_device_options(TrainingOptions base, const std::vector<DeviceInfo>& devices, std::size_t device);

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
  std::string strategy;           // the trainer's registered name
  unsigned quality = 0;           // executions per measured point (the model strategy: 2, the faster counts)
  std::vector<TrainingPoint> points;  // every measured point, in order
  std::optional<ModelChoice> model_choice;  // a model's own plan, where the trainer has one
  TrainingEnd end = TrainingEnd::completed;  // what ended it
  double budget_seconds = 0;      // its time budget at the end (0: none)
  double build_seconds = 0;       // of `seconds`, what runs spent building programs (off the budget's clock)
  double first_run_seconds = 0;   // of build_seconds, plans' first runs beyond their second (TrainingLedger)
  Copies timed_copies;            // the executor's copies in its timed runs, summed (train_on_copies)
};

// A training's time budget: max(floor_seconds, best_plan_times x the fastest measured plan's time);
// none where floor_seconds is 0.
struct TimeBudget {
  double floor_seconds = 0;
  double best_plan_times = 0;
  bool limited() const { return floor_seconds > 0; }
  double seconds(double fastest_ms) const;
};
// The time budget of a training with `options` (TrainingOptions::time_budget_s, TrainingTuning).
TimeBudget time_budget(const TrainingOptions& options);

// The runs a training with `options` may take: max_executions, within the model strategy's own
// budget (TrainingTuning::model_executions) for its own training.
std::size_t execution_budget(const TrainingOptions& options);

// One line per measured point: "[t s of T s, n/N executions] ... shares ... -> t ms; best ...", and
// the trainers' other lines (a model's fit, a probe, what ended training).
using Progress = std::function<void(const std::string&)>;

// Trains with the strategy's trainer over `devices`. `start`, when given (e.g. the nearest
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
// is (docs/decisions/050).
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

// Shared by the trainers: shares as "[0.250 0.750]" for progress lines. (The median of a point's
// runs is schedule/model/statistics.hpp's.)
std::string shares_str(const std::vector<double>& s);

}  // namespace sinew::detail
