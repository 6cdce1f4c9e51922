// schedule/train_choice.cpp — the choice of a training's plan: the leaders measured again, then
// the configuration with the lowest median of its points, with three tie rules (a group alone
// over a split within the precision; a trainer's own plan stands for splits within its margin;
// of the chosen plan's overlap levels, a tree that keeps each device's share on one queue or
// whose data is all resident keeps the lowest, one with global-index leaves the one that runs the
// user's own kernel on the most work).
#include "schedule/train_search.hpp"

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"

#include <algorithm>

namespace sinew::detail {

namespace {

bool is_split(const Config& c) { return working_devices(c) > 1; }

// Whether `a` and `b` are one plan at two overlap levels.
bool other_level(const Config& a, const Config& b) {
  return a.overlap != b.overlap && a.shares == b.shares && a.fission == b.fission && a.schedule == b.schedule &&
         a.items == b.items;
}

}  // namespace

double moved_pointer_share(const Config& c, const std::vector<DeviceInfo>& devices) {
  double total = 0, moved = 0;
  bool at_start = true;  // the device holds the range's first unit
  for (std::size_t d = 0; d < c.shares.size() && d < devices.size(); ++d) {
    const double s = c.shares[d];
    if (s <= 0) continue;
    total += s;
    const double parts = devices[d].discrete ? std::max(1u, c.overlap) : 1.0;
    if (!zero_copy_device(devices[d])) moved += at_start ? s * (1 - 1 / parts) : s;
    at_start = false;
  }
  return total > 0 ? moved / total : 0;
}

std::pair<Config, double> PlanSearch::kept_level(const std::pair<Config, double>& chosen,
                                                 const std::vector<std::pair<Config, double>>& ranked) const {
  const bool alike = options_.one_queue;  // every level runs the same partitions
  const bool lowest = options_.keeps_lowest_level;
  if ((!lowest && !options_.moved_pointer_leaves) || !places_shares(chosen.first) || ranked.empty()) return chosen;
  // What a level costs beyond its measured time: where every level runs the same partitions, its
  // level (one plan under several names: the lowest names it, docs/decisions/171), and where
  // nothing moves, its level too (more queues to feed and wait for, docs/decisions/178); else the
  // work its global-index leaves run with moved pointers (docs/decisions/170).
  auto cost = [&](const Config& c) { return lowest ? double(c.overlap) : moved_pointer_share(c, devices_); };
  const double within = ranked.front().second * (1 + options_.precision);
  std::pair<Config, double> kept = chosen;
  double kept_cost = cost(chosen.first);
  for (const auto& r : ranked) {  // fastest first: of equal costs, the faster stays
    if (r.second > within || !other_level(r.first, chosen.first)) continue;
    if (const double c = cost(r.first); c < kept_cost - 1e-9) kept = r, kept_cost = c;
  }
  if (!(kept.first == chosen.first))
    note("overlap=" + std::to_string(kept.first.overlap) + " kept over overlap=" + std::to_string(chosen.first.overlap) +
         ", within the precision of the fastest plan: " +
         (alike    ? std::string("the tree keeps each device's share on one queue, so both levels run the same "
                                  "partitions (docs/decisions/171)")
          : lowest ? std::string("its data is resident, so a level only adds queues to feed and wait for "
                                 "(docs/decisions/178)")
                   : std::string("its global-index leaves run the kernel as written on more of the work "
                                 "(docs/decisions/170)")));
  return kept;
}

std::pair<Config, double> PlanSearch::choose_fastest(std::size_t finalists, bool alone_again) {
  ledger_.phase(0, [&] {
    // The leaders once more each (docs/decisions/051) and, with `alone_again`, each group's
    // fastest plan alone twice more: a median of three (docs/decisions/045).
    const auto leaders = ledger_.ranked();
    const unsigned again_runs = tuning().alone_again_runs;
    std::vector<std::pair<Config, unsigned>> again;  // plan, runs
    for (std::size_t i = 0; i < std::min(finalists, leaders.size()); ++i) again.emplace_back(leaders[i].first, 1);
    std::vector<bool> seen(groups_.size(), false);
    for (const auto& [c, ms] : leaders) {
      const auto g = alone_again ? group_of(c) : std::nullopt;
      if (!g || seen[*g]) continue;
      seen[*g] = true;
      auto it = std::find_if(again.begin(), again.end(), [&](const auto& a) { return a.first == c; });
      if (it == again.end()) again.emplace_back(c, again_runs);
      else it->second = again_runs;  // a leader too: its one run more would leave a median of two
    }
    for (const auto& [c, runs] : again)
      for (unsigned i = 0; i < runs; ++i)
        if (!measure(c, 1) && stopped()) return;
  });
  const auto r = ledger_.ranked();
  // A split over groups measured within the precision of a group alone is a tie the group alone
  // takes: the split's lead is below what training tells apart, and it would hold a second device
  // whose co-run costs (the placement of its buffers, another program beside it) no run of the
  // training saw; the group alone has no partner to wait for (docs/decisions/046, 177).
  if (groups_.size() > 1 && is_split(r.front().first) && !group_of(r.front().first))
    for (const auto& [c, ms] : r)
      if (group_of(c) && ms <= r.front().second * (1 + options_.precision)) return kept_level({c, ms}, r);
  // A trainer's own plan (the model strategy's fit over every split at its platform
  // configuration) stands for those splits within its margin: with two runs a point and 10%
  // noise the fastest of neighbouring splits is only the luckiest
  // (unit.TrainModel.LandsNearTheOptimumWithTenPercentNoise). Never against a device alone or
  // another level.
  if (preferred_ && is_split(r.front().first) && r.front().first.fission == preferred_->fission &&
      r.front().first.overlap == preferred_->overlap && r.front().first.schedule == preferred_->schedule)
    for (const auto& [c, ms] : r)
      if (c == *preferred_ && ms <= r.front().second * (1 + preferred_margin_)) return kept_level({c, ms}, r);
  // Of the chosen plan's overlap levels within the precision, the one that costs least beyond its
  // time (kept_level: docs/decisions/170, 171).
  return kept_level(r.front(), r);
}

}  // namespace sinew::detail
