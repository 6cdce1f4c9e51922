// schedule/derive.cpp — the cost model's derivation: each device's time alone fitted over the
// input size per level, the splits' measured cost against those fits, the fastest predicted plan
// at an unseen size (schedule/derive.hpp).
#include "schedule/derive.hpp"

#include "decompose/schedule_policy.hpp"
#include "schedule/model/equal_finish.hpp"
#include "schedule/model/statistics.hpp"
#include "schedule/train.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace sinew::detail {

namespace {

bool is_size(const std::string& name) { return name.size() >= 5 && name.ends_with(".size"); }

// Whether `f` has every feature of `query` that is not a size, with the same value.
bool same_kind(const KbFeatures& f, const KbFeatures& query) {
  for (const auto& [name, value] : query) {
    if (is_size(name)) continue;
    auto it = std::find_if(f.begin(), f.end(), [&](const auto& x) { return x.first == name; });
    if (it == f.end() || std::fabs(it->second - value) > 1e-9 * std::max(1.0, std::fabs(value))) return false;
  }
  return true;
}

// The shares that make `fits` finish together on `size` elements (schedule/model/equal_finish.hpp),
// the device whose fixed cost alone reaches that time left out (the largest first) until two
// remain; the time, or nothing (fewer than two devices, or free work: no finite split).
std::optional<std::pair<std::vector<double>, double>> equal_finish(const std::vector<const CostFit*>& fits,
                                                                   std::size_t devices, double size) {
  std::vector<const CostFit*> in = fits;
  while (in.size() >= 2) {
    std::vector<LinearCost> costs;
    for (const CostFit* f : in) costs.push_back(f->cost);
    const auto together = finish_together(costs, size);
    if (!together) return std::nullopt;
    auto slow = std::max_element(
        in.begin(), in.end(), [](const CostFit* x, const CostFit* y) { return x->cost.fixed_ms < y->cost.fixed_ms; });
    if ((*slow)->cost.fixed_ms >= together->finish_ms) {
      in.erase(slow);
      continue;
    }
    std::vector<double> shares(devices, 0.0);
    for (std::size_t i = 0; i < in.size(); ++i) shares[in[i]->device] = together->shares[i];
    return std::pair{shares, together->finish_ms};
  }
  return std::nullopt;
}

// The fastest split the fits predict at `size`: at each combination of a fission (the CPUs') and
// an overlap level (the discrete devices'), the devices with a fit there finishing together.
std::optional<std::pair<Config, double>> predicted_split(const std::vector<DeviceInfo>& devices,
                                                         const std::vector<CostFit>& fits, double size) {
  std::set<std::string> fissions{Config{}.fission};
  std::set<unsigned> overlaps{1};
  for (const auto& f : fits) {
    if (devices[f.device].discrete) overlaps.insert(f.level.overlap);
    else fissions.insert(f.level.fission);
  }
  std::optional<std::pair<Config, double>> best;
  for (const auto& fission : fissions)
    for (unsigned overlap : overlaps) {
      std::vector<const CostFit*> at;
      for (const auto& f : fits)
        if (devices[f.device].discrete ? f.level.overlap == overlap : f.level.fission == fission) at.push_back(&f);
      const auto split = equal_finish(at, devices.size(), size);
      if (!split || (best && split->second >= best->second)) continue;
      Config c;
      c.shares = split->first;
      c.fission = fission;
      c.overlap = overlap;
      best = {without_idle_levels(c, devices), split->second};
    }
  return best;
}

// How much slower the fastest split measured at another size ran than the fastest split the fits
// predict there: at the measured size nearest `size` (by ratio), at least 1; and the split plans
// measured there. The fits see each device alone, and a device alone can have what it does not
// in a split (a discrete device's staged copies take helper threads that a CPU device's
// work-groups hold in a split, and both share host memory bandwidth; docs/decisions/016).
std::pair<double, std::size_t> split_factor(const std::vector<DeviceInfo>& devices, const std::vector<CostFit>& fits,
                                            const std::vector<KbRun>& runs, const KbFeatures& query, double size) {
  std::map<double, std::map<std::string, std::vector<double>>> splits;  // size -> plan -> times
  for (const auto& r : runs) {
    const Config& c = r.config;
    const double x = input_size(r.features);
    if (c.shares.size() != devices.size() || !places_shares(c) || !c.items.empty() || working_devices(c) < 2 ||
        !(r.time_ms > 0) || !(x > 0) || !same_kind(r.features, query))
      continue;
    splits[x][c.str()].push_back(r.time_ms);
  }
  if (splits.empty()) return {1.0, 0};
  const auto& [x, plans] = *std::min_element(splits.begin(), splits.end(), [&](const auto& a, const auto& b) {
    return std::fabs(std::log(a.first / size)) < std::fabs(std::log(b.first / size));
  });
  // (Where the fits predict no split at that size, e.g. one device's fixed cost exceeds the
  // other's whole time, they say nothing of what its splits lost.)
  const auto predicted = predicted_split(devices, fits, x);
  if (!predicted || !(predicted->second > 0)) return {1.0, 0};
  double fastest = 1e300;
  for (const auto& [plan, times] : plans) fastest = std::min(fastest, median(times));
  return {std::max(1.0, fastest / predicted->second), plans.size()};
}

}  // namespace

