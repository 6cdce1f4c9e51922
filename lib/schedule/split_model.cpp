// schedule/split_model.cpp — the split that the balancer's device models predict best
// (fastest_split, hedged_split) and the makespans they predict (predicted_ms, expected_ms); see
// balancer.hpp. Pure functions of the models.
#include "schedule/balancer.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace sinew::detail {

std::vector<double> on_grid(std::vector<double> shares) {
  double sum = 0;
  for (auto& v : shares) {
    v = std::round(v * 100) / 100;
    if (v < Balancer::kMinShare) v = 0;
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

std::vector<double> fastest_split(const std::vector<DeviceRate>& rates) {
  std::vector<std::size_t> known;
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (rates[d].known()) known.push_back(d);
  if (known.empty()) return {};
  // Every set of devices finishing together at T: sum_d (T - b_d)/a_d = 1. A set whose T leaves
  // a member no work is no candidate (the set without it is). At most 2^10 sets: beyond ten
  // devices, all of them and each alone.
  std::vector<std::vector<std::size_t>> sets;
  if (known.size() <= 10) {
    for (std::size_t mask = 1; mask < (std::size_t{1} << known.size()); ++mask) {
      sets.emplace_back();
      for (std::size_t i = 0; i < known.size(); ++i)
        if (mask >> i & 1) sets.back().push_back(known[i]);
    }
  } else {
    sets.push_back(known);
    for (auto d : known) sets.push_back({d});
  }
  std::vector<double> best;
  double best_t = std::numeric_limits<double>::infinity();
  for (const auto& set : sets) {
    double inv_a = 0, b_over_a = 0;
    for (auto d : set) inv_a += 1 / rates[d].a, b_over_a += rates[d].b / rates[d].a;
    const double t = (1 + b_over_a) / inv_a;
    std::vector<double> shares(rates.size(), 0.0);
    bool ok = true;
    for (auto d : set) ok = ok && (shares[d] = (t - rates[d].b) / rates[d].a) > 0;
    if (!ok) continue;
    // The grid and the sliver rule change the split a little: compare the splits as they will run.
    shares = on_grid(shares);
    const double on = predicted_ms(rates, shares);
    // Fewer devices win ties (within 0.1%): each one more is another run's noise and fixed costs.
    if (on < best_t * (1 - 1e-3) ||
        (on <= best_t * (1 + 1e-3) && set.size() < static_cast<std::size_t>(std::count_if(
                                                       best.begin(), best.end(), [](double v) { return v > 0; })))) {
      best_t = std::min(best_t, on);
      best = std::move(shares);
    }
  }
  return best;
}

double expected_ms(const std::vector<DeviceRate>& rates, const std::vector<double>& shares) {
  std::vector<std::size_t> known, active;
  for (std::size_t d = 0; d < rates.size(); ++d) {
    if (rates[d].known()) known.push_back(d);
    if (d < shares.size() && shares[d] > 0) {
      if (!rates[d].known()) return std::numeric_limits<double>::infinity();
      active.push_back(d);
    }
  }
  if (known.size() > 4) return predicted_ms(rates, shares);
  // The rates' errors: the estimate and +-sqrt(3) standard errors (weights 2/3 and 1/6 each),
  // every combination over the known devices. Within each, the mean over every combination of
  // the active devices' spreads of the slowest one's time: from the devices' empirical
  // distributions, E[max] = sum over the sorted times t of t * (the change in prod_d F_d(t)).
  double sum = 0;
  std::size_t combos = 1;
  for (std::size_t i = 0; i < known.size(); ++i) combos *= 3;
  std::vector<double> a(rates.size(), 0.0);
  std::vector<std::pair<double, std::size_t>> times, merged;  // (time, index into active)
  std::vector<std::size_t> below(active.size());
  for (std::size_t c = 0; c < combos; ++c) {
    double w = 1;
    for (std::size_t i = 0, k = c; i < known.size(); ++i, k /= 3) {
      const int z = static_cast<int>(k % 3) - 1;
      a[known[i]] = rates[known[i]].a * std::exp(z * std::sqrt(3.0) * rates[known[i]].se);
      w *= z ? 1.0 / 6 : 2.0 / 3;
    }
    times.clear();
    for (std::size_t i = 0; i < active.size(); ++i) {
      const DeviceRate& r = rates[active[i]];
      const double work = a[active[i]] * shares[active[i]];
      const auto from = static_cast<std::ptrdiff_t>(times.size());
      if (r.spread.empty()) times.push_back({work + r.b, i});
      for (double f : r.spread) times.push_back({(work + r.b) * f, i});
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
        f *= static_cast<double>(below[j]) / static_cast<double>(std::max<std::size_t>(1, rates[active[j]].spread.size()));
      }
      e += t * (f - previous);
      previous = f;
    }
    sum += w * e;
  }
  return sum;
}

std::vector<double> hedged_split(const std::vector<DeviceRate>& rates, double* expected) {
  std::vector<double> best = fastest_split(rates);
  std::vector<std::size_t> known;
  for (std::size_t d = 0; d < rates.size(); ++d)
    if (rates[d].known()) known.push_back(d);
  if (best.empty() || known.size() < 2 || known.size() > 4) {
    if (expected) *expected = best.empty() ? 0.0 : expected_ms(rates, best);
    return best;
  }
  // Each split's expected makespan once: the climb meets the split it came from again at every
  // step (the balancer runs this after every execution; on the GPU machine its host work showed
  // in the run's time).
  std::vector<std::pair<std::vector<double>, double>> seen;
  auto expected_of = [&](const std::vector<double>& shares) {
    for (const auto& [c, e] : seen)
      if (c == shares) return e;
    seen.emplace_back(shares, expected_ms(rates, shares));
    return seen.back().second;
  };
  // From the point optimum, work moved in steps of 1% between any two devices, while that helps.
  double best_e = expected_of(best);
  for (bool better = true; better;) {
    better = false;
    for (auto from : known)
      for (auto to : known) {
        if (from == to || best[from] <= 0) continue;
        std::vector<double> c = best;
        const double step = std::min(0.01, c[from]);
        c[from] -= step, c[to] += step;
        if (c[from] < Balancer::kMinShare) c[to] += c[from], c[from] = 0;
        const double e = expected_of(c);
        if (e < best_e * (1 - 1e-9)) best = std::move(c), best_e = e, better = true;
      }
  }
  if (expected) *expected = best_e;
  return best;
}

}  // namespace sinew::detail
