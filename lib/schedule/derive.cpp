// schedule/derive.cpp — the cost model's derivation: each device's time alone fitted over the
// input size per level, the splits' measured cost against those fits, the fastest predicted plan
// at an unseen size (schedule/derive.hpp).
#include "schedule/derive.hpp"

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

// t = a + b * x minimising the relative residuals ((t - a - b x) / t)^2. Times that do not grow
// with the size are a fixed cost (b = 0); a negative fixed cost is noise: the line through 0.
std::pair<double, double> fit_line(const std::vector<std::pair<double, double>>& pts) {
  double s0 = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
  for (const auto& [x, t] : pts) {
    const double w = 1 / (t * t);
    s0 += w, sx += w * x, sxx += w * x * x, st += w * t, sxt += w * x * t;
  }
  const double det = s0 * sxx - sx * sx;
  double b = det > 0 ? (s0 * sxt - sx * st) / det : 0;
  if (!(b > 0)) return {st / s0, 0.0};
  double a = (st - b * sx) / s0;
  if (a < 0) a = 0, b = sxt / sxx;
  return {a, b};
}

// The shares that make `fits` finish together on `size` (a_d + b_d * s_d * size equal for all),
// devices whose fixed cost alone exceeds that time left out; the time, or nothing.
std::optional<std::pair<std::vector<double>, double>> equal_finish(const std::vector<const CostFit*>& fits,
                                                                   std::size_t devices, double size) {
  std::vector<const CostFit*> in = fits;
  while (in.size() >= 2) {
    double inv = 0, fixed = 0;
    for (const CostFit* f : in) {
      if (!(f->b > 0)) return std::nullopt;  // free work: no finite split
      inv += 1 / f->b;
      fixed += f->a / f->b;
    }
    const double t = (size + fixed) / inv;
    auto slow = std::max_element(in.begin(), in.end(), [](const CostFit* x, const CostFit* y) { return x->a < y->a; });
    if ((*slow)->a >= t) {
      in.erase(slow);
      continue;
    }
    std::vector<double> shares(devices, 0.0);
    for (const CostFit* f : in) shares[f->device] = (t - f->a) / (f->b * size);
    return std::pair{shares, t};
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
// in a split: on the H200 machine the GPU alone's staged copies take helper threads that a CPU
// device's work-groups hold in a split, and both share host memory bandwidth; saxpy 50M was
// derived a 23% GPU share (6.55 ms) where the CPU alone takes 5.7, from sizes whose best splits
// ran 1.3-1.7x slower than the fits said (and training kept the CPU alone there).
std::pair<double, std::size_t> split_factor(const std::vector<DeviceInfo>& devices, const std::vector<CostFit>& fits,
                                            const std::vector<KbRun>& runs, const KbFeatures& query, double size) {
  std::map<double, std::map<std::string, std::vector<double>>> splits;  // size -> plan -> times
  for (const auto& r : runs) {
    const Config& c = r.config;
    const double x = input_size(r.features);
    if (c.shares.size() != devices.size() || c.schedule != "static" || !c.items.empty() || working_devices(c) < 2 ||
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
  for (const auto& f : fits) s << " " << f.level.str() << " " << f.a << " + " << f.b;
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
                                          const KbFeatures& query) {
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
    std::vector<std::pair<double, double>> pts;
    for (const auto& [key, t] : times)
      if (key.first == name) pts.emplace_back(key.second, median(t));
    if (pts.size() < 2) continue;
    CostFit f;
    f.level = alone.first;
    f.device = alone.second;
    std::tie(f.a, f.b) = fit_line(pts);
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
    if (split->second * std::max(1 + kSplitMargin, best.split_factor) < alone_ms)
      best.config = split->first, best.predicted_ms = split->second * best.split_factor;
  return best;
}

}  // namespace sinew::detail
