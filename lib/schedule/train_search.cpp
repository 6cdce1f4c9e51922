// schedule/train_search.cpp — the state of a search over device shares and platform levels:
// where it starts, how a point is measured, and the device groups work moves between.
#include "schedule/train_search.hpp"

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"

#include <algorithm>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

PlanSearch::PlanSearch(const TrainingRequest& request, std::size_t executions, MeasuringRule rule)
    : devices_(request.devices),
      measure_(request.measure),
      untimed_(request.untimed),
      options_(request.options),
      rule_(rule),
      quality_(request.options.quality),
      ledger_(executions, request.progress, time_budget(request.options)),
      groups_(device_groups(request.devices)) {
  for (const auto& d : devices_) {
    if (!d.discrete && fissions_.empty())
      for (const auto& f : d.fission_configs) fissions_.push_back(f.name);
    if (d.discrete && overlaps_.empty()) overlaps_ = d.overlap_levels;
  }
  if (fissions_.empty()) fissions_ = {"none"};
  if (overlaps_.empty()) overlaps_ = {1};
}

Config PlanSearch::starting_plan(const std::optional<Config>& start, bool pin_levels, bool keep_shares) {
  Config base;
  base.shares = even_shares();
  base.fission = "none";
  const unsigned preferred = tuning().start_overlap;
  const bool offered = std::find(overlaps_.begin(), overlaps_.end(), preferred) != overlaps_.end();
  base.overlap = offered ? preferred : overlaps_.front();
  if (!start || start->shares.size() != devices_.size()) return base;
  base = *start;
  if (pin_levels) {
    fissions_ = {base.fission};
    overlaps_ = {base.overlap};
  }
  if (std::find(fissions_.begin(), fissions_.end(), base.fission) == fissions_.end()) base.fission = "none";
  if (std::find(overlaps_.begin(), overlaps_.end(), base.overlap) == overlaps_.end()) base.overlap = overlaps_.front();
  // A start with idle groups gives the search nothing to measure them by: keep a little (a
  // derived plan's check measures the plan as it is).
  for (const auto& g : keep_shares ? std::vector<std::vector<std::size_t>>{} : groups_) {
    double s = 0;
    for (auto d : g) s += base.shares[d];
    if (s <= 0)
      for (auto d : g) base.shares[d] = tuning().idle_group_share / g.size();
  }
  normalise(base.shares);
  return base;
}

unsigned PlanSearch::runs_per_point(unsigned asked) const {
  if (rule_.runs) return rule_.runs;
  return asked ? asked : std::max(1u, quality_);
}

const TrainingPoint* PlanSearch::measure(const Config& asked, unsigned runs) {
  const Config c = without_idle_levels(asked, devices_);
  if (stopped() || estimated_too_slow(c)) return nullptr;
  return measure_now(c, runs);
}

const TrainingPoint* PlanSearch::measure_now(const Config& asked, unsigned runs, bool exactly) {
  const Config c = without_idle_levels(asked, devices_);
  if (runs == 0) runs = std::max(1u, quality_);
  // A fission's first use builds programs for its sub-devices; a device alone measured once
  // would time its first-run costs against splits whose medians leave theirs out (docs/decisions/042).
  bool untimed_first = warmed_.insert(c.fission).second || (runs == 1 && unmeasured_alone(c));
  if (rule_.fastest_run_counts) untimed_first = false;
  if (!exactly) runs = runs_per_point(runs);
  // Each run takes about the plan's measured time, and none less than the fastest plan's or what
  // the devices' points bound it by (expected_ms).
  if (!ledger_.take(runs + (untimed_first ? 1 : 0), expected_ms(c))) return nullptr;
  const bool first_of_plan = !untimed_first && !ledger_.ran(c);
  std::vector<double> times;
  std::vector<std::vector<double>> device(devices_.size());
  Config ran = c;
  auto run_once = [&] {
    const Measurement m = ledger_.run(measure_, c);
    if (!m.ran.shares.empty()) ran = m.ran;
    if (m.units) units_ = m.units;
    times.push_back(m.time_ms);
    for (std::size_t d = 0; d < devices_.size(); ++d) device[d].push_back(d < m.device_ms.size() ? m.device_ms[d] : 0);
  };
  try {
    if (untimed_first) ledger_.run(untimed_, c);
    for (unsigned r = 0; r < runs; ++r) run_once();
    if (runs == 1 && first_of_plan && first_run_suspect(times.front())) {
      // The plan's only run was its first: where it is slow enough to hold kernels compiled at
      // their first launch (docs/decisions/159), a second run stands for it (the first's excess
      // counts as builds in the ledger).
      times.clear();
      for (auto& v : device) v.clear();
      run_once();
    }
  } catch (const MemoryShortfall& shortfall) {
    // No device with a share holds it: not a point, and the end of the step that asked for it
    // (the training's first point has nothing to stand in for it: its error is the training's).
    if (ledger_.points().empty()) throw;
    note("fission=" + c.fission + " overlap=" + std::to_string(c.overlap) + " shares " + shares_str(c.shares) +
         ": not run, " + devices_.at(shortfall.device_index).id() + " cannot hold its share");
    return nullptr;
  }
  auto summary = [&](const std::vector<double>& v) {
    return rule_.fastest_run_counts ? *std::min_element(v.begin(), v.end()) : median(v);
  };
  // The point is the plan as it ran: the one asked, or where a device's memory could not hold
  // its share, the one fitted to it (the progress line and the trained plan say what ran).
  TrainingPoint p{ran, summary(times), {}};
  for (auto& v : device) p.device_ms.push_back(summary(v));
  const TrainingPoint& added = ledger_.add(std::move(p));
  note(point_line(added));
  return &added;
}

