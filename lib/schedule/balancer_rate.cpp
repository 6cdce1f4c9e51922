// schedule/balancer_rate.cpp — a device's time model and noise from the runs of its regime
// (schedule/balancer_watch.hpp).
#include "schedule/balancer_watch.hpp"

#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sinew::detail {

namespace {

// |X - Y| of two normal runs has the median 0.954 sigma.
constexpr double kMedianChangePerSigma = 0.954;

// The runs a model counts: every judged run, and a plan's first run where it is no slower than
// the plan's later runs at that share (their centre and `first_run_within` deviations): a
// compilation or an allocation in it would be far out; without later runs it is as good as any
// (right after a step every run counts).
std::vector<WatchedRun> counted_runs(const RunHistory& regime, double sigma, const BalancerTuning::Watch& tuning) {
  std::vector<WatchedRun> runs;
  for (const auto& s : regime) {
    if (!s.first_of_plan) {
      runs.push_back(s);
      continue;
    }
    std::vector<double> later;
    for (const auto& o : regime)
      if (!o.first_of_plan && o.share == s.share) later.push_back(std::log(o.ms));
    if (later.size() >= 2 && std::log(s.ms) <= interquartile_mean(later) + tuning.first_run_within * sigma)
      runs.push_back(s);
  }
  return runs;
}

// Each share the runs ran at, with the centre of their times there and how many ran there.
std::vector<CostPoint> centre_per_share(const std::vector<WatchedRun>& runs) {
  std::vector<std::pair<double, std::vector<double>>> at;  // share -> log times
  for (const auto& s : runs) {
    auto it = std::find_if(at.begin(), at.end(), [&](const auto& p) { return p.first == s.share; });
    if (it == at.end()) at.push_back({s.share, {}}), it = at.end() - 1;
    it->second.push_back(std::log(s.ms));
  }
  std::vector<CostPoint> out;
  for (auto& [share, logs] : at)
    out.push_back(
        {.units = share, .ms = std::exp(interquartile_mean(logs)), .weight = static_cast<double>(logs.size())});
  return out;
}

// The fixed cost: a line fitted (least squares, each share's centre weighted by its runs)
// through the shares the regime ran at, once they span `fit_span` and the device is steady
// enough for the slope to be known within `fit_slope_within` of the proportional rate (the fixed
// cost then within as much of the time); it is kept in `fixed_ms` for the regimes after.
// Otherwise the last one fitted (0: the time is taken as proportional), but at most
// `carried_fixed_at_most` of the regime's fastest share centre: that one was fitted in another
// regime, and a load changes fixed costs too (docs/decisions/005).
double fixed_cost(const std::vector<CostPoint>& shares, double sigma, double& fixed_ms,
                  const BalancerTuning::Watch& tuning) {
  double fastest = std::numeric_limits<double>::infinity(), lo = 1, hi = 0;
  for (const CostPoint& p : shares)
    fastest = std::min(fastest, p.ms), lo = std::min(lo, p.units), hi = std::max(hi, p.units);
  double fixed = std::min(fixed_ms, tuning.carried_fixed_at_most * fastest);
  if (shares.size() < 2) return fixed;
  const LineFit line = least_squares(shares);
  if (hi - lo >= tuning.fit_span && line.sloped()) {
    const double slope_error = tuning.centre_efficiency * sigma * line.mean_ms / std::sqrt(line.units_spread);
    if (slope_error < tuning.fit_slope_within * line.mean_ms / line.mean_units)
      fixed = fixed_ms = std::clamp(line.cost.fixed_ms, 0.0, tuning.fitted_fixed_at_most * fastest);
  }
  return fixed;
}

}  // namespace

double noise_of(const std::deque<double>& changes, const BalancerTuning::Watch& tuning) {
  // A few changes say little (the median of 8 is often half the noise): the estimate is drawn
  // towards the unknown noise as if that had been seen unknown_noise_weight times.
  const double n = static_cast<double>(changes.size());
  const double seen = changes.empty() ? 0.0 : median({changes.begin(), changes.end()}) / kMedianChangePerSigma;
  return std::max(tuning.least_noise,
                  (n * seen + tuning.unknown_noise_weight * tuning.unknown_noise) / (n + tuning.unknown_noise_weight));
}

DeviceRate fit_rate(const RunHistory& regime, double sigma, double& fixed_ms, const BalancerTuning::Watch& tuning) {
  const std::vector<WatchedRun> runs = counted_runs(regime, sigma, tuning);
  DeviceRate r;
  if (runs.empty()) return r;
  r.cost.fixed_ms = fixed_cost(centre_per_share(runs), sigma, fixed_ms, tuning);
  std::vector<double> logs;
  std::vector<WatchedRun> used;
  for (const auto& s : runs)
    if (s.ms > r.cost.fixed_ms) logs.push_back(std::log((s.ms - r.cost.fixed_ms) / s.share)), used.push_back(s);
  if (logs.empty()) return r;
  r.cost.ms_per_unit = std::exp(interquartile_mean(logs));
  r.runs = logs.size();
  r.se = tuning.centre_efficiency * sigma / std::sqrt(static_cast<double>(r.runs));
  // The latest spread_runs runs (the noise as it is now), each as a factor of the model's whole
  // time at its share, sorted for expected_ms(). Of the whole time, not of its part beyond the
  // fixed cost: the noise is the run's (the fixed cost's too), and at a small share, where the
  // fixed cost is most of the time, a factor of the rest would blow +-30% up to 3x and hedge a
  // device out of the work it should take back.
  for (std::size_t i = used.size() - std::min(tuning.spread_runs, used.size()); i < used.size(); ++i)
    r.spread.push_back(used[i].ms / r.at(used[i].share));
  std::sort(r.spread.begin(), r.spread.end());
  return r;
}

double off_model(const RunHistory& runs, std::size_t last, double sigma, double fixed_ms,
                 const BalancerTuning::Watch& tuning) {
  const auto split = runs.end() - static_cast<std::ptrdiff_t>(std::min(last, runs.size()));
  const DeviceRate before = fit_rate({runs.begin(), split}, sigma, fixed_ms, tuning);
  if (!before.known()) return -1;
  std::vector<double> off;
  for (auto it = split; it != runs.end(); ++it) off.push_back(std::abs(std::log(it->ms / before.at(it->share))));
  return median(std::move(off));
}

}  // namespace sinew::detail
