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

// Per level of a device (named by the device alone there): its times per amount of work (several
// runs: their median), and which plan and device each name stands for.
struct LevelTimes {
  std::map<std::pair<std::string, double>, std::vector<double>> times;  // (level, elements) -> ms
  std::map<std::string, std::pair<Config, std::size_t>> levels;         // name -> the device alone, the device
  std::map<std::string, std::set<double>> inputs;                       // name -> the input sizes behind it
};

bool usable(const KbRun& r, std::size_t devices, const KbFeatures& query) {
  return r.config.shares.size() == devices && r.time_ms > 0 && input_size(r.features) > 0 && same_kind(r.features, query);
}

// Each device alone at each level: the whole input's size and the run's time.
LevelTimes times_alone(const std::vector<DeviceInfo>& devices, const std::vector<KbRun>& runs, const KbFeatures& query) {
  LevelTimes out;
  for (const auto& r : runs) {
    if (!usable(r, devices.size(), query)) continue;
    const auto alone = alone_plan(r.config, devices);
    if (!alone) continue;
    const std::string name = alone->first.str();
    out.levels.emplace(name, *alone);
    out.times[{name, input_size(r.features)}].push_back(r.time_ms);
  }
  return out;
}

// Each device in the static splits it worked in (runs that kept their device times): its share of
// the input and its busy time, at the level the split gave it.
LevelTimes times_in_splits(const std::vector<DeviceInfo>& devices, const std::vector<KbRun>& runs,
                           const KbFeatures& query) {
  LevelTimes out;
  for (const auto& r : runs) {
    if (!usable(r, devices.size(), query) || r.device_ms.size() != devices.size() || working_devices(r.config) < 2)
      continue;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      if (!(r.config.shares[d] > 0) || !(r.device_ms[d] > 0)) continue;
      Config one = r.config;
      one.shares.assign(devices.size(), 0.0);
      one.shares[d] = 1;
      const auto alone = alone_plan(one, devices);
      if (!alone) continue;
      const std::string name = alone->first.str();
      out.levels.emplace(name, *alone);
      out.times[{name, r.config.shares[d] * input_size(r.features)}].push_back(r.device_ms[d]);
      out.inputs[name].insert(input_size(r.features));
    }
  }
  return out;
}

// The line through one level's points, where it has two amounts of work or more (from two input
// sizes or more where its points are shares of splits: one input's splits say how a device's time
// grows with its share there, not with the input).
std::optional<CostFit> fit_level(const LevelTimes& t, const std::string& name,
                                 const std::pair<Config, std::size_t>& level) {
  if (const auto in = t.inputs.find(name); in != t.inputs.end() && in->second.size() < 2) return std::nullopt;
  std::vector<CostPoint> pts;
  for (const auto& [key, ms] : t.times)
    if (key.first == name) pts.push_back({.units = key.second, .ms = median(ms)});
  if (pts.size() < 2) return std::nullopt;
  CostFit f;
  f.level = level.first;
  f.device = level.second;
  f.cost = fit_relative(pts);
  f.sizes = pts.size();
  return f;
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
  const LevelTimes alone = times_alone(devices, runs, query), in_splits = times_in_splits(devices, runs, query);
  std::vector<CostFit> fits;
  for (const auto& [name, level] : alone.levels) {
    if (auto f = fit_level(alone, name, level)) fits.push_back(*f);
  }
  // A device with no fit of its own alone, as training leaves a device it probed and found slow:
  // its busy times in the splits it worked in, at each of its levels.
  for (const auto& [name, level] : in_splits.levels) {
    if (std::any_of(fits.begin(), fits.end(), [&](const CostFit& f) { return f.device == level.second; })) continue;
    if (auto f = fit_level(in_splits, name, level)) fits.push_back(*f);
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
