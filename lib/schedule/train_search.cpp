// schedule/train_search.cpp — the training's searches of the distribution (even split,
// CPU-assisted), the screening of platform configurations, each device alone, and the dynamic
// schedule's point beside the static plans.
#include "schedule/train_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sinew::detail {

// Overlap levels, then fissions, one at a time at `from`'s distribution (one run each). At
// fixed shares a faster device just waits for the other, so combinations are ranked by the time
// they would take once rebalanced (1 / the sum of the groups' rates). Returns the leader.
Config Search::screen_platform(const TrainingPoint& from) {
  const Config at = from.config;
  Config leader = at;
  double leader_time = balanced_time(from);
  auto screen = [&](Config c) {
    const TrainingPoint& p = point(c, 1);
    if (balanced_time(p) < leader_time) {
      leader_time = balanced_time(p);
      leader = p.config;
    }
  };
  // A dimension matters only where its devices have work.
  bool gpu_work = false, cpu_work = false;
  for (const auto& d : devices_) (d.discrete ? gpu_work : cpu_work) |= at.shares[d.index] > 0;
  for (auto ov : overlaps_)
    if (gpu_work && ov != at.overlap) {
      Config c = at;
      c.overlap = ov;
      screen(c);
    }
  for (const auto& f : fissions_)
    if (cpu_work && f != leader.fission) {
      Config c = leader;
      c.fission = f;
      screen(c);
    }
  return leader;
}

// The time a point's configuration would take with its shares rebalanced: each active group g
// does share_g in t_g, so all of them together do the whole in 1 / sum(share_g / t_g).
double Search::balanced_time(const TrainingPoint& p) const {
  double rate = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto [share, t] = group_load(p, g);
    if (share > 0 && t > 0) rate += share / t;
  }
  return rate > 0 ? 1.0 / rate : p.time_ms;
}

std::pair<double, double> Search::group_load(const TrainingPoint& p, std::size_t g) const {
  double share = 0, t = 0;
  for (auto d : groups_[g]) {
    share += p.config.shares[d];
    if (p.config.shares[d] > 0 && d < p.device_ms.size()) t = std::max(t, p.device_ms[d]);
  }
  return {share, t};
}

bool Search::balanced(const TrainingPoint& p) const {
  double lo = 1e300, hi = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto [s, t] = group_load(p, g);
    if (s <= 0) continue;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  return hi <= 0 || hi <= lo * (1 + o_.precision);
}

Config Search::strategy(Config c) {
  if (o_.strategy == Strategy::model) return model(c, o_.max_executions);
  bool assisted = o_.strategy == Strategy::cpu_assisted;
  std::size_t cpu_group = groups_.size();
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (devices_[groups_[g].front()].kind == DeviceKind::cpu && groups_.size() > 1 &&
        std::any_of(devices_.begin(), devices_.end(), [](const DeviceInfo& d) { return d.kind != DeviceKind::cpu; }))
      cpu_group = g;
  if (assisted && cpu_group < groups_.size()) return assist(c, cpu_group);
  return even(c);
}

// Even split: shares proportional to measured rates until every group finishes together. Each
// step starts from the best point so far; a step that made things worse halves the next one.
Config Search::even(Config c) {
  if (groups_.size() < 2) {
    point(c);
    return c;
  }
  double damping = 1.0;
  TrainingPoint best{c, 1e300, {}};
  for (int i = 0; i < 8; ++i) {
    const TrainingPoint p = point(c);
    if (p.time_ms < best.time_ms) {
      best = p;
    } else if (p.time_ms > best.time_ms * (1 + o_.precision)) {
      damping *= 0.5;
    }
    if (balanced(best)) break;
    auto next = rebalance(devices_, best.config.shares, best.device_ms, damping);
    double change = 0;
    for (std::size_t d = 0; d < next.size(); ++d) change = std::max(change, std::fabs(next[d] - best.config.shares[d]));
    if (change < o_.precision / 4) break;
    c.shares = next;
  }
  return best.config;
}

// CPU-assisted GPU: everything on the other groups, then CPU work added while time falls.
Config Search::assist(Config c, std::size_t cpu_group) {
  auto with_cpu = [&](double s_cpu) {
    std::vector<double> s(devices_.size(), 0.0);
    double others = 0;
    for (std::size_t g = 0; g < groups_.size(); ++g)
      if (g != cpu_group)
        for (auto d : groups_[g]) others += std::max(c.shares[d], 1e-9);
    for (std::size_t g = 0; g < groups_.size(); ++g)
      for (auto d : groups_[g])
        s[d] = g == cpu_group ? s_cpu / groups_[g].size() : (1 - s_cpu) * std::max(c.shares[d], 1e-9) / others;
    return s;
  };
  double s_cpu = 0, step = 0.1;
  Config cur = c;
  cur.shares = with_cpu(0);
  double best = point(cur).time_ms;
  while (step >= o_.precision / 2 && s_cpu + step <= 1.0) {
    Config next = c;
    next.shares = with_cpu(s_cpu + step);
    double t = point(next).time_ms;
    if (t < best) {
      best = t;
      s_cpu += step;
      cur = next;
    } else {
      step /= 2;
    }
  }
  return cur;
}

