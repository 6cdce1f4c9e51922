// schedule/train_search.hpp — the training search's state, shared by the files that implement
// it: train.cpp (the flow of a training, the measured points and the choice of the plan),
// train_search.cpp (the even-split and CPU-assisted searches, the screening of platform
// configurations, each device alone, the dynamic schedule's point) and train_model.cpp (the
// model strategy). Internal to lib/schedule: callers use train() (schedule/train.hpp).
//
// One objective whatever the strategy: the result is the fastest measured plan among all the
// search tried (decide()), each device alone included at every level of its own dimension that
// the search screened (singles()); the strategies are ways to search, not different answers.
#pragma once

#include "schedule/model/linear_cost.hpp"
#include "schedule/train.hpp"

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

class Search {
 public:
  Search(const std::vector<DeviceInfo>& devices, const Measure& measure, const Measure& untimed,
         const TrainingOptions& o, const Progress& p);
  TrainingResult run(const std::optional<Config>& start);

 private:
  struct Budget {};

  // --- train.cpp: points, budget and the choice -----------------------------------------------
  std::vector<double> even_shares() const;
  static void normalise(std::vector<double>& s);
  void note(const std::string& line);
  // Runs `f` with `reserved` executions of the budget kept for what follows it: a spent budget
  // ends `f` alone.
  template <class F>
  void within(std::size_t reserved, F&& f);
  // Every measured configuration with the median of its points' times, fastest first.
  std::vector<std::pair<Config, double>> ranked() const;
  const TrainingPoint& best_point() const;
  // Measures a config `quality` times (see train.cpp).
  const TrainingPoint& point(const Config& c, unsigned quality = 0);
  // Whether `c` is one device (group) alone, of a search over several, and not measured yet.
  bool first_alone(const Config& c) const;
  // The fastest measured plan: the `finalists` leaders run once more each (what the budget
  // leaves), with `alone_again` each group's fastest plan alone twice, then the lowest median of
  // each configuration's points wins.
  std::pair<Config, double> decide(std::size_t finalists, bool alone_again = false);
  // The group a static plan gives all the work to, of a search over several; nothing otherwise.
  std::optional<std::size_t> group_of(const Config& c) const;
  // A device alone whose time contradicts the splits' device times, measured again (train.cpp).
  void recheck_alone();
  // The flows: a full training (even split, CPU-assisted), a derived plan's check, one device's
  // platform levels (TrainingOptions::alone).
  void full(const Config& base, std::size_t reserved);
  void check(const Config& base, std::size_t reserved);
  void alone(std::size_t device, std::size_t reserved);

  // --- train_search.cpp ------------------------------------------------------------------------
  Config screen_platform(const TrainingPoint& from);
  double balanced_time(const TrainingPoint& p) const;
  // Group g's summed share in p's plan, and the time its slowest device with a share took.
  std::pair<double, double> group_load(const TrainingPoint& p, std::size_t g) const;
  bool balanced(const TrainingPoint& p) const;
  Config strategy(Config c);
  Config even(Config c);
  Config assist(Config c, std::size_t cpu_group);
  // The plan with group g alone at `c`'s platform configuration (its shares inside the group).
  Config one_group(const Config& c, std::size_t g) const;
  // Whether a group's devices are discrete (their level: the overlap) or CPUs (the fission).
  bool discrete_group(std::size_t g) const;
  // The levels of group g's own dimension: its overlap levels or its fissions, `c`'s first.
  std::vector<Config> group_levels(const Config& c, std::size_t g) const;
  // Executions singles(c, true) may take: every group at every level, one timed and one untimed
  // run each, the fissions not built yet included.
  std::size_t singles_cost() const;
  // Every group alone at `c`'s platform configuration; with `every_level`, also at every other
  // level of its own dimension (one run each: decide() measures the leaders again).
  void singles(Config c, bool every_level);
  void dynamic_point();

  // --- train_model.cpp: the model strategy -----------------------------------------------------
  struct Line {
    LinearCost cost;           // the device's time in its share: fixed ms + ms per whole input
    std::size_t distinct = 0;  // distinct shares behind it (0: no point, the device is unknown)
    bool borrowed = false;     // the shape of the device's model at another setting
    double squares = 0;        // the sum of the squared relative residuals
    std::size_t freedom = 0;   // points beyond the line's parameters
  };
  struct Prediction {
    std::vector<double> shares;
    double ms = 1e300;
  };
  std::string setting(std::size_t d, const Config& c) const;
  static Line least_squares(const std::vector<std::pair<double, double>>& pts);
  Line fit(std::size_t d, const Config& c, bool borrow = true) const;
  Prediction predict(const std::vector<Line>& lines) const;
  static double modelled_ms(const std::vector<Line>& lines, const std::vector<double>& shares);
  std::vector<double> skewed(const TrainingPoint& p) const;
  std::string describe(const std::vector<Line>& lines, const Prediction& p, const Config& c) const;
  Config model(Config c, std::size_t until);
  void model_training(const Config& base, std::size_t reserved);
  void model_search(const Config& base);
  // Each group alone at the level of its own dimension whose model predicts it fastest alone.
  void model_singles(Config c);

  const std::vector<DeviceInfo>& devices_;
  const Measure& measure_;
  const Measure& untimed_;  // the untimed first runs (train()'s `untimed`)
  TrainingOptions o_;
  Progress progress_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::string> fissions_;
  std::vector<unsigned> overlaps_;
  std::set<std::string> warmed_;
  bool stopped_ = false;  // the budget ended a phase (said once)
  // The model strategy's plan: the measured split nearest to its models' last prediction, and the
  // scatter of the times about the models (a fraction: the precision, or twice the fits'
  // scatter). Among splits at the model's platform configuration a faster measured one must beat
  // it by more than that to be taken (see decide()).
  std::optional<Config> model_plan_;
  double model_margin_ = 0;
  std::vector<TrainingPoint> points_;
  std::size_t executions_ = 0;
};

template <class F>
void Search::within(std::size_t reserved, F&& f) {
  const std::size_t total = o_.max_executions;
  o_.max_executions = total > reserved ? total - reserved : 0;
  try {
    f();
  } catch (const Budget&) {
    if (!stopped_) note("stopped: the budget of " + std::to_string(o_.max_executions) + " executions is spent");
    stopped_ = true;
  }
  o_.max_executions = total;
}

}  // namespace sinew::detail
