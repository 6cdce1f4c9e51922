// schedule/balancer_drift.hpp — slow drift: the spec's lbt(n) = unbalanced(n) * w + lbt(n-1) *
// (1 - w), where a watched run is unbalanced when the move to the optimum is predicted to gain
// more than Moves::drift_errors standard errors of the estimates and Moves::drift_bound_fraction
// of the bound (docs/decisions/007); lbt reaching the trigger moves the plan (an episode follows).
//
// Lopsided plans move whatever the gain's noise says: over Moves::lopsided_windows windows in a
// row a device at a small share (Moves::lopsided_share) finishes within Moves::lopsided_within of
// another's time and the optimum gives it more (a transient never lasts that long; a step is seen
// by the step rules). A device the model has seen at that one share (no line, no fixed cost)
// looks as slow per unit as its fixed cost makes it, and the gain it predicts stays within the
// noise for good; the move gives the model a second share, and the episode takes the plan back
// where it was slower (docs/decisions/009).
#pragma once

#include <sinew/options.hpp>

#include <cstddef>

namespace sinew::detail {

class SlowDrift {
 public:
  double lbt() const { return lbt_; }
  // A watched run whose plan is lopsided (`now`) or not: true once it has been for
  // lopsided_windows windows of `window` runs in a row.
  bool lopsided_for_long(bool now, std::size_t window, const BalancerTuning::Moves& tuning);
  // lbt at least `trigger`: the plan moves at this run.
  void force(double trigger);
  // lbt after a judged run.
  double update(bool unbalanced, double weight);
  // A new plan: lbt and the lopsided count start over.
  void restart() { lbt_ = 0, lopsided_runs_ = 0; }

 private:
  double lbt_ = 0;
  std::size_t lopsided_runs_ = 0;  // watched runs in a row whose plan was lopsided
};

}  // namespace sinew::detail
