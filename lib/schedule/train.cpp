// schedule/train.cpp — the training search: its options, the flow of a training (full, a derived
// plan's check, one device's levels, the balancer's level 2), the measured points and the choice
// of the plan. The searches themselves: train_search.cpp and train_model.cpp.
#include "schedule/train.hpp"

#include "schedule/train_search.hpp"

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

std::string shares_str(const std::vector<double>& s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? " " : "") << s[i];
  o << "]";
  return o.str();
}

Search::Search(const std::vector<DeviceInfo>& devices, const Measure& measure, const Measure& untimed,
               const TrainingOptions& o, const Progress& p)
    : devices_(devices), measure_(measure), untimed_(untimed), o_(o), progress_(p), groups_(device_groups(devices)) {
  for (const auto& d : devices_) {
    if (!d.discrete && fissions_.empty())
      for (const auto& f : d.fission_configs) fissions_.push_back(f.name);
    if (d.discrete && overlaps_.empty()) overlaps_ = d.overlap_levels;
  }
  if (fissions_.empty()) fissions_ = {"none"};
  if (overlaps_.empty()) overlaps_ = {1};
}

TrainingResult Search::run(const std::optional<Config>& start) {
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
  const bool model = o_.strategy == Strategy::model && !o_.screen_only;
  // The dynamic schedule's point (dynamic_point()) is measured after the search, within the
  // budget: its runs are kept from the search.
  const bool dynamic = o_.dynamic && !o_.screen_only && !o_.fixed_platform && !o_.alone && devices_.size() > 1;
  const std::size_t per_point = model ? 2 : std::max(1u, o_.quality);
  // (Its weights come from each device alone, which the flows measure anyway; where they did
  // not, from the fastest split, rebalanced.)
  const std::size_t dynamic_runs = dynamic ? std::min<std::size_t>(o_.max_executions / 2, per_point) : 0;
  // The two leaders run once more each before the choice (decide()), but where the budget is the
  // caller's few runs (the balancer's level 2) or the model strategy's own ten.
  const bool own_model_budget = model && !o_.exhaustive && !o_.fixed_platform;
  const std::size_t finalists = o_.fixed_platform || own_model_budget ? 0 : 2;
  // With the finalists' runs, one for a device alone timed against the splits' evidence, measured
  // again (recheck_alone; not in a pinned device's screening, which runs no split).
  const bool recheck = finalists && !o_.alone;
  // And in a derived plan's check, which measures each point once, each group's fastest plan
  // alone twice more, a leader or not (decide(): a median of three).
  const std::size_t alone_again = recheck && o_.screen_only && groups_.size() > 1 ? 2 * groups_.size() : 0;
  const std::size_t final_runs = finalists * (model ? 2 : 1) + (recheck ? 1 : 0) + alone_again;
  if (o_.alone) {
    alone(*o_.alone, final_runs);
  } else if (o_.exhaustive) {
    within(dynamic_runs + final_runs, [&] {
      for (const auto& f : fissions_)
        for (auto ov : overlaps_) {
          Config c = base;
          c.fission = f;
          c.overlap = ov;
          strategy(c);
          singles(c, false);
        }
    });
  } else if (o_.screen_only) {
    check(base, final_runs);
  } else if (model && !o_.fixed_platform) {
    model_training(base, dynamic_runs + final_runs);
  } else if (o_.fixed_platform) {
    // The balancer's level 2 comes when the machine changed under a plan: each device alone
    // first, so that a small budget still sees whether one device should now take it all.
    within(dynamic_runs + final_runs, [&] {
      singles(base, false);
      strategy(base);
      singles(best_point().config, false);
    });
  } else {
    full(base, dynamic_runs + final_runs);
  }
  if (dynamic) within(final_runs, [&] { dynamic_point(); });
  if (recheck) within(final_runs - 1, [&] { recheck_alone(); });
  const auto [best, time_ms] = decide(finalists, alone_again > 0);
  if (stopped_) note("stopped: the budget of " + std::to_string(o_.max_executions) + " executions is spent");
  TrainingResult r;
  r.best = best;
  r.time_ms = time_ms;
  r.executions = executions_;
  r.points = points_;
  r.strategy = std::string(to_string(o_.strategy));
  r.quality = model ? 2 : std::max(1u, o_.quality);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// Distribution first, on the base platform configuration; then one dimension at a time at that
// distribution, and the distribution again at the leader; then each group alone at every level of
// its own dimension (kept from the search: a search that spent the budget must still see whether
// one device alone is best, as filter 1024^2 and fft 512 MB were on the H100 machine).
void Search::full(const Config& base, std::size_t reserved) {
  // Each group alone at the search's configuration is kept whatever the budget; its other levels
  // take at most half of what the search would have (a small budget, --quick's 12, still
  // searches).
  const std::size_t essential = groups_.size() > 1 ? 2 * groups_.size() : 0;  // each with its untimed run
  const std::size_t levels = singles_cost() - std::min(singles_cost(), essential);
  const std::size_t left = o_.max_executions - std::min(o_.max_executions, reserved + essential);
  within(reserved + essential + std::min(levels, left / 2), [&] {
    const Config best = strategy(base);
    const Config leader = screen_platform(best_point());
    if (leader.fission != best.fission || leader.overlap != best.overlap) strategy(leader);
  });
  within(reserved, [&] { singles(best_point().config, true); });
}

// A derived plan: is its platform configuration right for this input, and its distribution
// near? Screen, one rebalancing step, each device alone; one run a point (the check is for gross
// mismatches, such as an overlap level 2x off; the online balancer refines the distribution).
// Each device alone at the leader's configuration is kept from the screening (a fission's first
// use costs a run more: on the H100 machine the screening spent the whole check before them), and
// at its other levels where runs are left.
void Search::check(const Config& base, std::size_t reserved) {
  o_.quality = 1;
  const std::size_t alone_runs = groups_.size() > 1 ? 2 * groups_.size() : 0;  // each with its untimed run
  within(reserved + alone_runs, [&] {
    const TrainingPoint first = point(base);
    const Config leader = screen_platform(first);
    // The leader's screening run (decide() measures the leaders again): its runs go to the
    // rebalancing step.
    TrainingPoint at = first;
    for (const auto& p : points_)
      if (p.config == leader) at = p;
    if (!balanced(at)) {
      Config c = at.config;
      c.shares = rebalance(devices_, c.shares, at.device_ms);
      point(c);
    }
  });
  within(reserved, [&] {
    // The levels the cost model predicts each device alone fastest at first: the derived plan's
    // own may be a device's slow one (saxpy 50M on the H200 machine: the split's fission made
    // the CPU alone 10 ms, 5.7 at its best, and the split was kept).
    for (const Config& level : o_.alone_levels)
      if (const Config c = without_idle_levels(level, devices_); first_alone(c)) point(c, 1);
    singles(best_point().config, true);
  });
}

// A run pinned to one device (RunOptions::device) with nothing known of it: that device alone at
// each level of its own dimension (its overlap levels, or its fissions), one run each.
void Search::alone(std::size_t device, std::size_t reserved) {
  o_.quality = 1;
  const DeviceInfo& info = devices_.at(device);
  Config c = Config::single(device, devices_.size());
  std::vector<Config> levels;
  if (info.discrete) {
    for (auto ov : info.overlap_levels.empty() ? std::vector<unsigned>{1} : info.overlap_levels)
      levels.push_back(c), levels.back().overlap = ov;
  } else {
    levels.push_back(c);
    for (const auto& f : info.fission_configs)
      if (f.name != c.fission) levels.push_back(c), levels.back().fission = f.name;
  }
  within(reserved, [&] {
    for (const auto& l : levels) point(l);
  });
}

// A device (group) alone does its whole input no slower than its own time at a share s of a split
// over s: alone its fixed costs are paid once, and nothing contends with it. A single run timed
// far above that bound was a noisy one (on the H100 machine saxpy 10M's CPU alone ran 4.06 ms in
// training, 1.43 in every other run, and a split 1.4x slower than it was kept). Such a point is
// measured again, once, and the faster of its runs stands for the plan: a second run as slow or
// slower says the first was no outlier (on the H200 machine saxpy 10M's CPU alone ran 1.42 ms,
// was suspected, ran 1.96 once more, and the 1.96 that replaced it lost to a split whose runs'
// median was 1.78; in the rounds after the split ran 2.00, the CPU alone 1.46). The one furthest
// above its bound, one a training.
void Search::recheck_alone() {
  struct Suspect {
    std::size_t point;
    double excess;
  };
  std::optional<Suspect> worst;
  for (std::size_t g = 0; g < groups_.size() && groups_.size() > 1; ++g) {
    double bound = 1e300;
    std::optional<std::size_t> alone;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const TrainingPoint& p = points_[i];
      const auto [s, t] = group_load(p, g);  // (a plan's shares add up to 1)
      if (s > 0 && s < 1 - 1e-9 && t > 0 && p.config.schedule == "static") bound = std::min(bound, t / s);
      if (s >= 1 - 1e-9 && (!alone || p.time_ms < points_[*alone].time_ms)) alone = i;
    }
    if (!alone || bound >= 1e300) continue;
    const double excess = points_[*alone].time_ms / (bound * (1 + 2 * o_.precision));
    if (excess > 1 && (!worst || excess > worst->excess)) worst = Suspect{*alone, excess};
  }
  if (!worst) return;
  const Config c = points_[worst->point].config;
  note("measuring " + c.str() + " again: its " + std::to_string(points_[worst->point].time_ms) +
       " ms exceed what the splits' own device times bound it by");
  // One run, as the point had (measured before: no untimed run; point() throws Budget where
  // none is left); then the plan keeps only the faster of the suspect and the new run.
  const TrainingPoint suspect = points_[worst->point];
  const TrainingPoint again = point(c, 1);
  const TrainingPoint kept = again.time_ms < suspect.time_ms ? again : suspect;
  std::erase_if(points_, [&](const TrainingPoint& p) { return p.config == c; });
  points_.push_back(kept);
}

