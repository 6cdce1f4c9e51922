// schedule/train_probe.cpp — slow devices measured on a little of the data. A training's first
// plans give each device group but one a small share (a probe), so that no device is measured
// with a large share before its cost is known; and a plan that the devices' measured costs put
// far behind the fastest measured plan is not run (PlanSearch::measure asks estimated_too_slow).
// A device's cost is a line fitted to its measured points (schedule/model/linear_cost.hpp); where
// the plan would extrapolate it far beyond what was measured, the device is first measured at the
// largest share its line allows in the time of a few fastest plans, so that a cost that is not
// linear shows before the plan is dropped. At a level a device was not measured at (another
// fission, another overlap level), its own measured times at other levels still bound its time
// from below (device_floor): a device that far behind is not probed there, and a measurement's
// runs are expected at no less than that bound when the time budget is asked (expected_ms).
// docs/decisions/111-113, 173
#include "schedule/train_search.hpp"

#include "decompose/schedule_policy.hpp"
#include "schedule/model/linear_cost.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sinew::detail {

namespace {

// Times that do not grow with the share are noise over a fixed cost: nearly free work, a
// thousandth of the mean time per whole input (the model strategy's fits take the same).
constexpr double kNearlyFree = 1e-3;

// The group that carries the rest of the work in the probe: the one with the most discrete
// devices' compute units (GPUs are the fast devices far more often than not), else the first.
std::size_t probe_carrier(const PlanSearch& s) {
  const auto& groups = s.groups();
  std::size_t carrier = 0;
  double most = -1;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    double weight = 0;
    for (auto d : groups[g])
      if (s.devices()[d].discrete) weight += 1.0 + s.devices()[d].compute_units;
    if (weight > most) most = weight, carrier = g;
  }
  return carrier;
}

// A static plan of shares: the plans a device's cost is read from.
bool static_plan(const TrainingPoint& p) { return places_shares(p.config) && p.config.items.empty(); }

// Whether plans a and b run device d alike: at one overlap level (a discrete device) or one
// fission (a CPU).
bool same_setting_of(const DeviceInfo& d, const Config& a, const Config& b) {
  return d.discrete ? a.overlap == b.overlap : a.fission == b.fission;
}

// "overlap=2" or "fission=none": device d's level in plan c.
std::string setting_of(const DeviceInfo& d, const Config& c) {
  return d.discrete ? "overlap=" + std::to_string(c.overlap) : "fission=" + c.fission;
}

// The sub-devices (partitions) a CPU runs as at `fission`: 1 where the device does not offer it.
std::size_t sub_devices(const DeviceInfo& d, const std::string& fission) {
  for (const auto& f : d.fission_configs)
    if (f.name == fission) return f.sub_devices();
  return 1;
}

// Devices of one model (kind, name, compute units, driven alike): expected as fast as each other.
bool same_model(const DeviceInfo& a, const DeviceInfo& b) {
  return a.kind == b.kind && a.name == b.name && a.compute_units == b.compute_units && a.discrete == b.discrete;
}

}  // namespace

// Not where every device is of one model (several identical GPUs): none is expected slow, and a
// probe share measures mostly a device's fixed costs (a tree exchanging halos pays them on every
// iteration), which would rebalance its identical partner's share away; the search starts from
// the even split (docs/decisions/180).
bool PlanSearch::probes_first(const TrainingRequest& request) const {
  const bool one_model = std::all_of(devices_.begin(), devices_.end(),
                                     [&](const DeviceInfo& d) { return same_model(d, devices_.front()); });
  return options_.purpose == TrainingPurpose::train && !options_.exhaustive && groups_.size() > 1 && !one_model &&
         tuning().probe_share > 0 && !(request.start && request.start->shares.size() == devices_.size());
}

