// schedule/split_model.cpp — the split that the devices' rates predict best (fastest_split,
// hedged_split) and the makespans they predict (predicted_ms, expected_ms); see
// schedule/split_model.hpp. Pure functions of the rates.
#include "schedule/split_model.hpp"

#include "schedule/model/equal_finish.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace sinew::detail {

namespace {

std::vector<std::size_t> known_devices(const std::vector<DeviceRate>& rates) {
  std::vector<std::size_t> known;
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (rates[d].known()) known.push_back(d);
  return known;
}

// The sets of devices a split is solved for: every non-empty subset of `known` up to
// every_set_up_to devices (2^10 sets at the default), else all of them and each alone.
std::vector<std::vector<std::size_t>> candidate_sets(const std::vector<std::size_t>& known, const SplitTuning& tuning) {
  std::vector<std::vector<std::size_t>> sets;
  if (known.size() <= tuning.every_set_up_to) {
    for (std::size_t mask = 1; mask < (std::size_t{1} << known.size()); ++mask) {
      sets.emplace_back();
      for (std::size_t i = 0; i < known.size(); ++i)
        if (mask >> i & 1) sets.back().push_back(known[i]);
    }
  } else {
    sets.push_back(known);
    for (auto d : known) sets.push_back({d});
  }
  return sets;
}

std::size_t working(const std::vector<double>& shares) {
  return static_cast<std::size_t>(std::count_if(shares.begin(), shares.end(), [](double v) { return v > 0; }));
}

}  // namespace

std::vector<double> on_grid(std::vector<double> shares, const SplitTuning& tuning) {
  double sum = 0;
  for (auto& v : shares) {
    v = std::round(v * tuning.grid_steps) / tuning.grid_steps;
    if (v < tuning.least_share) v = 0;
    sum += v;
  }
  if (sum > 0)
    for (auto& v : shares) v /= sum;
  return shares;
}

double predicted_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares) {
  double t = 0;
  for (std::size_t d = 0; d < shares.size(); ++d) {
    if (shares[d] <= 0) continue;
    if (d >= rates.size() || !rates[d].known()) return std::numeric_limits<double>::infinity();
    t = std::max(t, rates[d].at(shares[d]));
  }
  return t;
}

std::vector<double> fastest_split(const std::vector<DeviceRate>& rates, const SplitTuning& tuning) {
  const std::vector<std::size_t> known = known_devices(rates);
  if (known.empty()) return {};
  std::vector<double> best;
  double best_ms = std::numeric_limits<double>::infinity();
  for (const auto& set : candidate_sets(known, tuning)) {
    // The set finishing together; a set that leaves a member no work is no candidate (the set
    // without it is).
    std::vector<LinearCost> costs;
    for (auto d : set) costs.push_back(rates[d].cost);
    const auto together = finish_together(costs);
    std::vector<double> shares(rates.size(), 0.0);
    bool every_member_works = true;
    for (std::size_t i = 0; i < set.size() && every_member_works; ++i)
      every_member_works = (shares[set[i]] = together->shares[i]) > 0;
    if (!every_member_works) continue;
    // The grid and the sliver rule change the split a little: compare the splits as they will run.
    shares = on_grid(shares, tuning);
    const double ms = predicted_ms(rates, shares);
    // Fewer devices win ties: each one more is another run's noise and fixed costs.
    if (ms < best_ms * (1 - tuning.tie) || (ms <= best_ms * (1 + tuning.tie) && set.size() < working(best))) {
      best_ms = std::min(best_ms, ms);
      best = std::move(shares);
    }
  }
  return best;
}