std::pair<Config, double> Search::decide(std::size_t finalists, bool alone_again) {
  within(0, [&] {
    const auto leaders = ranked();
    std::vector<std::pair<Config, unsigned>> again;  // plan, runs
    for (std::size_t i = 0; i < std::min(finalists, leaders.size()); ++i) again.emplace_back(leaders[i].first, 1);
    // Each group's fastest plan alone too, twice (a median of three): one run a point leaves a
    // device alone behind on one unlucky run (on the H200 machine segmentation 1 MB's CPU alone
    // ran 0.40 ms once in a derived plan's check, 0.21-0.33 in the rounds after, and the GPU
    // alone at 0.30 was kept).
    std::vector<bool> seen(groups_.size(), false);
    for (const auto& [c, ms] : leaders) {
      const auto g = alone_again ? group_of(c) : std::nullopt;
      if (!g || seen[*g]) continue;
      seen[*g] = true;
      auto it = std::find_if(again.begin(), again.end(), [&](const auto& a) { return a.first == c; });
      if (it == again.end()) again.emplace_back(c, 2);
      else it->second = 2;  // a leader too: its one run more would leave a median of two
    }
    for (const auto& [c, runs] : again)
      for (unsigned i = 0; i < runs; ++i) point(c, 1);
  });
  const auto r = ranked();
  // The model strategy's splits at one platform configuration are measured best by the fit over
  // all of them: with two runs a point and 10% noise the fastest of neighbouring splits is only
  // the luckiest (unit.TrainModel.LandsNearTheOptimumWithTenPercentNoise). So the model's plan
  // stands for those within its margin; never against a device alone or another level.
  auto split = [](const Config& c) { return working_devices(c) > 1; };
  // A derived plan's check measures most points once: a split over groups it measured within the
  // precision of a group alone is a tie, and the group alone has no partner to wait for (on the
  // H200 machine segmentation 60 MB kept a split 0.7% ahead of the CPU alone in its check, 1.45x
  // the GPU alone in the rounds after).
  if (o_.screen_only && groups_.size() > 1 && split(r.front().first) && !group_of(r.front().first))
    for (const auto& [c, ms] : r)
      if (group_of(c) && ms <= r.front().second * (1 + o_.precision)) return {c, ms};
  if (model_plan_ && split(r.front().first) && r.front().first.fission == model_plan_->fission &&
      r.front().first.overlap == model_plan_->overlap && r.front().first.schedule == model_plan_->schedule)
    for (const auto& [c, ms] : r)
      if (c == *model_plan_ && ms <= r.front().second * (1 + model_margin_)) return {c, ms};
  return r.front();
}

