// schedule/train_choice.cpp — the choice of a training's plan: the leaders measured again, then
// the configuration with the lowest median of its points, with two tie rules (a derived plan's
// check prefers a group alone; a trainer's own plan stands for splits within its margin).
#include "schedule/train_search.hpp"

#include <algorithm>

namespace sinew::detail {

namespace {

bool is_split(const Config& c) { return working_devices(c) > 1; }

}  // namespace

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
  // A derived plan's check measures most points once: a split over groups it measured within the
  // precision of a group alone is a tie, and the group alone has no partner to wait for
  // (docs/decisions/046).
  const bool checking = options_.purpose == TrainingPurpose::check_derived;
  if (checking && groups_.size() > 1 && is_split(r.front().first) && !group_of(r.front().first))
    for (const auto& [c, ms] : r)
      if (group_of(c) && ms <= r.front().second * (1 + options_.precision)) return {c, ms};
  // A trainer's own plan (the model strategy's fit over every split at its platform
  // configuration) stands for those splits within its margin: with two runs a point and 10%
  // noise the fastest of neighbouring splits is only the luckiest
  // (unit.TrainModel.LandsNearTheOptimumWithTenPercentNoise). Never against a device alone or
  // another level.
  if (preferred_ && is_split(r.front().first) && r.front().first.fission == preferred_->fission &&
      r.front().first.overlap == preferred_->overlap && r.front().first.schedule == preferred_->schedule)
    for (const auto& [c, ms] : r)
      if (c == *preferred_ && ms <= r.front().second * (1 + preferred_margin_)) return {c, ms};
  return r.front();
}

}  // namespace sinew::detail
