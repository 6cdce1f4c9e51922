// schedule/train_dc.cpp — training a divide-and-conquer tree: the HPU paper's model (DcModel),
// then the crossover levels and the shares around its best, the fastest measured plan kept.
#include "schedule/train.hpp"

#include "platform/error.hpp"
#include "tree/nodes/divide_and_conquer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

Config DcModel::single(std::size_t device) const {
  Config c = Config::single(device, level_ms.size());
  set_crossover_item(c, static_cast<unsigned>(levels()));
  set_upper_item(c, device);
  return c;
}

Config DcModel::plan(std::size_t crossover, std::size_t upper) const {
  Config c;
  set_crossover_item(c, static_cast<unsigned>(crossover));
  set_upper_item(c, upper);
  // Each device's time for its whole-vector part of the split levels (and its transfers): the
  // shares that make them finish together are proportional to the rates.
  double sum = 0;
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    double t = transfer_ms[d];
    for (std::size_t l = 0; l < crossover && l < levels(); ++l) t += level_ms[d][l];
    c.shares.push_back(t > 0 ? 1 / t : 0);
    sum += c.shares.back();
  }
  for (double& x : c.shares) x = sum > 0 ? x / sum : 1.0 / static_cast<double>(c.shares.size());
  // In whole subproblems of the highest split level; the upper device takes what rounding leaves.
  const double steps = static_cast<double>(crossover - 1 < subproblems.size() ? subproblems[crossover - 1] : 0);
  if (steps >= 1) {
    double given = 0;
    for (std::size_t d = 0; d < c.shares.size(); ++d)
      if (d != upper) given += c.shares[d] = std::round(c.shares[d] * steps) / steps;
    c.shares[upper] = std::max(0.0, 1.0 - given);
  }
  return c;
}

double DcModel::predict(const Config& c) const {
  const std::size_t crossover = std::min<std::size_t>(crossover_item(c).value_or(0), levels());
  const std::size_t upper = upper_item(c).value_or(static_cast<std::size_t>(
      std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin()));
  std::size_t active = 0;
  for (double x : c.shares) active += x > 0;
  const bool on_upper = active == 1 && c.shares[upper] > 0;
  double split = 0, moved = 0;
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    if (c.shares[d] <= 0) continue;
    double t = transfer_ms[d];
    for (std::size_t l = 0; l < crossover; ++l) t += level_ms[d][l];
    split = std::max(split, c.shares[d] * t);
    moved += c.shares[d] * transfer_ms[d];  // each part back to the host, and the result back to it
  }
  if (on_upper) {  // one device from the leaves to the top: no crossing
    double t = transfer_ms[upper];
    for (std::size_t l = 0; l < levels(); ++l) t += level_ms[upper][l];
    return t;
  }
  double top = crossover < levels() ? transfer_ms[upper] + moved : 0;
  for (std::size_t l = crossover; l < levels(); ++l) top += level_ms[upper][l];
  return split + top;
}

Config DcModel::best() const {
  Config best = single(0);
  double time = predict(best);
  auto consider = [&](const Config& c) {
    if (const double t = predict(c); t < time) best = c, time = t;
  };
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    consider(single(d));
    for (std::size_t c = 1; c < levels(); ++c) consider(plan(c, d));
  }
  return best;
}

TrainingResult train_divide_and_conquer(const std::vector<DeviceInfo>& devices, const Measure& measure,
                                        const TrainingOptions& options, const std::vector<std::size_t>& subproblems,
                                        const Progress& progress, Config* analytic, const std::optional<Config>& start) {
  const std::size_t levels = subproblems.size();
  if (devices.empty()) throw_error(errc::no_device, "training needs at least one device");
  const auto t0 = std::chrono::steady_clock::now();
  TrainingResult r;
  r.strategy = "dc_model";
  r.quality = std::max(1u, options.quality);
  // The model's runs are needed whatever the budget: one per device, each `quality` times.
  const std::size_t budget = std::max(options.max_executions, (devices.size() + 1) * r.quality + 1);
  struct OutOfBudget {};
  std::vector<double> level_medians;  // the last measured point's levels, for the model
  auto point = [&](const Config& c) -> const TrainingPoint& {
    for (const auto& p : r.points)
      if (p.config == c) return p;
    if (r.executions + r.quality > budget) throw OutOfBudget{};
    std::vector<double> times;
    std::vector<std::vector<double>> dev(devices.size()), level;
    for (unsigned q = 0; q < r.quality; ++q) {
      Measurement m = measure(c);
      ++r.executions;
      times.push_back(m.time_ms);
      for (std::size_t d = 0; d < devices.size(); ++d) dev[d].push_back(d < m.device_ms.size() ? m.device_ms[d] : 0);
      level.resize(std::max(level.size(), m.level_ms.size()));
      for (std::size_t l = 0; l < m.level_ms.size(); ++l) level[l].push_back(m.level_ms[l]);
    }
    TrainingPoint p{c, median(times), {}};
    for (auto& v : dev) p.device_ms.push_back(median(v));
    r.points.push_back(p);
    if (progress) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(3) << "[" << r.executions << " executions] crossover=" << *crossover_item(c)
           << " upper=" << *upper_item(c) << " shares " << shares_str(c.shares) << " -> " << p.time_ms << " ms";
      progress(line.str());
    }
    level_medians.clear();
    for (auto& v : level) level_medians.push_back(median(v));
    return r.points.back();
  };
  // A first, untimed run: programs built, buffers pooled.
  DcModel model;
  model.level_ms.assign(devices.size(), std::vector<double>(levels, 0.0));
  model.subproblems = subproblems;
  try {
    measure(model.single(0));
    ++r.executions;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const TrainingPoint& p = point(model.single(d));
      double sum = 0;
      for (std::size_t l = 0; l < levels && l < level_medians.size(); ++l) sum += model.level_ms[d][l] = level_medians[l];
      model.transfer_ms.push_back(std::max(0.0, p.time_ms - sum));
    }
    const Config best = model.best();
    if (analytic) *analytic = best;
    r.model_choice = ModelChoice{best, model.predict(best), point(best).time_ms};
    if (start && start->shares.size() == devices.size()) {
      Config from = *start;
      set_crossover_item(from, static_cast<unsigned>(std::min<std::size_t>(crossover_item(from).value_or(0), levels)));
      if (!upper_item(from) || *upper_item(from) >= devices.size()) set_upper_item(from, upper_item(best).value_or(0));
      point(from);
    }
    // The crossover levels on the model's upper device, then the shares below the best.
    const std::size_t upper = upper_item(best).value_or(0);
    if (devices.size() > 1 && !options.screen_only && !options.fixed_platform) {
      for (std::size_t c = 1; c < levels; ++c) point(model.plan(c, upper));
      Config fastest = std::min_element(r.points.begin(), r.points.end(), [](const auto& a, const auto& b) {
                         return a.time_ms < b.time_ms;
                       })->config;
      if (crossover_item(fastest) && *crossover_item(fastest) < levels)
        for (std::size_t d = 0; d < devices.size(); ++d)
          for (double f : {0.75, 1.25}) {
            Config moved = fastest;
            moved.shares[d] *= f;
            const double sum = std::accumulate(moved.shares.begin(), moved.shares.end(), 0.0);
            if (moved.shares[d] <= 0 || sum <= 0) continue;
            for (double& x : moved.shares) x /= sum;
            point(moved);
          }
    }
  } catch (const OutOfBudget&) {
  }
  const auto& best = *std::min_element(r.points.begin(), r.points.end(),
                                       [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });
  r.best = best.config;
  r.time_ms = best.time_ms;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace sinew::detail
