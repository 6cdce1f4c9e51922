// schedule/balancer_regimes.cpp — the regimes a device leaves at its steps, kept so that it can
// come back to one (schedule/balancer_watch.hpp, DeviceWatch::restart and returned).
//
// A load that leaves a device at a small share takes it back to where it was: the runs at the
// shares it had before the load give its line at once, where the new runs alone, at one share,
// cannot tell its fixed cost from its work (docs/decisions/014).
#include "schedule/balancer_watch.hpp"

#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace sinew::detail {

KeptRegime DeviceWatch::leave_regime(std::size_t since) {
  // Its runs before the step, and their noise (a load brings its own, and takes it away again).
  KeptRegime left{.fixed_ms = fixed_ms_};
  while (regime_.size() > since) left.runs.push_back(regime_.front()), regime_.pop_front();
  while (changes_.size() + 1 > since && !changes_.empty())
    left.changes.push_back(changes_.front()), changes_.pop_front();
  return left;
}

void DeviceWatch::recall_regime_fitting_runs(const BalancerTuning& tuning) {
  // Of the kept regimes whose band holds each run since the step, the one whose model they are
  // nearest by their median (with no runs since, every kept regime holds them: the first).
  std::optional<std::size_t> recalled;
  double nearest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    std::vector<double> off;
    for (const auto& s : regime_) off.push_back(std::abs(kept_[i].off(s.share, s.ms)));
    const bool fits = std::all_of(off.begin(), off.end(), [&](double v) { return v <= kept_[i].band; });
    if (const double by = off.empty() ? 0.0 : median(off); fits && by < nearest) nearest = by, recalled = i;
  }
  if (!recalled) return;
  KeptRegime back = std::move(kept_[*recalled]);
  kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(*recalled));
  for (auto it = back.runs.rbegin(); it != back.runs.rend() && regime_.size() < tuning.watch.regime_runs; ++it)
    regime_.push_front(*it);
  for (auto it = back.changes.rbegin(); it != back.changes.rend() && changes_.size() < tuning.watch.noise_runs; ++it)
    changes_.push_front(*it);
  fixed_ms_ = back.fixed_ms;
}

void DeviceWatch::restart(std::size_t since, double log_bound, const BalancerTuning& tuning) {
  KeptRegime left = leave_regime(since);
  recall_regime_fitting_runs(tuning);
  if (left.runs.size() < tuning.steps.runs) return;  // too short to recognise
  double fixed = left.fixed_ms;
  left.rate = fit_rate(left.runs, noise_of(left.changes, tuning.watch), fixed, tuning.watch);
  left.band = std::max(log_bound, tuning.steps.deviations * noise_of(left.changes, tuning.watch));
  if (left.rate.known()) kept_.push_front(std::move(left));
  if (kept_.size() > tuning.regimes.kept) kept_.pop_back();
}

std::size_t DeviceWatch::returned(double log_bound, const BalancerTuning& tuning) const {
  // Back in a regime it showed before (a load that left a device at a small share, whose runs
  // there are quiet and fast again, but within the loaded regime's spread of 2-5x, which the
  // rules within a plan do not see through). Its last m runs (Steps::runs <= m <=
  // Steps::noisy_runs), across plans as the regime spans them:
  // - each lie within that regime's band of its model at their shares;
  // - lie, by their median, beyond the current regime's band of its own model (fitted without
  //   them), current_off_ratio times as far as from the kept one's: the current regime does not
  //   explain them;
  // - and the current regime's earlier runs (at least earlier_runs_ratio * Steps::noisy_runs),
  //   held against the same band at their shares, make the first less likely than Steps::chance.
  RunHistory runs;
  for (const auto& s : regime_)
    if (!s.first_of_plan) runs.push_back(s);
  const double sigma = noise(tuning.watch);
  const std::size_t earlier = tuning.regimes.earlier_runs_ratio * tuning.steps.noisy_runs;
  for (const KeptRegime& kept : kept_) {
    auto inside = [&](const WatchedRun& s) { return std::abs(kept.off(s.share, s.ms)) <= kept.band; };
    for (std::size_t m = tuning.steps.runs; m <= tuning.steps.noisy_runs && m + earlier <= runs.size(); ++m) {
      const auto split = runs.end() - static_cast<std::ptrdiff_t>(m);
      if (!std::all_of(split, runs.end(), inside)) break;
      const auto n = std::count_if(runs.begin(), split, inside);
      const double p_inside = (static_cast<double>(n) + 1) / (static_cast<double>(split - runs.begin()) + 2);
      if (!(std::pow(p_inside, static_cast<double>(m)) < tuning.steps.chance)) continue;
      const double off_current = off_model(runs, m, sigma, fixed_ms_, tuning.watch);
      if (off_current < 0) continue;
      std::vector<double> off_kept;
      for (auto it = split; it != runs.end(); ++it) off_kept.push_back(std::abs(kept.off(it->share, it->ms)));
      if (off_current > std::max(log_bound, tuning.regimes.current_off_ratio * median(std::move(off_kept)))) return m;
    }
  }
  return 0;
}

}  // namespace sinew::detail