// The probe (each group but the carrier at the probe share) gives each device a point: its rate,
// and its fixed cost with the next share it is measured at. The carrier alone is measured next:
// it is the probe's plan without its small shares, the plan a probe that found the others slow
// expects fastest, and a time budget may end the search before the phase of each group alone.
// The search starts from its own plan where the probe's rates put that plan within reach of the
// probe, else from the split those rates give.
void PlanSearch::probe_groups(Config& base) {
  const std::size_t carrier = probe_carrier(*this);
  const double share = tuning().probe_share;
  Config probe = base;
  double given = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (auto d : groups_[g])
      if (g != carrier) given += probe.shares[d] = share / static_cast<double>(groups_[g].size());
  for (auto d : groups_[carrier]) probe.shares[d] = (1 - given) / static_cast<double>(groups_[carrier].size());
  note("probing each device on a little of the data (" + shares_str(probe.shares) + ") before larger shares");
  const TrainingPoint* measured = measure_now(probe, 1, true);
  if (!measured) return;
  const TrainingPoint point = *measured;
  measure_now(group_alone(probe, carrier), 1);
  if (estimated_behind(base)) {
    base.shares = rebalance(devices_, point.config.shares, point.device_ms);
    note("starting from the split the probe's rates give: " + shares_str(base.shares));
  }
}

// Device d's points: (share, its time) of every static plan that gave it work, at `c`'s setting of
// d (its overlap level or fission) where it has any there, else at every setting; `anywhere`, when
// given, gets those at every setting.
std::vector<CostPoint> PlanSearch::device_points(std::size_t d, const Config& c, bool& same_setting,
                                                 std::vector<CostPoint>* every_setting) const {
  std::vector<CostPoint> here, anywhere;
  for (const auto& p : ledger_.points()) {
    if (!places_shares(p.config) || !p.config.items.empty() || d >= p.device_ms.size()) continue;
    const double share = p.config.shares[d];
    if (share <= 0 || p.device_ms[d] <= 0) continue;
    anywhere.push_back({.units = share, .ms = p.device_ms[d]});
    if (same_setting_of(devices_[d], p.config, c)) here.push_back(anywhere.back());
  }
  same_setting = !here.empty();
  if (every_setting) *every_setting = anywhere;
  return same_setting ? here : anywhere;
}

// What device d's points say of it at its share of `c`, against `bound` (the time at which a
// plan counts as too slow): fine, too slow (with the time its points put it at, at least), or
// unsure (then `confirm` is the share to measure it at first).
PlanSearch::DeviceVerdict PlanSearch::device_verdict(std::size_t d, const Config& c, double bound) const {
  bool same_setting = false;
  std::vector<CostPoint> anywhere;
  const std::vector<CostPoint> points = device_points(d, c, same_setting, &anywhere);
  const double share = c.shares[d];
  // Measured: at least as much work ran below the bound (at any level: a level does not change a
  // device's speed threefold), so this plan's does too, whatever a fit through noisier points says.
  for (const auto& p : anywhere)
    if (p.units >= share && p.ms < bound) return {};
  if (points.empty()) {  // never measured: probed first, unless the plan gives it no more than that
    const double probe = tuning().probe_share;
    return {.verdict = share > 2 * probe ? Verdict::unsure : Verdict::fine, .confirm = probe};
  }
  // Its own times at any level bound its time here from below: no probe at this level can find
  // it fast (docs/decisions/173).
  if (const DeviceFloor floor = device_floor(d, c); floor.ms >= bound) {
    const Config& from = floor.from->config;
    return {.verdict = Verdict::too_slow, .ms = floor.ms,
            .basis = "its run on share " + shares_str({from.shares[d]}) + " at " + setting_of(devices_[d], from)};
  }
  // Measured: at this setting, no more work than the plan gives it already took that long (a
  // device's time does not fall as its work grows).
  for (const auto& p : points)
    if (same_setting && p.units <= share && p.ms >= bound)
      return {.verdict = Verdict::too_slow, .ms = p.ms,
              .basis = "its run on share " + shares_str({p.units}) + " at " + setting_of(devices_[d], c)};
  const LinearCost line = fit_positive(points, kNearlyFree);
  if (line.at(share) < bound) return {};
  double largest = 0;
  for (const auto& p : points) largest = std::max(largest, p.units);
  if (distinct_units(points) >= 2 && share <= tuning().extrapolation_limit * largest)
    return {.verdict = Verdict::too_slow, .ms = line.at(share),
            .basis = "its cost fitted to " + std::to_string(points.size()) + " points" +
                     (same_setting ? " at " + setting_of(devices_[d], c) : " at its other levels")};
  // Measured first at the share its line gives the bound (a run of the plan's bound at most), or,
  // where its line puts that below a share it was measured at faster (a cost that is not linear),
  // at twice its largest share at this setting; where that is half of the plan or more, the plan
  // runs (at most about twice the bound).
  const double at_bound = line.ms_per_unit > 0 ? (bound - line.fixed_ms) / line.ms_per_unit : share;
  const double confirm = at_bound > largest || !same_setting ? at_bound : 2 * largest;
  return {.verdict = confirm > 0 && confirm < share / 2 ? Verdict::unsure : Verdict::fine, .confirm = confirm};
}

