// schedule/train.cpp — the training search: strategies, platform configurations, candidates.
#include "schedule/train.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <numeric>
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
  return o;
}

TrainingOptions level2_options(TrainingOptions base, std::size_t executions) {
  base.fixed_platform = true;
  base.exhaustive = false;
  base.max_executions = executions;
  return base;
}

TrainingOptions screen_options(TrainingOptions base, std::size_t executions) {
  base.screen_only = true;
  base.fixed_platform = false;
  base.exhaustive = false;
  base.max_executions = executions;
  return base;
}

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

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string shares_str(const std::vector<double>& s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? " " : "") << s[i];
  o << "]";
  return o.str();
}

class Search {
 public:
  Search(const std::vector<DeviceInfo>& devices, const Measure& measure, const TrainingOptions& o, const Progress& p)
      : devices_(devices), measure_(measure), o_(o), progress_(p), groups_(device_groups(devices)) {
    for (const auto& d : devices_) {
      if (!d.discrete && fissions_.empty())
        for (const auto& f : d.fission_configs) fissions_.push_back(f.name);
      if (d.discrete && overlaps_.empty()) overlaps_ = d.overlap_levels;
    }
    if (fissions_.empty()) fissions_ = {"none"};
    if (overlaps_.empty()) overlaps_ = {1};
  }

  TrainingResult run(const std::optional<Config>& start) {
    const auto t0 = std::chrono::steady_clock::now();
    Config base;
    base.shares = even_shares();
    base.fission = "none";
    base.overlap = std::find(overlaps_.begin(), overlaps_.end(), 2u) != overlaps_.end() ? 2 : overlaps_.front();
    if (start && start->shares.size() == devices_.size()) {
      base = *start;
      if (o_.fixed_platform) {
        fissions_ = {base.fission};
        overlaps_ = {base.overlap};
      }
      if (std::find(fissions_.begin(), fissions_.end(), base.fission) == fissions_.end()) base.fission = "none";
      if (std::find(overlaps_.begin(), overlaps_.end(), base.overlap) == overlaps_.end()) base.overlap = overlaps_.front();
      // A start with idle groups gives the strategy nothing to measure them by: keep a little
      // (a derived plan's check measures the plan as it is).
      for (const auto& g : o_.screen_only ? std::vector<std::vector<std::size_t>>{} : groups_) {
        double s = 0;
        for (auto d : g) s += base.shares[d];
        if (s <= 0)
          for (auto d : g) base.shares[d] = 0.05 / g.size();
      }
      normalise(base.shares);
    }
    try {
      if (o_.exhaustive) {
        for (const auto& f : fissions_)
          for (auto ov : overlaps_) {
            Config c = base;
            c.fission = f;
            c.overlap = ov;
            strategy(c);
            singles(c);
          }
      } else if (o_.screen_only) {
        // A derived plan: is its platform configuration right for this input, and its
        // distribution near? Screen, one rebalancing step, each device alone; one run a point
        // (the check is for gross mismatches, such as an overlap level 2x off; the online
        // balancer refines the distribution).
        o_.quality = 1;
        const TrainingPoint first = point(base);
        const Config leader = screen_platform(first);
        const TrainingPoint at = leader == base ? first : point(leader);
        if (!balanced(at)) {
          Config c = at.config;
          c.shares = rebalance(devices_, c.shares, at.device_ms);
          point(c);
        }
        singles(best_point().config);
        // One run a point leaves the close calls to noise: the two fastest plans run once more
        // each, and the lower mean wins.
        duel_ = true;
        const auto ranked = by_mean();
        for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i) point(ranked[i].first);
      } else {
        // The balancer's level 2 comes when the machine changed under a plan: each device alone
        // first, so that a small budget still sees whether one device should now take it all.
        if (o_.fixed_platform) singles(base);
        // Distribution first, on the base platform configuration.
        Config best = strategy(base);
        // Then one dimension at a time at that distribution.
        const Config leader = screen_platform(best_point());
        if (leader.fission != best.fission || leader.overlap != best.overlap) strategy(leader);
        singles(best_point().config);
      }
    } catch (const Budget&) {
      note("stopped: the budget of " + std::to_string(o_.max_executions) + " executions is spent");
    }
    TrainingResult r;
    if (duel_) {
      const auto ranked = by_mean();
      r.best = ranked.front().first;
      r.time_ms = ranked.front().second;
    } else {
      const TrainingPoint& b = best_point();
      r.best = b.config;
      r.time_ms = b.time_ms;
    }
    r.executions = executions_;
    r.points = points_;
    r.strategy = std::string(to_string(o_.strategy));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  struct Budget {};

  std::vector<double> even_shares() const {
    std::vector<double> s(devices_.size(), 0.0);
    for (const auto& g : groups_)
      for (auto d : g) s[d] = 1.0 / groups_.size() / g.size();
    return s;
  }

  static void normalise(std::vector<double>& s) {
    double sum = std::accumulate(s.begin(), s.end(), 0.0);
    for (auto& x : s) x /= sum;
  }

  void note(const std::string& line) {
    if (progress_) progress_(line);
  }

