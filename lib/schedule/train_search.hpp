// schedule/train_search.hpp — the search over device shares and platform levels that the
// strategies' trainers (even_split, cpu_assisted, model) share: its state (PlanSearch) and its
// flows (SearchTrainer). Internal to lib/schedule: callers use train() (schedule/train.hpp) or a
// registered trainer (schedule/trainer.hpp).
//
// One objective whatever the trainer: the result is the fastest measured plan among all the
// search tried (PlanSearch::choose_fastest), each device group alone included at every level of
// its own dimension that the search screened (each_group_alone_at_every_level); the trainers are
// ways to search, not different answers. A trainer adds its search of the distribution at one
// platform configuration (distribute) and, where it has one, its own whole training
// (train_plan); the flows of the other purposes — a derived plan's check, the balancer's level 2,
// one device's screening — are the same for every trainer (train_flows.cpp).
//
// The files: train_search.cpp (the state, measuring a point, the device groups),
// train_alone.cpp (each group alone, a suspect device alone measured again),
// train_screen.cpp (the platform levels screened at a distribution), train_choice.cpp (the
// choice of the fastest), train_flows.cpp (the flows), train_dynamic.cpp (the dynamic
// schedule's plan).
#pragma once

#include "schedule/model/linear_cost.hpp"
#include "schedule/train_ledger.hpp"
#include "schedule/trainer.hpp"

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail {

// How a trainer measures a plan in its own flows (every purpose but a derived plan's check, which
// measures each point once by the median rule).
struct MeasuringRule {
  // Runs of every point whatever the caller asks (0: the caller's, else the options' quality).
  unsigned runs = 0;
  // The fastest run counts, not the median; then no point gets an untimed first run (the slower
  // run carries a first run's costs).
  bool fastest_run_counts = false;
};

class PlanSearch {
 public:
  PlanSearch(const TrainingRequest& request, std::size_t executions, MeasuringRule rule);

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  const TrainingOptions& options() const { return options_; }
  const TrainingTuning& tuning() const { return options_.tuning; }
  TrainingLedger& ledger() { return ledger_; }
  const TrainingLedger& ledger() const { return ledger_; }
  // The current phase ended for want of executions: the step returns.
  bool stopped() const { return ledger_.phase_over(); }
  void note(const std::string& line) const { ledger_.note(line); }

  // The groups work moves between (device_groups), a CPU's fissions, a discrete device's overlap
  // levels (those of the first device of each kind).
  const std::vector<std::vector<std::size_t>>& groups() const { return groups_; }
  const std::vector<std::string>& fissions() const { return fissions_; }
  const std::vector<unsigned>& overlaps() const { return overlaps_; }

  // The plan a training starts from: `start` where it fits the devices (its levels among those
  // offered; with `pin_levels` its fission and overlap the only ones searched; idle groups given
  // a little work unless `keep_shares`), else the even split at the start overlap level.
  Config starting_plan(const std::optional<Config>& start, bool pin_levels, bool keep_shares);
  // From now on a point is one run where the caller asks none (a check, a device's screening).
  void measure_once_a_point() { quality_ = 1; }
  // The runs a point takes when the caller asks `asked` (0: the quality).
  unsigned runs_per_point(unsigned asked = 0) const;
  // The trainer's own plan (a fit over many points): it stands for the splits at its platform
  // configuration measured faster within the margin (a fraction), never against a device alone
  // or another level (choose_fastest).
  void prefer(const Config& plan) { preferred_ = plan; }
  void prefer_within(double margin) { preferred_margin_ = margin; }

  // --- Measuring (train_search.cpp) ---------------------------------------------------------
  // Measures `c` (named as without_idle_levels names it) with `runs` runs (0: the quality); a
  // fission's first use, and a device alone measured once and never before, get an untimed run
  // first (docs/decisions/042). Nullptr where the phase cannot afford it (stopped()), or where the
  // devices' measured costs put `c` too far behind the fastest plan to run (estimated_too_slow:
  // not stopped; the step goes on with its next plan).
  // A point of one run that was its plan's first and took slow_plan_factor times the fastest
  // point or more runs once more, and the second run counts (docs/decisions/159).
  const TrainingPoint* measure(const Config& c, unsigned runs = 0);
  // measure() whatever the estimates say: a schedule policy's own plans, which it weighs by
  // each device alone's time (measure_dynamic_plan).
  const TrainingPoint* measure_as_asked(const Config& c) { return stopped() ? nullptr : measure_now(c, 0); }
  std::vector<double> even_shares() const;
  static void normalise(std::vector<double>& shares);

  // --- Probes (train_probe.cpp) -------------------------------------------------------------
  // Whether a request's training probes each group first: a training of several groups from no
  // starting plan, outside exhaustive mode.
  bool probes_first(const TrainingRequest& request) const;
  // Each group but one measured on TrainingTuning::probe_share of the work; `base` takes the
  // shares their rates give where its own estimate is too slow (estimated_behind).
  void probe_groups(Config& base);
  // Whether the devices' fitted costs put static plan `c` at TrainingTuning::slow_plan_factor times
  // the fastest measured plan or more (an estimate: nothing is measured).
  bool estimated_behind(const Config& c) const;
  // Device d's time at `c`'s platform levels fitted to its points there, in shares of the work;
  // nothing where fewer than two of its shares were measured there.
  std::optional<LinearCost> fitted_cost(std::size_t d, const Config& c) const;
  // The units the measured runs split (Measurement::units; 0: not known).
  std::size_t units() const { return units_; }
  // Whether the devices' measured costs put static plan `c`, not measured yet, at
  // TrainingTuning::slow_plan_factor times the fastest measured plan or more (said in a progress
  // line). A device whose cost would be extrapolated far beyond its measured shares is measured
  // nearer first.
  bool estimated_too_slow(const Config& c);
  // What each run of `c` is expected to take, for the time budget: its measured time, else at
  // least the fastest plan's and each working device's least time by its points (device_floor);
  // 0 before the first point. docs/decisions/110, 173
  double expected_ms(const Config& c) const;

  // --- Device groups (train_search.cpp) -----------------------------------------------------
  // The plan with group g alone at `c`'s platform configuration (its shares inside the group).
  Config group_alone(const Config& c, std::size_t g) const;
  // The group a static plan gives all the work to, of a search over several; nothing otherwise.
  std::optional<std::size_t> group_of(const Config& c) const;
  // Whether `c` is one device (group) alone, of a search over several, and not measured yet.
  bool unmeasured_alone(const Config& c) const;
  // Whether a group's devices are discrete (their level: the overlap) or CPUs (the fission).
  bool discrete_group(std::size_t g) const;
  // The levels of group g's own dimension: its overlap levels or its fissions, `c`'s first.
  std::vector<Config> group_levels(const Config& c, std::size_t g) const;
  // Group g's summed share in p's plan, and the time its slowest device with a share took.
  std::pair<double, double> group_load(const TrainingPoint& p, std::size_t g) const;
  // Whether p's groups finished within the precision of each other.
  bool balanced(const TrainingPoint& p) const;
  // The CPU group, where the machine has one beside other kinds.
  std::optional<std::size_t> cpu_group() const;

  // --- Shared steps -------------------------------------------------------------------------
  // train_screen.cpp: overlap levels, then fissions, one at a time at `from`'s distribution;
  // returns the leader by the time it would take rebalanced.
  Config screen_platform(const TrainingPoint& from);
  // train_alone.cpp: every group alone at `c`'s platform configuration (each point at the
  // quality); and at every level of its own dimension (one run each, skipping what was measured).
  // By value: measuring may move the point `c` came from.
  void each_group_alone(Config c);
  void each_group_alone_at_every_level(Config c);
  // Executions each_group_alone_at_every_level may take: every group at every level, one timed
  // and one untimed run each.
  std::size_t each_group_alone_cost() const;
  // A device alone timed above what the splits' device times bound it by, measured again.
  void recheck_suspect_alone();
  // train_choice.cpp: the `finalists` leaders run once more each, with `alone_again` each
  // group's fastest plan alone twice more; the lowest median wins (with the tie rules).
  std::pair<Config, double> choose_fastest(std::size_t finalists, bool alone_again);
  // The training's result: `best`, the points, the executions and the time.
  TrainingResult result(std::string_view trainer, const std::pair<Config, double>& best) const;

 private:
  // train_choice.cpp: `chosen` at another of its overlap levels measured within the precision of
  // the fastest plan (`ranked`'s first) where that level is worth more: for a tree that keeps a
  // device's share on one queue (TrainingOptions::one_queue) a lower level, for one with
  // moved-pointer leaves (TrainingOptions::moved_pointer_leaves) one that runs the user's own
  // kernel on more of the work (moved_pointer_share); else `chosen`.
  std::pair<Config, double> kept_level(const std::pair<Config, double>& chosen,
                                       const std::vector<std::pair<Config, double>>& ranked) const;
  enum class Verdict { fine, too_slow, unsure };
  // What a device's points say of it at its share of a plan, against the bound of a slow plan.
  struct DeviceVerdict {
    Verdict verdict = Verdict::fine;
    double confirm = 0;  // unsure: the share to measure the device at first
    double ms = 0;       // too slow: the device's time at its share, at least (0: not estimated)
    std::string basis;   // too slow: the points behind `ms` ("its run on share [0.016] at fission=none")
  };
  // The least time a device's points allow it at its share of a plan, and the point behind it.
  struct DeviceFloor {
    double ms = 0;
    const TrainingPoint* from = nullptr;
  };
  double balanced_time(const TrainingPoint& p) const;
  std::string point_line(const TrainingPoint& p) const;
  // measure() without the estimate; `exactly`: `runs` runs whatever the trainer's rule says (a
  // probe, a device measured before a plan that would give it more).
  const TrainingPoint* measure_now(const Config& c, unsigned runs, bool exactly = false);
  // Whether a plan's first and only run of `time_ms` runs once more (see measure()): it takes that
  // execution where the phase affords it.
  bool first_run_suspect(double time_ms);
  std::vector<CostPoint> device_points(std::size_t d, const Config& c, bool& same_setting,
                                       std::vector<CostPoint>* every_setting = nullptr) const;
  DeviceVerdict device_verdict(std::size_t d, const Config& c, double bound) const;
  // Whether p's time of device d is d's own, not a wait for a slower device (train_probe.cpp).
  bool own_time(const TrainingPoint& p, std::size_t d) const;
  // Device d's least time at its share of `c` by its own times at every level (train_probe.cpp).
  DeviceFloor device_floor(std::size_t d, const Config& c) const;
  std::optional<Config> confirming_plan(std::size_t d, const Config& c, double share) const;

  const std::vector<DeviceInfo>& devices_;
  const Measure& measure_;
  const Measure& untimed_;
  TrainingOptions options_;
  MeasuringRule rule_;
  unsigned quality_;
  TrainingLedger ledger_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::string> fissions_;
  std::vector<unsigned> overlaps_;
  std::set<std::string> warmed_;  // fissions run once (their programs built)
  std::set<std::string> not_run_;  // plans estimated too slow to run (Config::str)
  std::optional<Config> preferred_;
  double preferred_margin_ = 0;
  std::size_t units_ = 0;  // Measurement::units of the runs measured
};

// The strategies' trainers: the flows of every purpose over a PlanSearch (train_flows.cpp), with
// what each trainer adds.
class SearchTrainer : public Trainer {
 public:
  std::size_t executions(const TrainingOptions& options) const final;
  TrainingResult train(const TrainingRequest& request) const final;

  // The shares at `at`'s fission and overlap: this trainer's search of the distribution (a
  // training's, exhaustive mode's at every combination, level 2's). Returns the plan it found
  // (what callers read only where the search did not stop).
  virtual Config distribute(PlanSearch& search, const Config& at) const = 0;
  // A whole training from `base`, `reserved` executions kept for what follows (the dynamic plan,
  // the finalists). By default: distribute at `base`, screen the platform levels at the fastest
  // point, distribute again at a new leader, then each group alone at every level of its own
  // dimension (docs/decisions/041).
  virtual void train_plan(PlanSearch& search, const Config& base, std::size_t reserved) const;
  // How this trainer measures a point in its own flows.
  virtual MeasuringRule measuring() const { return {}; }
  // Its own cap on a training's executions (0: none), for a training and a device's screening
  // outside exhaustive mode; where it applies no finalists run.
  virtual std::size_t own_executions(const TrainingTuning& tuning) const {
    (void)tuning;
    return 0;
  }

 private:
  bool own_budget_applies(const TrainingOptions& options) const;
};

// The even split's search at `c`'s platform configuration (train_even_split.cpp): shares moved
// in proportion to the groups' measured rates until they finish together. Also the CPU-assisted
// trainer's where no CPU works beside other kinds.
Config even_split_search(PlanSearch& search, Config c);

// The dynamic schedule's plan beside the static ones a training found (train_dynamic.cpp).
void measure_dynamic_plan(PlanSearch& search);

// The share of the work that a leaf written for the whole range runs with its pointers moved
// (the launched kernel, docs/decisions/167) under static plan `c` (train_choice.cpp): each
// device's share but a zero-copy device's, less, where a device that is not zero-copy holds the
// range's first unit, its partition there: one of a discrete device's `overlap` queues' parts
// (devices take the range in their order), where the share is one partition per overlap queue
// (TrainingOptions::moved_pointer_leaves).
double moved_pointer_share(const Config& c, const std::vector<DeviceInfo>& devices);

}  // namespace sinew::detail
