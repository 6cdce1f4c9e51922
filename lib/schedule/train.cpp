// schedule/train.cpp — training's options and entry point, and the plan helpers every trainer
// and the planner share (a device alone's one name, the device groups, one rebalancing step).
// The trainers: schedule/trainer.hpp.
#include "schedule/train.hpp"

#include "decompose/schedule_policy.hpp"
#include "schedule/trainer.hpp"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

namespace sinew::detail {

const TrainingSettings& TrainingOptions::defaults() {
  static const TrainingSettings d = TrainingSettings{}.with_defaults();
  return d;
}

TrainingOptions TrainingOptions::from(const TrainingSettings& t) {
  TrainingOptions o;
  o.strategy = t.strategy.value();
  o.precision = t.precision.value();
  o.quality = t.quality.value();
  o.exhaustive = t.exhaustive.value();
  o.max_executions = t.max_executions.value();
  o.time_budget_s = t.time_budget_s.value();
  return o;
}

double TimeBudget::seconds(double fastest_ms) const {
  return limited() ? std::max(floor_seconds, best_plan_times * fastest_ms / 1000) : 0;
}

TimeBudget time_budget(const TrainingOptions& o) { return {o.time_budget_s, o.tuning.budget_best_plan_times}; }

TrainingOptions level2_options(TrainingOptions base, std::size_t executions) {
  base.purpose = TrainingPurpose::rebalance;
  base.exhaustive = false;
  base.max_executions = executions;
  return base;
}

TrainingOptions screen_options(TrainingOptions base, std::size_t executions) {
  base.purpose = TrainingPurpose::check_derived;
  base.exhaustive = false;
  base.max_executions = executions;
  return base;
}

TrainingOptions one_device_options(TrainingOptions base, const std::vector<DeviceInfo>& devices, std::size_t device) {
  base.purpose = TrainingPurpose::screen_device;
  base.device = device;
  base.exhaustive = false;
  if (device < devices.size()) {
    const DeviceInfo& d = devices[device];
    // Each level once (the first with an untimed run more), the two fastest again.
    base.max_executions = (d.discrete ? d.overlap_levels.size() : d.fission_configs.size()) * 2 + 3;
  }
  return base;
}

std::size_t execution_budget(const TrainingOptions& o) { return trainer_for(o).executions(o); }

std::vector<std::vector<std::size_t>> device_groups(const std::vector<DeviceInfo>& devices) {
  std::set<DeviceKind> kinds;
  for (const auto& d : devices) kinds.insert(d.kind);
  std::vector<std::vector<std::size_t>> groups;
  if (kinds.size() > 1) {
    for (DeviceKind k : kinds) {
      groups.emplace_back();
      for (const auto& d : devices)
        if (d.kind == k) groups.back().push_back(d.index);
    }
  } else {
    for (const auto& d : devices) groups.push_back({d.index});
  }
  return groups;
}

std::vector<double> rebalance(const std::vector<DeviceInfo>& devices, const std::vector<double>& shares,
                              const std::vector<double>& device_ms, double damping) {
  const auto groups = device_groups(devices);
  std::vector<double> target(shares.size(), 0.0);
  double rate_sum = 0;
  std::vector<double> group_rate(groups.size(), 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    double share = 0, time = 0;
    for (auto d : groups[g]) {
      share += shares[d];
      if (shares[d] > 0) time = std::max(time, device_ms[d]);
    }
    if (share > 0 && time > 0) group_rate[g] = share / time;
    rate_sum += group_rate[g];
  }
  if (rate_sum <= 0) return shares;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (group_rate[g] <= 0) continue;
    const double group_share = group_rate[g] / rate_sum;
    // Inside the group, by each device's own rate.
    double inner = 0;
    std::vector<double> rate(groups[g].size(), 0.0);
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      auto d = groups[g][i];
      if (shares[d] > 0 && device_ms[d] > 0) rate[i] = shares[d] / device_ms[d];
      inner += rate[i];
    }
    for (std::size_t i = 0; i < groups[g].size(); ++i)
      target[groups[g][i]] = inner > 0 ? group_share * rate[i] / inner : group_share / groups[g].size();
  }
  std::vector<double> out(shares.size());
  double sum = 0;
  for (std::size_t d = 0; d < shares.size(); ++d) {
    out[d] = std::max(0.0, shares[d] + damping * (target[d] - shares[d]));
    sum += out[d];
  }
  for (auto& s : out) s /= sum;
  return out;
}

std::string shares_str(const std::vector<double>& s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? " " : "") << s[i];
  o << "]";
  return o.str();
}

Config without_idle_levels(Config c, const std::vector<DeviceInfo>& devices) {
  if (!c.items.empty()) return c;
  bool discrete = false, cpu = false;
  for (std::size_t d = 0; d < c.shares.size() && d < devices.size(); ++d)
    if (c.shares[d] > 0) (devices[d].discrete ? discrete : cpu) = true;
  if (!discrete) c.overlap = 1;
  if (!cpu) c.fission = Config{}.fission;
  return c;
}

std::size_t working_devices(const Config& c) {
  return static_cast<std::size_t>(std::count_if(c.shares.begin(), c.shares.end(), [](double x) { return x > 0; }));
}

std::optional<std::pair<Config, std::size_t>> alone_plan(const Config& c, const std::vector<DeviceInfo>& devices) {
  if (!places_shares(c) || !c.items.empty()) return std::nullopt;
  std::optional<std::size_t> only;
  for (std::size_t d = 0; d < c.shares.size(); ++d)
    if (c.shares[d] > 0) {
      if (only) return std::nullopt;
      only = d;
    }
  if (!only) return std::nullopt;
  Config alone = Config::single(*only, c.shares.size());
  alone.overlap = c.overlap;
  alone.fission = c.fission;
  return std::pair{without_idle_levels(alone, devices), *only};
}

TrainingResult train(const std::vector<DeviceInfo>& devices, const Measure& measure, const TrainingOptions& options,
                     const Progress& progress, const std::optional<Config>& start, const Measure& untimed) {
  const std::vector<std::size_t> no_levels;
  const TrainingRequest request{.devices = devices, .measure = measure, .untimed = untimed ? untimed : measure,
                                .options = options, .progress = progress, .start = start, .levels = no_levels};
  return trainer_for(options).train(request);
}

}  // namespace sinew::detail
