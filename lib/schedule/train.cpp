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

std::size_t execution_budget(const TrainingOptions& o) {
  // A derived plan's check and the balancer's level 2 keep their callers' budgets, exhaustive
  // mode the user's.
  const bool own = o.strategy == Strategy::model && !o.exhaustive && !o.screen_only && !o.fixed_platform;
  return own ? std::min(o.max_executions, kModelExecutions) : o.max_executions;
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

namespace {

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
    o_.max_executions = execution_budget(o_);
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
    // The dynamic schedule's point (dynamic_point()) is measured last, within the budget: its
    // runs are kept from the search.
    const bool dynamic = o_.dynamic && !o_.screen_only && !o_.fixed_platform && devices_.size() > 1;
    const std::size_t per_point = o_.strategy == Strategy::model ? 2 : std::max(1u, o_.quality);
    // (The model strategy's few runs keep room for the dynamic plan alone: its weights then come
    // from the split the model found, rebalanced.)
    const std::size_t reserved =
        dynamic ? std::min<std::size_t>(o_.max_executions / 2,
                                        per_point * (o_.strategy == Strategy::model ? 1 : 1 + devices_.size()))
                : 0;
    o_.max_executions -= reserved;
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
      } else if (o_.strategy == Strategy::model && !o_.fixed_platform) {
        model_training(base);
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
    if (dynamic) {
      o_.max_executions += reserved;
      try {
        dynamic_point();
      } catch (const Budget&) {
      }
    }
    TrainingResult r;
    if (duel_) {
      const auto ranked = by_mean();
      r.best = ranked.front().first;
      r.time_ms = ranked.front().second;
    } else {
      const TrainingPoint* b = &best_point();
      // (In exhaustive mode the model ran at every combination: the fastest measured plan wins.)
      if (model_plan_ && !o_.exhaustive && points_[*model_plan_].time_ms <= b->time_ms * (1 + model_margin_))
        b = &points_[*model_plan_];
      r.best = b->config;
      r.time_ms = b->time_ms;
    }
    r.executions = executions_;
    r.points = points_;
    r.strategy = std::string(to_string(o_.strategy));
    r.quality = o_.strategy == Strategy::model && !o_.screen_only ? 2 : std::max(1u, o_.quality);
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
    // The model strategy runs every plan twice and the faster run counts: a plan's first run may
    // allocate its device buffers (the pool matches exact sizes), build a new fission's programs
    // or, on PoCL, kernels for its sizes, and the faster of two also halves interference.
    const bool fastest = o_.strategy == Strategy::model && !o_.screen_only;
    if (fastest) quality = 2, warm = false;
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
    auto summary = [&](const std::vector<double>& v) {
      return fastest ? *std::min_element(v.begin(), v.end()) : median(v);
    };
    TrainingPoint p{c, summary(times), {}};
    for (auto& v : dev) p.device_ms.push_back(summary(v));
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
  void singles(Config c, bool deepest_overlap = true) {  // by value: measuring may move the point it came from
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
      if (deepest_overlap && discrete && one.overlap != overlaps_.back()) {
        one.overlap = overlaps_.back();
        point(one);
      }
    }
  }

  // The dynamic schedule beside the static plans: at the best plan's fission and overlap, each
  // device taking chunks weighted by its measured speed, from each device alone where both were
  // measured, else from the fastest split (its shares rebalanced by its device times); even
  // weights where neither was. Where the work is regular a balanced static split wins (no chunks
  // to take); where its cost is irregular, or shifts from run to run, chunks taken as the devices
  // get ready do.
  void dynamic_point() {
    Config c = best_point().config;
    std::optional<TrainingPoint> split;  // a copy: measuring below adds points
    std::vector<double> alone(devices_.size(), 0.0);  // each device's best time alone
    for (const auto& p : points_) {
      if (p.config.schedule != Schedule::static_) continue;
      const auto active = std::count_if(p.config.shares.begin(), p.config.shares.end(), [](double x) { return x > 0; });
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
    c.schedule = Schedule::dynamic;
    c.min_chunk = 0;
    point(c);
  }

  // ----- The model strategy: SkePU's tuning ----------------------------------------------------
  //
  // Per device a linear model of its time in its share of the work, t = a * share + b (the
  // paper's t = a * n + b with n = share * N), fitted by least squares to the device times of a
  // few measured plans; the split that makes the modelled devices finish together; one device
  // alone where the models say that is faster. Each plan runs twice and the faster run counts
  // (see point()), whatever `quality` says: the fit over several shares does the averaging that
  // the median of `quality` runs does for the searches, and kModelExecutions affords no more.

  struct Line {
    double a = 0, b = 0;       // ms per whole input, ms
    std::size_t distinct = 0;  // distinct shares behind it (0: no point, the device is unknown)
    bool borrowed = false;     // the shape of the device's model at another setting
    double squares = 0;        // the sum of the squared relative residuals
    std::size_t freedom = 0;   // points beyond the line's parameters
  };

  // What else a device's time depends on: a discrete device's overlap level, a CPU's fission.
  std::string setting(std::size_t d, const Config& c) const {
    return devices_[d].discrete ? "overlap=" + std::to_string(c.overlap) : "fission=" + c.fission;
  }

  static Line least_squares(const std::vector<std::pair<double, double>>& pts) {
    Line l;
    if (pts.empty()) return l;
    std::vector<double> shares;
    double ms = 0, mt = 0;
    for (const auto& [s, t] : pts) {
      shares.push_back(s);
      ms += s / static_cast<double>(pts.size());
      mt += t / static_cast<double>(pts.size());
    }
    std::sort(shares.begin(), shares.end());
    l.distinct = 1;
    for (std::size_t i = 1; i < shares.size(); ++i) l.distinct += shares[i] - shares[i - 1] > 1e-9;
    auto residuals = [&](std::size_t parameters) {
      for (const auto& [s, t] : pts) l.squares += std::pow((t - l.a * s - l.b) / t, 2);
      l.freedom = pts.size() - std::min(pts.size(), parameters);
      return l;
    };
    if (l.distinct < 2) {  // one share: proportional, SkePU's model with b = 0
      l.a = mt / ms;
      return residuals(1);
    }
    double sxx = 0, sxy = 0, sx2 = 0, sxt = 0;
    for (const auto& [s, t] : pts) {
      sxx += (s - ms) * (s - ms);
      sxy += (s - ms) * (t - mt);
      sx2 += s * s;
      sxt += s * t;
    }
    l.a = sxy / sxx;
    l.b = mt - l.a * ms;
    if (l.a <= 0) {
      // Times that do not grow with the share: noise over a fixed cost. Nearly free work, which
      // the next prediction gives this device, and whose measurement corrects the slope.
      l.a = 1e-3 * mt;
      l.b = mt - l.a * ms;
    } else if (l.b < 0) {
      l.a = sxt / sx2;  // a negative fixed cost is noise too: the best line through 0
      l.b = 0;
    }
    return residuals(2);
  }

  // Device d's model at `c`'s setting, from every point measured there. A setting measured at
  // one share only (a screened overlap level or fission) borrows the device's model at another
  // setting, scaled through that point: the level changes the device's speed, not its shape.
  Line fit(std::size_t d, const Config& c, bool borrow = true) const {
    std::vector<std::pair<double, double>> pts;
    const std::string here = setting(d, c);
    for (const auto& p : points_)
      if (setting(d, p.config) == here && p.config.shares[d] > 0 && p.device_ms[d] > 0)
        pts.emplace_back(p.config.shares[d], p.device_ms[d]);
    Line l = least_squares(pts);
    if (!borrow || l.distinct != 1) return l;
    for (const auto& p : points_) {
      if (setting(d, p.config) == here) continue;
      const Line other = fit(d, p.config, false);
      if (other.distinct < 2) continue;
      double predicted = 0, measured = 0;
      for (const auto& [s, t] : pts) predicted += other.a * s + other.b, measured += t;
      const double k = measured / predicted;
      return Line{other.a * k, other.b * k, 1, true};
    }
    return l;
  }

  struct Prediction {
    std::vector<double> shares;
    double ms = 1e300;
  };

  // The closed form: the active devices S finish together at T = (1 + sum b/a) / sum 1/a, each
  // with share (T - b) / a. The best S holds exactly the devices with b < T (adding one with
  // b < T lowers T; one with b >= T would get no share), so the prefixes of the devices ordered
  // by b are the candidates; a share below half the precision step is within the model's noise
  // and drops its prefix. Each device alone (T = a + b) is a candidate too.
  Prediction predict(const std::vector<Line>& lines) const {
    std::vector<std::size_t> order;
    for (std::size_t d = 0; d < lines.size(); ++d)
      if (lines[d].distinct > 0) order.push_back(d);
    std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return lines[x].b < lines[y].b; });
    Prediction best;
    auto consider = [&](const std::vector<std::size_t>& set) {
      double inverse = 0, fixed = 0;
      for (auto d : set) inverse += 1 / lines[d].a, fixed += lines[d].b / lines[d].a;
      const double t = (1 + fixed) / inverse;
      std::vector<double> shares(lines.size(), 0.0);
      for (auto d : set) {
        shares[d] = set.size() == 1 ? 1.0 : (t - lines[d].b) / lines[d].a;
        if (shares[d] < o_.precision / 2) return;
      }
      if (t < best.ms) best = {shares, t};
    };
    for (std::size_t n = 1; n <= order.size(); ++n) consider({order.begin(), order.begin() + static_cast<long>(n)});
    for (auto d : order) consider({d});
    normalise(best.shares);
    return best;
  }

  // The time the models give a plan: its slowest working device's.
  static double modelled_ms(const std::vector<Line>& lines, const std::vector<double>& shares) {
    double t = 0;
    for (std::size_t d = 0; d < lines.size(); ++d)
      if (shares[d] > 0) t = std::max(t, lines[d].distinct ? lines[d].a * shares[d] + lines[d].b : 1e300);
    return t;
  }

  // The second plan at a platform configuration: `p`'s shares rebalanced by the measured rates
  // (the closed form for b = 0, often near the answer) when that moves every device's share by a
  // fifth or more; else shares in proportion to 1, 2, 4, ... by measured rate, slowest first (no
  // device keeps an even share: a mean of distinct powers of two is none of them).
  std::vector<double> skewed(const TrainingPoint& p) const {
    const auto& s = p.config.shares;
    auto r = rebalance(devices_, s, p.device_ms);
    bool apart = true;
    for (std::size_t d = 0; d < s.size(); ++d) apart &= s[d] <= 0 || std::fabs(r[d] - s[d]) >= 0.2 * s[d];
    if (apart) return r;
    std::vector<std::size_t> order(s.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto rate = [&](std::size_t d) { return p.device_ms[d] > 0 ? s[d] / p.device_ms[d] : 0.0; };
    std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return rate(x) < rate(y); });
    double weight = 1;
    for (auto d : order) r[d] = s[d] * weight, weight *= 2;
    normalise(r);
    return r;
  }

  std::string describe(const std::vector<Line>& lines, const Prediction& p, const Config& c) const {
    std::ostringstream line;
    line << std::setprecision(4) << "model at fission=" << c.fission << " overlap=" << c.overlap << ":";
    for (std::size_t d = 0; d < lines.size(); ++d) {
      line << (d ? "," : "") << " " << devices_[d].id() << " ";
      if (lines[d].distinct == 0)
        line << "unmeasured";
      else
        line << "t = " << lines[d].a << " * share + " << lines[d].b << " ms";
    }
    line << "; predicts shares " << shares_str(p.shares) << " -> " << std::setprecision(4) << p.ms << " ms";
    return line.str();
  }

  // The model at `c`'s fission and overlap: a first plan (c's shares), a second one skewed so
  // that every device has two shares, then predictions measured until one confirms (the devices
  // finish within the precision of each other, no slower than predicted) or stops moving (a
  // measured plan is modelled within a quarter of the precision of it), or `until` executions
  // are spent. Sets model_plan_; returns the fastest plan measured at this configuration.
  Config model(Config c, std::size_t until) {
    auto here = [&](const Config& x) { return x.fission == c.fission && x.overlap == c.overlap; };
    auto all_working = [&]() -> const TrainingPoint* {  // the last plan here that gave every device work
      for (auto it = points_.rbegin(); it != points_.rend(); ++it)
        if (here(it->config) && std::all_of(it->config.shares.begin(), it->config.shares.end(),
                                             [](double x) { return x > 0; }))
          return &*it;
      return nullptr;
    };
    // Whether some device lacks a model here (no point at its setting), or has one point only
    // and no model at another setting to borrow the shape of.
    auto lacking = [&](bool one_point) {
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        const Line l = fit(d, c);
        if (l.distinct == 0 || (one_point && l.distinct == 1 && !l.borrowed)) return true;
      }
      return false;
    };
    // A first plan where every device works, unless the points here (a screened plan, the
    // devices alone) already give each device a model.
    if (lacking(false) || (devices_.size() > 1 && lacking(true) && !all_working())) {
      if (std::any_of(c.shares.begin(), c.shares.end(), [](double x) { return x <= 0; })) c.shares = even_shares();
      point(c, 1);
    }
    // A new plan costs two runs (see point()).
    if (devices_.size() > 1 && executions_ + 2 <= until && lacking(true)) {
      Config skew = c;
      skew.shares = skewed(*all_working());
      point(skew, 1);
    }
    while (devices_.size() > 1 && executions_ + 2 <= until) {
      std::vector<Line> lines;
      for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, c));
      const Prediction p = predict(lines);
      note(describe(lines, p, c));
      if (p.shares.empty()) break;
      Config next = c;
      next.shares = p.shares;
      // Measured already: a plan here that the models time within a quarter of the precision of
      // the prediction (in time, not in shares: a steep device turns a small share into much time).
      const bool known = std::any_of(points_.begin(), points_.end(), [&](const TrainingPoint& q) {
        return here(q.config) && modelled_ms(lines, q.config.shares) <= p.ms * (1 + o_.precision / 4);
      });
      if (known) break;
      const TrainingPoint q = point(next, 1);
      double lo = 1e300, hi = 0;
      for (std::size_t d = 0; d < devices_.size(); ++d)
        if (next.shares[d] > 0) lo = std::min(lo, q.device_ms[d]), hi = std::max(hi, q.device_ms[d]);
      if (hi <= lo * (1 + o_.precision) && q.time_ms <= p.ms * (1 + o_.precision)) break;
    }
    // The model's plan: the measured plan here nearest to its last prediction; and the scatter
    // of the times about the models, which a measured plan must beat it by.
    if (devices_.size() > 1) {
      std::vector<Line> lines;
      double squares = 0, freedom = 0;
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        lines.push_back(fit(d, c));
        if (lines.back().borrowed) continue;
        squares += lines.back().squares;
        freedom += static_cast<double>(lines.back().freedom);
      }
      // At most twice the precision: on the H100 machine clFFT's times scattered so far about the
      // lines (a plan per new size) that an fft split 1.6x slower than the GPU alone was kept.
      model_margin_ = std::clamp(freedom > 0 ? 2 * std::sqrt(squares / freedom) : 0.0, o_.precision, 2 * o_.precision);
      const Prediction p = predict(lines);
      double nearest = 1e300;
      for (std::size_t i = 0; i < points_.size() && !p.shares.empty(); ++i) {
        if (!here(points_[i].config)) continue;
        double distance = 0;
        for (std::size_t d = 0; d < p.shares.size(); ++d)
          distance = std::max(distance, std::fabs(p.shares[d] - points_[i].config.shares[d]));
        if (distance < nearest) nearest = distance, model_plan_ = i;
      }
    }
    const TrainingPoint* best = nullptr;
    for (const auto& p : points_)
      if (here(p.config) && (!best || p.time_ms < best->time_ms)) best = &p;
    return best->config;
  }

  // The model strategy's training: two plans at the base configuration (even, skewed) give every
  // device a model; the other overlap levels and fissions are run at the split those models
  // predict, as many as the runs allow beside a last prediction — the deepest overlap level, one
  // fission, the shallowest level, then the rest. The full screening (three overlap levels, up to
  // five fissions) does not fit beside the model, every plan costing two runs (see point()). Each
  // screened run gives the device it changes a model at that level (borrowed, rescaled), and the
  // other devices a point near their predicted share; the configuration whose models predict
  // the fastest split leads, and its prediction is run with the runs left.
  void model_training(const Config& base) {
    // Each device alone is measured last, at the model's configuration, with runs kept for it: on
    // the H100 machine the models alone chose CPU+GPU splits of N-Body 65x slower than the GPU
    // alone (the devices of a tree whose partitions meet every iteration finish together, so
    // their times say nothing of their own speeds), and segmentation 8 MB 2.4x slower.
    const std::size_t alone = groups_.size() > 1 ? 2 * groups_.size() : 0;
    const std::size_t total = o_.max_executions;
    o_.max_executions = total > 2 * alone ? total - alone : total;
    try {
      model_search(base);
    } catch (const Budget&) {
    }
    o_.max_executions = total;
    singles(best_point().config, /*deepest_overlap=*/false);
  }

  void model_search(const Config& base) {
    const std::size_t budget = o_.max_executions;
    std::vector<unsigned> overlaps;  // the deepest, the shallowest, then the rest
    for (std::size_t i = 0; i < overlaps_.size(); ++i) {
      const unsigned ov = i == 0 ? overlaps_.back() : i == 1 ? overlaps_.front() : overlaps_[overlaps_.size() - i];
      if (ov != base.overlap && std::find(overlaps.begin(), overlaps.end(), ov) == overlaps.end())
        overlaps.push_back(ov);
    }
    std::vector<std::string> fissions;
    for (const auto& f : fissions_)
      if (f != base.fission) fissions.push_back(f);
    const bool screening = devices_.size() > 1 && !(overlaps.empty() && fissions.empty());
    model(base, screening ? std::min<std::size_t>(budget, 4) : budget);
    if (!screening) return;
    auto predicted = [&](const Config& c) {
      std::vector<Line> lines;
      for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, c));
      return predict(lines);
    };
    Config at = base;
    {
      std::vector<Line> lines;
      for (std::size_t d = 0; d < devices_.size(); ++d) lines.push_back(fit(d, base));
      const Prediction p = predict(lines);
      note(describe(lines, p, base));
      at.shares = p.shares;
    }
    if (at.shares.empty()) return;
    bool gpu_work = false, cpu_work = false;
    for (const auto& d : devices_) (d.discrete ? gpu_work : cpu_work) |= at.shares[d.index] > 0;
    if (!gpu_work) overlaps.clear();
    if (!cpu_work) fissions.clear();
    std::size_t levels = (budget - std::min(budget, executions_ + 2)) / 2;
    std::vector<Config> screened;
    std::size_t o = 0, f = 0;
    while (levels > 0 && o + f < overlaps.size() + fissions.size()) {
      Config c = at;
      // Interleaved: overlap, fission, overlap, then the rest of each.
      if (f < fissions.size() && (o == overlaps.size() || (o == 1 && f == 0)))
        c.fission = fissions[f++];
      else
        c.overlap = overlaps[o++];
      screened.push_back(c);
      --levels;
    }
    if (!screened.empty()) {
      std::ostringstream line;
      line << "model: screening at the predicted split " << shares_str(at.shares) << ":";
      for (const auto& c : screened)
        line << (c.overlap != at.overlap ? " overlap=" + std::to_string(c.overlap) : " fission=" + c.fission);
      line << " (what the budget of " << budget << " executions leaves room for)";
      note(line.str());
    }
    for (const auto& c : screened) point(c);
    Config leader = base;
    double leader_ms = predicted(base).ms;
    for (const auto& c : screened)
      if (const double ms = predicted(c).ms; ms < leader_ms) leader = c, leader_ms = ms;
    model(leader, budget);
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
  // The model strategy's plan (an index into points_): the result unless a measured plan beat it
  // by more than model_margin_. With a run or two a point the fastest plan measured is often only
  // the luckiest, while the model's plan rests on the fit over every point.
  std::optional<std::size_t> model_plan_;
  double model_margin_ = 0;  // a fraction of its time: the precision, or twice the fits' scatter
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
