// schedule/train_dynamic.cpp — the dynamic schedule's plan, measured beside the static plans a
// training found (TrainingOptions::dynamic: where the tree's partitions are independent). One
// function, the schedule's training point: what a schedule policy contributes to a training.
#include "schedule/train_search.hpp"

#include <algorithm>

namespace sinew::detail {

// At the best plan's fission and overlap, each device taking chunks weighted by its measured
// speed: from each device alone where each was measured, else from the fastest split (its shares
// rebalanced by its device times); even weights where neither was. Where the work is regular a
// balanced static split wins (no chunks to take); where its cost is irregular, or shifts from
// run to run, chunks taken as the devices get ready do.
void measure_dynamic_plan(PlanSearch& s) {
  const auto& devices = s.devices();
  Config c = s.ledger().fastest().config;
  std::optional<TrainingPoint> split;  // a copy: measuring below adds points
  std::vector<double> alone(devices.size(), 0.0);  // each device's best time alone
  for (const auto& p : s.ledger().points()) {
    if (p.config.schedule != "static") continue;
    const auto active = working_devices(p.config);
    if (active > 1 && (!split || p.time_ms < split->time_ms)) split = p;
    if (active == 1)
      for (std::size_t d = 0; d < devices.size(); ++d)
        if (p.config.shares[d] > 0 && (alone[d] == 0 || p.time_ms < alone[d])) alone[d] = p.time_ms;
  }
  // Each device alone where the search did not get to it (its runs were kept for this): a
  // split's device times say little of a device's speed when the cost is irregular. Only where
  // the budget also leaves room for the dynamic plan itself.
  const std::size_t per_point = s.runs_per_point();
  const auto missing = static_cast<std::size_t>(std::count(alone.begin(), alone.end(), 0.0));
  if (s.ledger().affords(per_point * (missing + 1)))
    for (std::size_t d = 0; d < devices.size(); ++d)
      if (alone[d] == 0) {
        Config one = c;
        one.shares = Config::single(d, devices.size()).shares;
        const TrainingPoint* p = s.measure(one);
        if (!p) return;
        alone[d] = p->time_ms;
      }
  if (std::all_of(alone.begin(), alone.end(), [](double t) { return t > 0; })) {
    for (std::size_t d = 0; d < devices.size(); ++d) c.shares[d] = 1.0 / alone[d];
    PlanSearch::normalise(c.shares);
  } else {
    c.shares = split ? rebalance(devices, split->config.shares, split->device_ms) : s.even_shares();
  }
  c.schedule = "dynamic";
  c.items.erase("min_chunk");
  s.measure(c);
}

}  // namespace sinew::detail