bool PlanSearch::first_run_suspect(double time_ms) {
  if (ledger_.points().empty() || time_ms < tuning().slow_plan_factor * ledger_.fastest().time_ms) return false;
  return ledger_.affords(1) && ledger_.take(1, ledger_.fastest().time_ms);
}

std::string PlanSearch::point_line(const TrainingPoint& p) const {
  std::ostringstream line;
  const TrainingPoint& best = ledger_.fastest();
  // What a terminal's one line shows first: the budgets spent and the best time so far.
  line << std::fixed << std::setprecision(3) << "[" << ledger_.status() << "] best " << best.time_ms
       << " ms; fission=" << p.config.fission << " overlap=" << p.config.overlap << " shares "
       << shares_str(p.config.shares) << (p.config.schedule == "static" ? "" : " schedule=" + p.config.schedule)
       << " -> " << p.time_ms << " ms; best plan " << best.config.str();
  return line.str();
}

std::vector<double> PlanSearch::even_shares() const {
  std::vector<double> s(devices_.size(), 0.0);
  for (const auto& g : groups_)
    for (auto d : g) s[d] = 1.0 / groups_.size() / g.size();
  return s;
}

void PlanSearch::normalise(std::vector<double>& s) {
  double sum = std::accumulate(s.begin(), s.end(), 0.0);
  for (auto& x : s) x /= sum;
}

Config PlanSearch::group_alone(const Config& c, std::size_t g) const {
  Config one = c;
  std::fill(one.shares.begin(), one.shares.end(), 0.0);
  double inner = 0;
  for (auto d : groups_[g]) inner += std::max(c.shares[d], 1e-9);
  for (auto d : groups_[g]) one.shares[d] = std::max(c.shares[d], 1e-9) / inner;
  return without_idle_levels(one, devices_);
}

std::optional<std::size_t> PlanSearch::group_of(const Config& c) const {
  if (!places_shares(c) || !c.items.empty() || groups_.size() < 2) return std::nullopt;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    double s = 0;
    for (auto d : groups_[g]) s += d < c.shares.size() ? c.shares[d] : 0;
    if (s >= 1 - 1e-9) return g;
  }
  return std::nullopt;
}

bool PlanSearch::unmeasured_alone(const Config& c) const {
  return groups_.size() > 1 && alone_plan(c, devices_) && !ledger_.measured(c);
}

bool PlanSearch::discrete_group(std::size_t g) const {
  return std::all_of(groups_[g].begin(), groups_[g].end(), [&](std::size_t d) { return devices_[d].discrete; });
}

std::vector<Config> PlanSearch::group_levels(const Config& c, std::size_t g) const {
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

std::pair<double, double> PlanSearch::group_load(const TrainingPoint& p, std::size_t g) const {
  double share = 0, t = 0;
  for (auto d : groups_[g]) {
    share += p.config.shares[d];
    if (p.config.shares[d] > 0 && d < p.device_ms.size()) t = std::max(t, p.device_ms[d]);
  }
  return {share, t};
}

bool PlanSearch::balanced(const TrainingPoint& p) const {
  double lo = 1e300, hi = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto [s, t] = group_load(p, g);
    if (s <= 0) continue;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  return hi <= 0 || hi <= lo * (1 + options_.precision);
}

std::optional<std::size_t> PlanSearch::cpu_group() const {
  const bool other_kinds =
      std::any_of(devices_.begin(), devices_.end(), [](const DeviceInfo& d) { return d.kind != DeviceKind::cpu; });
  std::optional<std::size_t> cpu;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (devices_[groups_[g].front()].kind == DeviceKind::cpu && groups_.size() > 1 && other_kinds) cpu = g;
  return cpu;
}

TrainingResult PlanSearch::result(std::string_view trainer, const std::pair<Config, double>& best) const {
  TrainingResult r;
  r.best = best.first;
  r.time_ms = best.second;
  r.strategy = std::string(trainer);
  r.quality = runs_per_point();
  ledger_.into(r);
  return r;
}

}  // namespace sinew::detail
