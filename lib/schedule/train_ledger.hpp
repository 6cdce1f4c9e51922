// schedule/train_ledger.hpp — one training's budget and measured points, shared by every trainer.
//
// The budget: the executions the training may take, spent point by point, and the phases a
// trainer runs them in, each keeping executions for the phases after it (so that a search that
// spends its share still leaves each device alone and the finalists their runs). A spent budget
// is a state, not an exception: take() answers false, the phase is over and every later take in
// it is refused too; the trainer returns (`if (!ledger.take(n)) return;`). The time budget
// (TimeBudget) ends the whole training, every phase at once, once its wall time reaches it; the
// first point is measured whatever either budget says (a training returns a measured plan). What
// ended the training: end(). The points: every
// measured plan in order, the fastest one, each configuration ranked by the median of its
// points. The clock and the progress lines: the training's wall time less its builds (the
// programs its runs built, and what each plan's first run took beyond its second: a driver that
// compiles a kernel at its first launch of a work-group shape compiles inside that run,
// docs/decisions/158), and every line a trainer writes goes through note(). A ledger can go on
// from a finished training (the whole leaf's device chosen after the trainer's plan), so that
// what follows spends the same budgets on the same clock.
//
// Internal to lib/schedule; one ledger per training, used from one thread.
#pragma once

#include "schedule/train.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

class TrainingLedger {
 public:
  // `executions`: the training's whole budget; `time`: its time budget.
  TrainingLedger(std::size_t executions, Progress progress, TimeBudget time = {});
  // Goes on from `trained`: its executions spent (of `executions`), its points, its wall time and
  // builds, what ended it.
  TrainingLedger(const TrainingResult& trained, std::size_t executions, Progress progress, TimeBudget time);
  // Writes the ledger's executions, points, wall time, end, budget and builds into `r`.
  void into(TrainingResult& r) const;

  // --- The budget -----------------------------------------------------------------------------
  std::size_t spent() const { return spent_; }
  std::size_t total() const { return total_; }
  // What the current phase may spend up to: the total less what the phases after it keep.
  std::size_t limit() const { return limit_; }
  // Whether `runs` more executions fit the current phase (nothing is taken).
  bool affords(std::size_t runs) const { return spent_ + runs <= limit_; }
  // Takes `runs` executions for one point from the current phase; false where they do not fit,
  // which ends the phase (every later take in it is refused too), or where the time budget has
  // no room left for `runs` runs of `each_ms` (the runs' expected time, 0: unknown), which ends
  // the training. The first point of a training is never refused: a training returns a measured
  // plan.
  bool take(std::size_t runs, double each_ms = 0);
  // Whether the current phase ended for want of executions.
  bool phase_over() const { return phase_over_; }
  // Whether any phase did (or the time budget ran out): the training stopped short of what it
  // would have measured.
  bool stopped() const { return stopped_; }
  // What ended the training (so far): the time budget, the executions, or neither.
  TrainingEnd end() const;
  // The time budget with the fastest point so far, in seconds; 0 where there is none.
  double budget_seconds() const;
  // The line that says what stopped the training ("stopped: the time budget of 2.0 s is spent").
  std::string stop_line() const;
  // "1.3 s of 2.0 s, 12/40 executions": the budgets spent so far, for progress lines.
  std::string status() const;
  // Runs `steps` as one phase that keeps `reserved` executions of the current limit for the
  // phases after it. The first phase that ends for want of executions says so (once a training).
  template <class Steps>
  void phase(std::size_t reserved, Steps&& steps);

  // --- The points -----------------------------------------------------------------------------
  const std::vector<TrainingPoint>& points() const { return points_; }
  // A new point, last. Returns it (valid until the next point is added).
  const TrainingPoint& add(TrainingPoint p);
  bool measured(const Config& c) const;
  // The first point of `c`, nullptr when it was never measured.
  const TrainingPoint* find(const Config& c) const;
  // The single fastest point (the first of equals); the ledger must hold one.
  const TrainingPoint& fastest() const;
  // Every measured configuration with the median of its points' times, fastest first (stable:
  // equal medians in the order first measured).
  std::vector<std::pair<Config, double>> ranked() const;
  // `c`'s points replaced by `kept`, placed last.
  void keep_only(const Config& c, const TrainingPoint& kept);

  // --- Progress and time ----------------------------------------------------------------------
  void note(const std::string& line) const;
  // Wall time since the ledger was made.
  double seconds() const;
  // The time budget's clock: seconds() less the builds (build_seconds()). Every run counts,
  // untimed first runs included: the budget bounds what a user waits for, program builds aside
  // (docs/decisions/110).
  double budget_clock() const { return std::max(0.0, seconds() - build_seconds()); }
  // What the runs spent building or loading programs (Measurement::build_ms) and, of that,
  // first_run_seconds().
  double build_seconds() const { return program_build_seconds_ + first_run_seconds_; }
  // What plans' first runs took beyond their second run (each without its program builds; none
  // where the first was the faster): the kernels a driver compiled at their first launch of a
  // work-group shape (docs/decisions/158).
  double first_run_seconds() const { return first_run_seconds_; }
  // Every run a trainer makes goes through here: its program builds and a plan's first run's
  // excess leave the budget's clock, so that no trainer can count them against its budget or
  // forget to.
  Measurement run(const Measure& measure, const Config& c);
  // Whether `c` ran through run() before.
  bool ran(const Config& c) const { return first_runs_.contains(c.str()); }

 private:
  // " with 0.3 s building programs and 1.2 s in plans' first runs beyond their second"; "" without builds.
  std::string builds_text() const;
  // Whether the budget's clock, `ahead_s` seconds on, has reached the budget.
  bool out_of_time(double ahead_s) const;

  std::size_t total_;
  std::size_t limit_;
  std::size_t spent_ = 0;
  bool phase_over_ = false;
  bool stopped_ = false;
  TimeBudget time_;
  bool time_over_ = false;
  double program_build_seconds_ = 0;
  double first_run_seconds_ = 0;
  // Each plan run (Config::str()): its first run's time without builds until its second run.
  std::map<std::string, std::optional<double>> first_runs_;
  Progress progress_;
  std::vector<TrainingPoint> points_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

template <class Steps>
void TrainingLedger::phase(std::size_t reserved, Steps&& steps) {
  const std::size_t outer_limit = limit_;
  const bool outer_over = phase_over_;
  limit_ = limit_ > reserved ? limit_ - reserved : 0;
  phase_over_ = time_over_;  // a spent time budget ends every phase
  steps();
  if (phase_over_ && !stopped_ && !time_over_)
    note("stopped: the budget of " + std::to_string(limit_) + " executions is spent");
  stopped_ = stopped_ || phase_over_;
  limit_ = outer_limit;
  phase_over_ = outer_over || time_over_;
}

}  // namespace sinew::detail
