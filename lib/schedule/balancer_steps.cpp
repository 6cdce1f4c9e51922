// schedule/balancer_steps.cpp — the rules that see a device's rate change for good
// (schedule/balancer_steps.hpp).
#include "schedule/balancer_steps.hpp"

#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sinew::detail {

namespace {

// A standard deviation from the median absolute deviation of normal values.
constexpr double kSigmaPerMedianDeviation = 1.4826;

// A device's runs of the plan (log times) split into its earlier runs and its last `last`, with
// the earlier runs' median (the reference) and the band a run must lie beyond.
struct PlanSplit {
  std::vector<double> before, last;
  double reference = 0, band = 0;
  bool empty() const { return last.empty(); }
  bool beyond(bool up, double v, double by) const { return up ? v > reference + by : v < reference - by; }
  // The chance that one run of the plan lies beyond the band on that side, from its earlier runs
  // themselves (Laplace's rule: never 0): a device with a heavy tail of its own gets there often
  // without a step.
  double chance_beyond(bool up) const {
    const auto n = std::count_if(before.begin(), before.end(), [&](double v) { return beyond(up, v, band); });
    return (static_cast<double>(n) + 1) / (static_cast<double>(before.size()) + 2);
  }
};

// One device's view of the plan's runs, and the rules over it.
class DeviceSteps {
 public:
  DeviceSteps(std::vector<double> logs, double noise, double log_bound, const BalancerTuning::Steps& tuning)
      : logs_(std::move(logs)), noise_(noise), log_bound_(log_bound), t_(tuning) {}

  // The runs since a step within the plan, or nothing.
  std::optional<std::size_t> within_plan() const {
    const PlanSplit latest = split(t_.runs);
    if (latest.empty()) return std::nullopt;
    if (auto since = in_a_row(latest)) return since;
    if (latest.before.size() >= t_.quiet_runs + t_.runs && quieted(split(t_.quiet_runs))) return t_.quiet_runs;
    return noisy_start();
  }

 private:
  PlanSplit split(std::size_t last) const {
    PlanSplit sp;
    if (logs_.size() < last + t_.runs) return sp;
    sp.before.assign(logs_.begin(), logs_.end() - static_cast<std::ptrdiff_t>(last));
    sp.last.assign(logs_.end() - static_cast<std::ptrdiff_t>(last), logs_.end());
    // Beyond `deviations` of the device's noise from the plan's earlier median. The noise as the
    // larger of two estimates (run-to-run changes, the spread of the plan's earlier runs): each
    // alone is now and then half the truth, which would let noise through.
    sp.reference = median(sp.before);
    std::vector<double> spread;
    for (double v : sp.before) spread.push_back(std::abs(v - sp.reference));
    const double sigma = std::max(noise_, kSigmaPerMedianDeviation * median(std::move(spread)));
    // Wider while the plan's earlier runs are few (as Student's t is): their median and spread
    // are themselves uncertain then.
    sp.band = std::max(log_bound_, t_.deviations * sigma * widening(sp.before.size()));
    return sp;
  }

  double widening(std::size_t runs) const { return 1 + t_.few_runs_widening / static_cast<double>(runs); }

  // Every one of the last `runs` runs beyond the band, on the same side. The step may have come a
  // run or two before them (a first run under the load that noise kept inside the band): runs
  // just before them that lie beyond onset_band_fraction of the band, and nearer the new runs
  // than the old, belong to it. Not that fraction of the band alone: a load leaving takes the time
  // down 3-5x, and a loaded run that noise put half a band low would join the quiet runs
  // (docs/decisions/004).
  std::optional<std::size_t> in_a_row(const PlanSplit& sp) const {
    const bool up = sp.last.front() > sp.reference;
    if (!std::all_of(sp.last.begin(), sp.last.end(), [&](double v) { return sp.beyond(up, v, sp.band); }))
      return std::nullopt;
    const double onset = std::max(sp.band, std::abs(median(sp.last) - sp.reference)) * t_.onset_band_fraction;
    std::size_t since = t_.runs;
    while (since < sp.before.size() && sp.beyond(up, sp.before[sp.before.size() - 1 - (since - t_.runs)], onset))
      ++since;
    return since;
  }

  // The end of a noisy regime. Held against the earlier runs' own spread, the new runs are inside
  // it; held against theirs, the earlier runs' median is far out. A step when the new runs'
  // median is beyond `deviations` of their own spread (at least quiet_noise: a few runs can agree
  // by chance) from the earlier median, widened for few runs, and every new run lies beyond the
  // earlier runs' edge quantile on that side (the quiet runs are not the noisy regime's usual
  // fast ones). Seen over quiet_runs runs: fewer would let the low end of +-50% noise pass.
  bool quieted(const PlanSplit& q) const {
    const double now = median(q.last);
    std::vector<double> spread;
    for (double v : q.last) spread.push_back(std::abs(v - now));
    const double sigma = std::max(t_.quiet_noise, kSigmaPerMedianDeviation * median(std::move(spread)));
    const double band = std::max(log_bound_, t_.deviations * sigma * widening(q.last.size()));
    if (std::abs(q.reference - now) <= band) return false;
    const bool up = now > q.reference;
    std::vector<double> sorted = q.before;
    std::sort(sorted.begin(), sorted.end());
    const auto tail = static_cast<std::size_t>(t_.quiet_edge_quantile * static_cast<double>(sorted.size()));
    const double edge = sorted[up ? sorted.size() - 1 - tail : tail];
    return std::all_of(q.last.begin(), q.last.end(), [&](double v) { return up ? v > edge : v < edge; });
  }