// A device's time in a split is its own where every other working device is known to take less,
// by more than the precision, at no less work at its setting there (in that point or another: a
// device's time does not fall as its work grows). A tree whose partitions meet every iteration
// gives every device of a split the slowest one's time, within noise: only the slowest one's is
// its own, what its partition costs the plan.
bool PlanSearch::own_time(const TrainingPoint& p, std::size_t d) const {
  const auto& points = ledger_.points();
  const double faster_than_ms = p.device_ms[d] / (1 + options_.precision);
  for (std::size_t e = 0; e < devices_.size() && e < p.config.shares.size(); ++e) {
    if (e == d || p.config.shares[e] <= 0) continue;
    const bool faster = std::any_of(points.begin(), points.end(), [&](const TrainingPoint& q) {
      return static_plan(q) && e < q.device_ms.size() && q.config.shares[e] >= p.config.shares[e] &&
             same_setting_of(devices_[e], q.config, p.config) && q.device_ms[e] > 0 && q.device_ms[e] < faster_than_ms;
    });
    if (!faster) return false;
  }
  return true;
}

// The least time device d can take at its share of `c` by its own times (own_time) at every level:
// a linear cost with no negative part, t = fixed + rate x share, that took t_i at share s_i takes
// at least t_i x min(1, s / s_i) at the same level (as does a cost that is concave in the share).
// At another level the rate may fall by level_speedup_limit (k): t_i x min(1, s / s_i) / k; but a
// CPU's fission of at least as many sub-devices as the point's keeps the point's fixed cost (each
// partition launches, and meets the others at every iteration of a loop), so there only the rate
// part falls: t_i x min(1, s / (k x s_i)).
PlanSearch::DeviceFloor PlanSearch::device_floor(std::size_t d, const Config& c) const {
  DeviceFloor floor;
  const DeviceInfo& device = devices_[d];
  const double share = c.shares[d];
  const double speedup = std::max(1.0, tuning().level_speedup_limit);
  for (const auto& p : ledger_.points()) {
    if (!static_plan(p) || d >= p.device_ms.size() || p.config.shares[d] <= 0 || p.device_ms[d] <= 0) continue;
    if (!own_time(p, d)) continue;
    const double at = p.config.shares[d], ms = p.device_ms[d];
    double lower_bound_ms = ms * std::min(1.0, share / at);
    if (!same_setting_of(device, p.config, c)) {
      const bool fixed_cost_kept =
          !device.discrete && sub_devices(device, c.fission) >= sub_devices(device, p.config.fission);
      lower_bound_ms = fixed_cost_kept ? ms * std::min(1.0, share / (speedup * at)) : lower_bound_ms / speedup;
    }
    if (lower_bound_ms > floor.ms) floor = {lower_bound_ms, &p};
  }
  return floor;
}

