// schedule/train_alone.cpp — each device group alone, the plans every search measures against its
// splits: a split must beat each group alone to win, and a group alone must be measured at its
// own best level (a GPU alone carries all the transfers, so its deepest overlap may pay where a
// split's did not, or, for a small input, none; a CPU alone may want another fission than its
// share did). A group alone timed above what the splits' own times bound it by is measured again.
#include "schedule/train_search.hpp"

#include "decompose/schedule_policy.hpp"

#include <algorithm>

namespace sinew::detail {

void PlanSearch::each_group_alone(Config c) {
  if (groups_.size() < 2) return;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (!measure(group_alone(c, g)) && stopped()) return;
}

// Its plan at `c`'s configuration first for every group, then the other levels (discrete groups
// first: their levels change most with the share), each measured once and skipped where
// measured already (the choice measures the leaders again).
void PlanSearch::each_group_alone_at_every_level(Config c) {
  if (groups_.size() < 2) return;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Config one = group_alone(c, g);
    if (!ledger_.measured(one) && !measure(one, 1) && stopped()) return;
  }
  for (bool discrete : {true, false})
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (discrete_group(g) != discrete) continue;
      for (const auto& level : group_levels(c, g)) {
        const Config one = group_alone(level, g);
        if (!ledger_.measured(one) && !measure(one, 1) && stopped()) return;
      }
    }
}

std::size_t PlanSearch::each_group_alone_cost() const {
  if (groups_.size() < 2) return 0;
  std::size_t runs = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) runs += discrete_group(g) ? overlaps_.size() : fissions_.size();
  return 2 * runs;
}

// A device (group) alone does its whole input no slower than its own time at a share s of a split
// over s: alone its fixed costs are paid once, and nothing contends with it. A single run timed
// far above that bound was a noisy one. Such a point is measured again, once, and the faster of
// its runs stands for the plan (a second run as slow or slower says the first was no outlier).
// The one furthest above its bound, one a training. docs/decisions/043
void PlanSearch::recheck_suspect_alone() {
  struct Suspect {
    std::size_t point;
    double excess;
  };
  const auto& points = ledger_.points();
  std::optional<Suspect> worst;
  for (std::size_t g = 0; g < groups_.size() && groups_.size() > 1; ++g) {
    double bound = 1e300;
    std::optional<std::size_t> alone;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const TrainingPoint& p = points[i];
      const auto [s, t] = group_load(p, g);  // (a plan's shares add up to 1)
      if (s > 0 && s < 1 - 1e-9 && t > 0 && places_shares(p.config)) bound = std::min(bound, t / s);
      if (s >= 1 - 1e-9 && (!alone || p.time_ms < points[*alone].time_ms)) alone = i;
    }
    if (!alone || bound >= 1e300) continue;
    const double excess = points[*alone].time_ms / (bound * (1 + tuning().suspect_precisions * options_.precision));
    if (excess > 1 && (!worst || excess > worst->excess)) worst = Suspect{*alone, excess};
  }
  if (!worst) return;
  const TrainingPoint suspect = points[worst->point];
  note("measuring " + suspect.config.str() + " again: its " + std::to_string(suspect.time_ms) +
       " ms exceed what the splits' own device times bound it by");
  // One run, as the point had (measured before: no untimed run); then the plan keeps only the
  // faster of the suspect and the new run.
  const TrainingPoint* again = measure(suspect.config, 1);
  if (!again) return;
  ledger_.keep_only(suspect.config, again->time_ms < suspect.time_ms ? *again : suspect);
}

}  // namespace sinew::detail