double expected_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares, const SplitTuning& tuning) {
  std::vector<std::size_t> known, active;
  for (std::size_t d = 0; d < rates.size(); ++d) {
    if (rates[d].known()) known.push_back(d);
    if (d < shares.size() && shares[d] > 0) {
      if (!rates[d].known()) return std::numeric_limits<double>::infinity();
      active.push_back(d);
    }
  }
  if (known.size() > tuning.hedged_up_to) return predicted_ms(rates, shares);
  // The rates' errors: the estimate and +-sqrt(3) standard errors (weights 2/3 and 1/6 each),
  // every combination over the known devices. Within each, the mean over every combination of
  // the active devices' spreads of the slowest one's time: from the devices' empirical
  // distributions, E[max] = sum over the sorted times t of t * (the change in prod_d F_d(t)).
  double sum = 0;
  std::size_t combos = 1;
  for (std::size_t i = 0; i < known.size(); ++i) combos *= 3;
  std::vector<double> per_unit(rates.size(), 0.0);
  std::vector<std::pair<double, std::size_t>> times, merged;  // (time, index into active)
  std::vector<std::size_t> below(active.size());
  for (std::size_t c = 0; c < combos; ++c) {
    double w = 1;
    for (std::size_t i = 0, k = c; i < known.size(); ++i, k /= 3) {
      const int z = static_cast<int>(k % 3) - 1;
      per_unit[known[i]] = rates[known[i]].cost.ms_per_unit * std::exp(z * std::sqrt(3.0) * rates[known[i]].se);
      w *= z ? 1.0 / 6 : 2.0 / 3;
    }
    times.clear();
    for (std::size_t i = 0; i < active.size(); ++i) {
      const DeviceRate& r = rates[active[i]];
      const double work = per_unit[active[i]] * shares[active[i]];
      const auto from = static_cast<std::ptrdiff_t>(times.size());
      if (r.spread.empty()) times.push_back({work + r.cost.fixed_ms, i});
      for (double f : r.spread) times.push_back({(work + r.cost.fixed_ms) * f, i});
      // Each device's times come sorted (its spread is): merged, not sorted (into a buffer kept
      // across the combinations: std::inplace_merge allocates one each time).
      merged.clear();
      std::merge(times.begin(), times.begin() + from, times.begin() + from, times.end(), std::back_inserter(merged));
      times.swap(merged);
    }
    std::fill(below.begin(), below.end(), 0);
    std::size_t short_of = active.size();  // devices with no time at or below t yet
    double previous = 0, e = 0;
    for (const auto& [t, i] : times) {
      if (below[i]++ == 0) --short_of;
      if (short_of) continue;
      double f = 1;
      for (std::size_t j = 0; j < active.size(); ++j) {
        f *= static_cast<double>(below[j]) /
             static_cast<double>(std::max<std::size_t>(1, rates[active[j]].spread.size()));
      }
      e += t * (f - previous);
      previous = f;
    }
    sum += w * e;
  }
  return sum;
}

std::vector<double> hedged_split(const std::vector<DeviceRate>& rates, double* expected, const SplitTuning& tuning) {
  std::vector<double> best = fastest_split(rates, tuning);
  const std::vector<std::size_t> known = known_devices(rates);
  if (best.empty() || known.size() < 2 || known.size() > tuning.hedged_up_to) {
    if (expected) *expected = best.empty() ? 0.0 : expected_ms(rates, best, tuning);
    return best;
  }
  // Each split's expected makespan once: the climb meets the split it came from again at every
  // step, and the balancer runs this after every execution (docs/decisions/012).
  std::vector<std::pair<std::vector<double>, double>> seen;
  auto expected_of = [&](const std::vector<double>& shares) {
    for (const auto& [c, e] : seen)
      if (c == shares) return e;
    seen.emplace_back(shares, expected_ms(rates, shares, tuning));
    return seen.back().second;
  };
  // From the point optimum, work moved a grid step at a time between any two devices, while that
  // helps.
  const double step_share = 1 / tuning.grid_steps;
  double best_e = expected_of(best);
  for (bool better = true; better;) {
    better = false;
    for (auto from : known)
      for (auto to : known) {
        if (from == to || best[from] <= 0) continue;
        std::vector<double> c = best;
        const double step = std::min(step_share, c[from]);
        c[from] -= step, c[to] += step;
        if (c[from] < tuning.least_share) c[to] += c[from], c[from] = 0;
        const double e = expected_of(c);
        if (e < best_e * (1 - 1e-9)) best = std::move(c), best_e = e, better = true;
      }
  }
  if (expected) *expected = best_e;
  return best;
}

}  // namespace sinew::detail