  // Every measured configuration with the mean time of its points, fastest first.
  std::vector<std::pair<Config, double>> by_mean() const {
    std::vector<std::pair<Config, double>> out;
    std::vector<std::size_t> counts;
    for (const auto& p : points_) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p.config; });
      if (it == out.end()) {
        out.emplace_back(p.config, p.time_ms);  // the sum of its times, until divided below
        counts.push_back(1);
      } else {
        it->second += p.time_ms;
        ++counts[static_cast<std::size_t>(it - out.begin())];
      }
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i].second /= static_cast<double>(counts[i]);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return out;
  }

  const TrainingPoint& best_point() const {
    return *std::min_element(points_.begin(), points_.end(),
                             [](const TrainingPoint& a, const TrainingPoint& b) { return a.time_ms < b.time_ms; });
  }

  // Measures a config `quality` times (a first use of a fission configuration gets one more,
  // untimed run: it builds programs for the new sub-devices).
  const TrainingPoint& point(const Config& c, unsigned quality = 0) {
    if (quality == 0) quality = std::max(1u, o_.quality);
    bool warm = warmed_.insert(c.fission).second;
    if (!points_.empty() && executions_ + quality + (warm ? 1 : 0) > o_.max_executions) throw Budget{};
    if (warm) {
      measure_(c);
      ++executions_;
    }
    std::vector<double> times;
    std::vector<std::vector<double>> dev(devices_.size());
    for (unsigned q = 0; q < quality; ++q) {
      Measurement m = measure_(c);
      ++executions_;
      times.push_back(m.time_ms);
      for (std::size_t d = 0; d < devices_.size(); ++d) dev[d].push_back(d < m.device_ms.size() ? m.device_ms[d] : 0);
    }
    TrainingPoint p{c, median(times), {}};
    for (auto& v : dev) p.device_ms.push_back(median(v));
    points_.push_back(p);
    std::ostringstream line;
    line << std::fixed << std::setprecision(3) << "[" << executions_ << " executions] fission=" << c.fission
         << " overlap=" << c.overlap << " shares " << shares_str(c.shares) << " -> " << p.time_ms << " ms (best "
         << best_point().time_ms << " ms)";
    note(line.str());
    return points_.back();
  }

  // Overlap levels, then fissions, one at a time at `from`'s distribution (one run each). At
  // fixed shares a faster device just waits for the other, so combinations are ranked by the time
  // they would take once rebalanced (1 / the sum of the groups' rates). Returns the leader.
  Config screen_platform(const TrainingPoint& from) {
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
  double balanced_time(const TrainingPoint& p) const {
    double rate = 0;
    for (const auto& g : groups_) {
      double t = 0, share = 0;
      for (auto d : g) {
        share += p.config.shares[d];
        if (p.config.shares[d] > 0) t = std::max(t, p.device_ms[d]);
      }
      if (share > 0 && t > 0) rate += share / t;
    }
    return rate > 0 ? 1.0 / rate : p.time_ms;
  }

  bool balanced(const TrainingPoint& p) const {
    double lo = 1e300, hi = 0;
    for (const auto& g : groups_) {
      double t = 0, s = 0;
      for (auto d : g) {
        s += p.config.shares[d];
        if (p.config.shares[d] > 0) t = std::max(t, p.device_ms[d]);
      }
      if (s <= 0) continue;
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    return hi <= 0 || hi <= lo * (1 + o_.precision);
  }

  Config strategy(Config c) {
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
  Config even(Config c) {
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
  Config assist(Config c, std::size_t cpu_group) {
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

  // Every group alone, with the given platform configuration: hybrid must beat these to win.
  void singles(Config c) {  // by value: measuring may move the point it came from
    if (groups_.size() < 2) return;
    for (const auto& g : groups_) {
      Config one = c;
      std::fill(one.shares.begin(), one.shares.end(), 0.0);
      double inner = 0;
      for (auto d : g) inner += std::max(c.shares[d], 1e-9);
      for (auto d : g) one.shares[d] = std::max(c.shares[d], 1e-9) / inner;
      point(one);
      // A GPU alone carries all the transfers: its deepest overlap may pay where a split's did not.
      const bool discrete = std::all_of(g.begin(), g.end(), [&](std::size_t d) { return devices_[d].discrete; });
      if (discrete && one.overlap != overlaps_.back()) {
        one.overlap = overlaps_.back();
        point(one);
      }
    }
  }

  const std::vector<DeviceInfo>& devices_;
  const Measure& measure_;
  TrainingOptions o_;
  Progress progress_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::string> fissions_;
  std::vector<unsigned> overlaps_;
  std::set<std::string> warmed_;
  bool duel_ = false;  // the result is the configuration with the best mean (a derived plan's check)
  std::vector<TrainingPoint> points_;
  std::size_t executions_ = 0;
};

}  // namespace

TrainingResult train(const std::vector<DeviceInfo>& devices, const Measure& measure, const TrainingOptions& options,
                     const Progress& progress, const std::optional<Config>& start) {
  if (devices.empty()) throw_error(errc::no_device, "training needs at least one device");
  Search search(devices, measure, options, progress);
  return search.run(start);
}

}  // namespace sinew::detail