std::optional<std::size_t> Search::group_of(const Config& c) const {
  if (c.schedule != "static" || !c.items.empty() || groups_.size() < 2) return std::nullopt;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    double s = 0;
    for (auto d : groups_[g]) s += d < c.shares.size() ? c.shares[d] : 0;
    if (s >= 1 - 1e-9) return g;
  }
  return std::nullopt;
}

bool Search::first_alone(const Config& c) const {
  return groups_.size() > 1 && alone_plan(c, devices_) &&
         std::none_of(points_.begin(), points_.end(), [&](const TrainingPoint& p) { return p.config == c; });
}

std::vector<double> Search::even_shares() const {
  std::vector<double> s(devices_.size(), 0.0);
  for (const auto& g : groups_)
    for (auto d : g) s[d] = 1.0 / groups_.size() / g.size();
  return s;
}

void Search::normalise(std::vector<double>& s) {
  double sum = std::accumulate(s.begin(), s.end(), 0.0);
  for (auto& x : s) x /= sum;
}

void Search::note(const std::string& line) {
  if (progress_) progress_(line);
}

std::vector<std::pair<Config, double>> Search::ranked() const {
  std::vector<std::pair<Config, std::vector<double>>> times;
  for (const auto& p : points_) {
    auto it = std::find_if(times.begin(), times.end(), [&](const auto& e) { return e.first == p.config; });
    if (it == times.end()) times.emplace_back(p.config, std::vector<double>{p.time_ms});
    else it->second.push_back(p.time_ms);
  }
  std::vector<std::pair<Config, double>> out;
  for (auto& [c, t] : times) out.emplace_back(c, median(t));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

const TrainingPoint& Search::best_point() const {
  return *std::min_element(points_.begin(), points_.end(),
                           [](const TrainingPoint& a, const TrainingPoint& b) { return a.time_ms < b.time_ms; });
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
  if (c.schedule != "static" || !c.items.empty()) return std::nullopt;
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

// Measures a config `quality` times (a first use of a fission configuration gets one more,
// untimed run: it builds programs for the new sub-devices). A device alone measured once and
// never run before gets that untimed run too: its one run would time its first-run costs (its
// device buffers allocated at new sizes, PoCL's kernels built for them) against splits whose
// medians leave theirs out and finalists measured again. On the H100 machine the GPU alone ran
// 1.3 ms in training where it takes 0.62, and filter 1024^2 kept a split at half its speed.
const TrainingPoint& Search::point(const Config& asked, unsigned quality) {
  const Config c = without_idle_levels(asked, devices_);
  if (quality == 0) quality = std::max(1u, o_.quality);
  bool warm = warmed_.insert(c.fission).second || (quality == 1 && first_alone(c));
  // The model strategy runs every plan twice and the faster run counts: a plan's first run may
  // allocate its device buffers (the pool matches exact sizes), build a new fission's programs
  // or, on PoCL, kernels for its sizes, and the faster of two also halves interference.
  const bool fastest = o_.strategy == Strategy::model && !o_.screen_only;
  if (fastest) quality = 2, warm = false;
  if (!points_.empty() && executions_ + quality + (warm ? 1 : 0) > o_.max_executions) throw Budget{};
  if (warm) {
    untimed_(c);
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

TrainingResult train(const std::vector<DeviceInfo>& devices, const Measure& measure, const TrainingOptions& options,
                     const Progress& progress, const std::optional<Config>& start, const Measure& untimed) {
  if (devices.empty()) throw_error(errc::no_device, "training needs at least one device");
  if (options.alone && *options.alone >= devices.size())
    throw_error(errc::invalid_argument, "training one device alone: device " + std::to_string(*options.alone) +
                                            " of " + std::to_string(devices.size()));
  Search search(devices, measure, untimed ? untimed : measure, options, progress);
  return search.run(start);
}

}  // namespace sinew::detail