double input_size(const KbFeatures& features) {
  double n = 0;
  for (const auto& [name, value] : features)
    if (is_size(name)) n += value;
  return n;
}

std::string CostPlan::str() const {
  std::ostringstream s;
  s << config.str() << ", predicted " << predicted_ms << " ms; fits (ms + ms/element):";
  for (const auto& f : fits) s << " " << f.level.str() << " " << f.cost.fixed_ms << " + " << f.cost.ms_per_unit;
  s << "; splits " << split_factor << "x the fits (" << split_plans << " measured)";
  return s.str();
}

std::vector<Config> CostPlan::alone_levels(std::size_t devices) const {
  std::vector<Config> out;
  for (std::size_t d = 0; d < devices; ++d) {
    const CostFit* best = nullptr;
    for (const auto& f : fits)
      if (f.device == d && (!best || f.at(size) < best->at(size))) best = &f;
    if (best) out.push_back(best->level);
  }
  return out;
}

std::optional<CostPlan> derive_from_costs(const std::vector<DeviceInfo>& devices, const std::vector<KbRun>& runs,
                                          const KbFeatures& query, const DerivationTuning& tuning) {
  const std::size_t n = devices.size();
  const double size = input_size(query);
  if (n == 0 || !(size > 0)) return std::nullopt;
  // Each device alone at each level: its times per size (several runs: their median).
  std::map<std::pair<std::string, double>, std::vector<double>> times;  // (level, size) -> ms
  std::map<std::string, std::pair<Config, std::size_t>> levels;  // name -> a device alone, the device
  for (const auto& r : runs) {
    if (r.config.shares.size() != n || !(r.time_ms > 0) || !same_kind(r.features, query)) continue;
    const double x = input_size(r.features);
    const auto alone = alone_plan(r.config, devices);
    if (!alone || !(x > 0)) continue;
    const std::string name = alone->first.str();
    levels.emplace(name, *alone);
    times[{name, x}].push_back(r.time_ms);
  }
  std::vector<CostFit> fits;
  for (const auto& [name, alone] : levels) {
    std::vector<CostPoint> pts;
    for (const auto& [key, t] : times)
      if (key.first == name) pts.push_back({.units = key.second, .ms = median(t)});
    if (pts.size() < 2) continue;
    CostFit f;
    f.level = alone.first;
    f.device = alone.second;
    f.cost = fit_relative(pts);
    f.sizes = pts.size();
    fits.push_back(f);
  }
  for (std::size_t d = 0; d < n; ++d)
    if (std::none_of(fits.begin(), fits.end(), [&](const CostFit& f) { return f.device == d; })) return std::nullopt;

  CostPlan best;
  best.predicted_ms = 1e300;
  best.fits = fits;
  best.size = size;
  std::tie(best.split_factor, best.split_plans) = split_factor(devices, fits, runs, query, size);
  for (const auto& f : fits)  // each device alone at each of its levels
    if (f.at(size) < best.predicted_ms) best.config = f.level, best.predicted_ms = f.at(size);
  const double alone_ms = best.predicted_ms;
  // A split: faster than the fastest device alone by the margin, or by what the measured splits
  // lost against the fits where that is more.
  if (const auto split = predicted_split(devices, fits, size))
    if (split->second * std::max(1 + tuning.split_margin, best.split_factor) < alone_ms)
      best.config = split->first, best.predicted_ms = split->second * best.split_factor;
  return best;
}

}  // namespace sinew::detail