  // The start of a noisy regime: of the last m runs (runs < m <= noisy_runs) all but a third
  // beyond the band on one side, the first and the latest among them, where that is no more
  // likely than `chance` without a step (C(m, inside) * p^(m - inside), p the chance that one
  // run lies beyond). The step's own runs, once among the earlier ones, also raise their median
  // and spread (docs/decisions/003).
  std::optional<std::size_t> noisy_start() const {
    for (std::size_t m = t_.runs + 1; m <= t_.noisy_runs; ++m) {
      const PlanSplit w = split(m);
      if (w.empty()) break;
      const bool up = w.last.back() > w.reference;
      const auto inside = static_cast<std::size_t>(
          std::count_if(w.last.begin(), w.last.end(), [&](double v) { return !w.beyond(up, v, w.band); }));
      double ways = 1;  // C(m, inside)
      for (std::size_t k = 0; k < inside; ++k) ways = ways * static_cast<double>(m - k) / static_cast<double>(k + 1);
      if (inside <= m / 3 && w.beyond(up, w.last.front(), w.band) && w.beyond(up, w.last.back(), w.band) &&
          ways * std::pow(w.chance_beyond(up), static_cast<double>(m - inside)) < t_.chance)
        return m;
    }
    return std::nullopt;
  }

  std::vector<double> logs_;
  double noise_, log_bound_;
  const BalancerTuning::Steps& t_;
};

// Device d's log times in the plan's latest runs (at most the regime's runs), where it had one.
std::vector<double> plan_logs(const PlanRuns& plan, std::size_t d, const BalancerTuning& tuning) {
  std::vector<double> logs;
  const std::size_t n = plan.size();
  for (std::size_t i = n - std::min<std::size_t>(n, tuning.watch.regime_runs); i < n; ++i)
    if (plan[i][d] > 0) logs.push_back(std::log(plan[i][d]));
  return logs;
}

// Device d slower than the plan's recalled runs: the median of its last recalled_runs runs beyond
// `deviations` standard errors of the difference of the two medians (the device's noise for both:
// the recalled runs' own cannot be told from a handful), each of them beyond the balance bound.
// The number of its latest runs that show it (its runs before these beyond the band too), or 0.
std::size_t above_recalled(const PlanRuns& plan, std::size_t d, double noise, double log_bound,
                           const BalancerTuning& tuning) {
  const std::size_t runs = tuning.steps.recalled_runs;
  if (plan.recalled().empty() || plan.size() < runs) return 0;
  const double reference = median(plan.recalled());
  std::vector<double> last;
  for (std::size_t i = plan.size() - runs; i < plan.size(); ++i) {
    if (plan[i][d] <= 0) return 0;
    last.push_back(std::log(plan[i][d]));
  }
  const double se = tuning.watch.centre_efficiency * noise *
                    std::sqrt(1.0 / static_cast<double>(runs) + 1.0 / static_cast<double>(plan.recalled().size()));
  const double band = std::max(log_bound, tuning.steps.deviations * se);
  if (median(last) <= reference + band ||
      std::any_of(last.begin(), last.end(), [&](double v) { return v <= reference + log_bound; }))
    return 0;
  std::size_t since = runs;
  while (since < plan.size() && plan[plan.size() - 1 - since][d] > 0 &&
         std::log(plan[plan.size() - 1 - since][d]) > reference + band)
    ++since;
  return since;
}

}  // namespace

std::vector<DeviceStep> detect_steps(const std::vector<double>& shares, const PlanRuns& plan,
                                     const std::vector<DeviceWatch>& watches, double log_bound,
                                     const BalancerTuning& tuning) {
  std::vector<DeviceStep> out;
  if (plan.size() >= 2 * tuning.steps.runs)
    for (std::size_t d = 0; d < shares.size(); ++d) {
      if (shares[d] <= 0) continue;
      const DeviceSteps steps(plan_logs(plan, d, tuning), watches[d].noise(tuning.watch), log_bound, tuning.steps);
      if (const auto since = steps.within_plan()) out.push_back({d, *since});
    }
  for (std::size_t d = 0; d < shares.size(); ++d) {
    if (shares[d] <= 0 || std::any_of(out.begin(), out.end(), [&](const DeviceStep& s) { return s.device == d; }))
      continue;
    if (const std::size_t m = watches[d].returned(log_bound, tuning))
      out.push_back({d, m});
    else if (const std::size_t k = above_recalled(plan, d, watches[d].noise(tuning.watch), log_bound, tuning))
      out.push_back({d, k});
  }
  return out;
}

}  // namespace sinew::detail