double PlanSearch::expected_ms(const Config& c) const {
  if (ledger_.points().empty()) return 0;
  if (const TrainingPoint* known = ledger_.find(c)) return known->time_ms;
  double ms = ledger_.fastest().time_ms;
  if (places_shares(c) && c.items.empty())
    for (std::size_t d = 0; d < devices_.size() && d < c.shares.size(); ++d)
      if (c.shares[d] > 0) ms = std::max(ms, device_floor(d, c).ms);
  return ms;
}

std::optional<LinearCost> PlanSearch::fitted_cost(std::size_t d, const Config& c) const {
  bool same_setting = false;
  const std::vector<CostPoint> points = device_points(d, c, same_setting);
  if (!same_setting || distinct_units(points) < 2) return std::nullopt;
  return fit_positive(points, kNearlyFree);
}

bool PlanSearch::estimated_behind(const Config& c) const {
  if (ledger_.points().empty() || !places_shares(c) || !c.items.empty() || tuning().slow_plan_factor <= 0) return false;
  const double bound = tuning().slow_plan_factor * ledger_.fastest().time_ms;
  for (std::size_t d = 0; d < devices_.size() && d < c.shares.size(); ++d) {
    bool same_setting = false;
    const std::vector<CostPoint> points = device_points(d, c, same_setting);
    if (c.shares[d] > 0 && !points.empty() && fit_positive(points, kNearlyFree).at(c.shares[d]) >= bound) return true;
  }
  return false;
}

// The fastest plan with device d given `share` (the others' shares scaled to the rest), at `c`'s
// platform levels; nothing where the fastest plan gives no other device work.
std::optional<Config> PlanSearch::confirming_plan(std::size_t d, const Config& c, double share) const {
  Config plan = c;
  plan.shares = ledger_.fastest().config.shares;
  double others = 0;
  for (std::size_t i = 0; i < plan.shares.size(); ++i)
    if (i != d) others += plan.shares[i];
  if (others <= 0) return std::nullopt;
  for (std::size_t i = 0; i < plan.shares.size(); ++i) plan.shares[i] = i == d ? share : plan.shares[i] * (1 - share) / others;
  return plan;
}

bool PlanSearch::estimated_too_slow(const Config& c) {
  if (ledger_.points().empty() || ledger_.measured(c) || !places_shares(c) || !c.items.empty() ||
      tuning().slow_plan_factor <= 0)
    return false;
  // Each confirming run at least doubles a device's largest measured share: a few suffice.
  for (unsigned confirmations = 0; confirmations < 8; ++confirmations) {
    const TrainingPoint& fastest = ledger_.fastest();
    const double bound = tuning().slow_plan_factor * fastest.time_ms;
    std::optional<std::pair<std::size_t, double>> unsure;
    for (std::size_t d = 0; d < devices_.size() && d < c.shares.size(); ++d) {
      if (c.shares[d] <= 0) continue;
      const DeviceVerdict v = device_verdict(d, c, bound);
      if (v.verdict == Verdict::too_slow) {
        if (!not_run_.insert(c.str()).second) return true;  // said once
        std::ostringstream line;
        line << std::fixed << std::setprecision(3) << "not measured: " << c.str() << ": " << devices_[d].id()
             << "'s measured costs put it at " << v.ms << " ms or more (" << v.basis << "), "
             << tuning().slow_plan_factor << " x the fastest plan (" << fastest.time_ms << " ms) or more";
        note(line.str());
        return true;
      }
      if (v.verdict == Verdict::unsure && !unsure) unsure = {d, v.confirm};
    }
    if (!unsure) return false;
    const auto plan = confirming_plan(unsure->first, c, unsure->second);
    if (!plan || ledger_.measured(*plan)) return false;
    note("measuring " + devices_[unsure->first].id() + " at share " + shares_str({unsure->second}) +
         " before a plan that gives it " + shares_str({c.shares[unsure->first]}));
    if (!measure_now(*plan, 1, true)) return false;
  }
  return false;
}

}  // namespace sinew::detail