Config Search::one_group(const Config& c, std::size_t g) const {
  Config one = c;
  std::fill(one.shares.begin(), one.shares.end(), 0.0);
  double inner = 0;
  for (auto d : groups_[g]) inner += std::max(c.shares[d], 1e-9);
  for (auto d : groups_[g]) one.shares[d] = std::max(c.shares[d], 1e-9) / inner;
  return without_idle_levels(one, devices_);
}

bool Search::discrete_group(std::size_t g) const {
  return std::all_of(groups_[g].begin(), groups_[g].end(), [&](std::size_t d) { return devices_[d].discrete; });
}

std::vector<Config> Search::group_levels(const Config& c, std::size_t g) const {
  std::vector<Config> out{c};
  if (discrete_group(g)) {
    for (auto ov : overlaps_)
      if (ov != c.overlap) out.push_back(c), out.back().overlap = ov;
  } else {
    for (const auto& f : fissions_)
      if (f != c.fission) out.push_back(c), out.back().fission = f;
  }
  return out;
}

std::size_t Search::singles_cost() const {
  if (groups_.size() < 2) return 0;
  std::size_t runs = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) runs += discrete_group(g) ? overlaps_.size() : fissions_.size();
  return 2 * runs;
}

// Hybrid must beat each group alone to win, and a group alone must be measured at its own best
// level: a GPU alone carries all the transfers, so its deepest overlap may pay where a split's
// did not (or, for a small input, none); a CPU alone may want another fission than its share did.
// Its plan at `c`'s configuration first for every group, then the other levels (discrete groups
// first: their levels change most with the share), each measured once and skipped where
// measured already.
void Search::singles(Config c, bool every_level) {  // by value: measuring may move the point it came from
  if (groups_.size() < 2) return;
  auto measured = [&](const Config& x) {
    return std::any_of(points_.begin(), points_.end(), [&](const TrainingPoint& p) { return p.config == x; });
  };
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Config one = one_group(c, g);
    if (!every_level || !measured(one)) point(one, every_level ? 1 : 0);
  }
  if (!every_level) return;
  for (bool discrete : {true, false})
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (discrete_group(g) != discrete) continue;
      for (const auto& level : group_levels(c, g)) {
        const Config one = one_group(level, g);
        if (!measured(one)) point(one, 1);
      }
    }
}

// The dynamic schedule beside the static plans: at the best plan's fission and overlap, each
// device taking chunks weighted by its measured speed, from each device alone where both were
// measured, else from the fastest split (its shares rebalanced by its device times); even
// weights where neither was. Where the work is regular a balanced static split wins (no chunks
// to take); where its cost is irregular, or shifts from run to run, chunks taken as the devices
// get ready do.
void Search::dynamic_point() {
  Config c = best_point().config;
  std::optional<TrainingPoint> split;  // a copy: measuring below adds points
  std::vector<double> alone(devices_.size(), 0.0);  // each device's best time alone
  for (const auto& p : points_) {
    if (p.config.schedule != "static") continue;
    const auto active = working_devices(p.config);
    if (active > 1 && (!split || p.time_ms < split->time_ms)) split = p;
    if (active == 1)
      for (std::size_t d = 0; d < devices_.size(); ++d)
        if (p.config.shares[d] > 0 && (alone[d] == 0 || p.time_ms < alone[d])) alone[d] = p.time_ms;
  }
  // Each device alone where the search did not get to it (its runs were kept for this): a
  // split's device times say little of a device's speed when the cost is irregular.
  // Only where the budget also leaves room for the dynamic plan itself.
  const std::size_t per_point = o_.strategy == Strategy::model && !o_.screen_only ? 2 : std::max(1u, o_.quality);
  const auto missing = static_cast<std::size_t>(std::count(alone.begin(), alone.end(), 0.0));
  if (executions_ + per_point * (missing + 1) <= o_.max_executions)
    for (std::size_t d = 0; d < devices_.size(); ++d)
      if (alone[d] == 0) {
        Config one = c;
        one.shares = Config::single(d, devices_.size()).shares;
        alone[d] = point(one).time_ms;
      }
  if (std::all_of(alone.begin(), alone.end(), [](double t) { return t > 0; })) {
    for (std::size_t d = 0; d < devices_.size(); ++d) c.shares[d] = 1.0 / alone[d];
    normalise(c.shares);
  } else {
    c.shares = split ? rebalance(devices_, split->config.shares, split->device_ms) : even_shares();
  }
  c.schedule = "dynamic";
  c.items.erase("min_chunk");
  point(c);
}

}  // namespace sinew::detail
