// bench/common/plans.cpp — device roles, static splits, GPU balancing, knowledge-base timing and
// the sweep of static splits (see plans.hpp).
#include "plans.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

namespace sinew_bench {

Roles Roles::of(const sinew::Runtime& rt) {
  Roles r;
  const auto& devs = rt.devices();
  r.devices = devs.size();
  for (const auto& d : devs) {
    if (d.discrete) {
      r.gpus.push_back(d.index);
      r.stand_in = r.stand_in || d.kind == sinew::DeviceKind::cpu;
    } else {
      r.cpus.push_back(d.index);
    }
  }
  if (!r.gpus.empty() && !devs[r.gpus[0]].overlap_levels.empty()) r.overlaps = devs[r.gpus[0]].overlap_levels;
  if (!r.cpus.empty() && !devs[r.cpus[0]].fission_configs.empty()) {
    r.fissions.clear();
    for (const auto& f : devs[r.cpus[0]].fission_configs) r.fissions.push_back(f.name);
  }
  return r;
}

std::string Roles::describe(const sinew::Runtime& rt) const {
  const auto& devs = rt.devices();
  auto list = [&](const std::vector<std::size_t>& ix) {
    std::string s;
    for (std::size_t i = 0; i < ix.size(); ++i) {
      if (i) s += ", ";
      s += devs[ix[i]].id() + " " + devs[ix[i]].name;
    }
    return s;
  };
  std::ostringstream os;
  os << cpus.size() << " CPU" << (cpus.size() == 1 ? "" : "s") << (cpus.empty() ? "" : " (" + list(cpus) + ")") << " + "
     << gpus.size() << " GPU" << (gpus.size() == 1 ? "" : "s") << (gpus.empty() ? "" : " (" + list(gpus) + ")");
  if (stand_in) os << " [no GPU: a CPU device driven as discrete stands in]";
  return os.str();
}

sinew::Config make_plan(const Roles& r, double cpu_share, const std::vector<double>& gpu_weights,
                        const std::string& fission, unsigned overlap) {
  sinew::Config c;
  c.shares.assign(r.devices, 0.0);
  if (r.gpus.empty()) cpu_share = 1;
  if (r.cpus.empty()) cpu_share = 0;
  cpu_share = std::clamp(cpu_share, 0.0, 1.0);
  for (auto d : r.cpus) c.shares[d] = cpu_share / static_cast<double>(r.cpus.size());
  const double gpu = 1 - cpu_share;
  double wsum = 0;
  for (std::size_t i = 0; i < r.gpus.size(); ++i) wsum += i < gpu_weights.size() ? gpu_weights[i] : 0;
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    const double w = wsum > 0 ? (i < gpu_weights.size() ? gpu_weights[i] : 0) / wsum : 1.0 / static_cast<double>(r.gpus.size());
    c.shares[r.gpus[i]] = gpu * w;
  }
  c.fission = cpu_share > 0 ? fission : "none";
  c.overlap = cpu_share < 1 ? std::max(1u, overlap) : 1;
  return c;
}

sinew::RunOptions with_config(const sinew::Config& c) {
  sinew::RunOptions o;
  o.config = c;
  return o;
}

std::vector<double> SplitShares::gpu_weights() const {
  std::vector<double> w = per_gpu;
  if (!(gpu > 0)) return {};
  for (auto& x : w) x /= gpu;
  return w;
}

SplitShares shares_of(const sinew::Config& c, const Roles& r) {
  SplitShares s;
  for (auto d : r.cpus)
    if (d < c.shares.size()) s.cpu += c.shares[d];
  for (auto d : r.gpus) {
    const double x = d < c.shares.size() ? c.shares[d] : 0;
    s.per_gpu.push_back(x);
    s.gpu += x;
  }
  return s;
}

std::string join_shares(const std::vector<double>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += '/';
    s += fmt("%.3f", v[i]);
  }
  return s;
}

std::vector<double> parse_shares(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, '/'))
    if (!item.empty()) out.push_back(to_num(item));
  return out;
}

std::size_t parallelism(const sinew::Report& r) {
  std::set<std::tuple<std::size_t, unsigned, unsigned>> lanes;
  for (const auto& p : r.partitions)
    if (p.units > 0) lanes.insert({p.device, p.sub_device, p.queue});
  return lanes.size();
}

std::vector<double> balance_gpus(sinew::Runtime& rt, const Roles& r, sinew::samples::Sample& s, unsigned overlap,
                                 unsigned rounds) {
  std::vector<double> w(r.gpus.size(), r.gpus.empty() ? 0.0 : 1.0 / static_cast<double>(r.gpus.size()));
  if (r.gpus.size() < 2) return w;
  rt.run(s.tree(), s.bindings(), with_config(make_plan(r, 0, w, "none", overlap))).get();  // buffers, programs
  for (unsigned round = 0; round < rounds; ++round) {
    const sinew::Report rep = rt.run(s.tree(), s.bindings(), with_config(make_plan(r, 0, w, "none", overlap))).get();
    std::vector<double> ms;
    for (auto d : r.gpus) ms.push_back(d < rep.device_ms.size() ? rep.device_ms[d] : 0);
    const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
    if (!(*lo > 0) || *lo >= 0.95 * *hi) break;
    double sum = 0;
    for (std::size_t i = 0; i < w.size(); ++i) sum += (w[i] /= ms[i]);  // rate: share per ms
    for (auto& x : w) x /= sum;
  }
  return w;
}

PlannedTiming time_planned(sinew::Runtime& rt, sinew::samples::Sample& s, bool train, unsigned warmup,
                           unsigned repeat, double budget_ms, PinnedCopies* pinned) {
  PlannedTiming t;
  try {
    sinew::RunOptions first;
    first.train = train;
    first.balance = false;  // the plan as trained or derived, not as the balancer would move it
    t.first = rt.run(s.tree(), pinned ? pinned->wrap(s.bindings()) : s.bindings(), first).get();
    sinew::RunOptions again;
    again.balance = false;
    t.m = time_sinew(rt, s, again, warmup, repeat, &t.last, pinned, budget_ms);
  } catch (const std::exception& e) {
    t.m = Measurement{};
    t.m.check = std::string("ERROR: ") + e.what();
  }
  return t;
}

std::vector<double> sweep_shares(double step, const std::vector<double>& extra) {
  std::vector<double> s;
  for (int k = 0;; ++k) {
    const double x = std::round(k * step * 1e6) / 1e6;
    if (x > 1 + 1e-9) break;
    s.push_back(std::min(1.0, x));
  }
  if (s.empty() || std::fabs(s.back() - 1.0) > 1e-9) s.push_back(1.0);
  for (double e : extra)
    if (std::none_of(s.begin(), s.end(), [&](double x) { return std::fabs(x - e) < 1e-9; })) s.push_back(e);
  std::sort(s.begin(), s.end());
  return s;
}

std::string pct(double share) {
  if (std::isnan(share)) return "-";
  return fmt("%g%%", std::round(share * 1000) / 10);
}

std::vector<SweepPoint> sweep_splits(sinew::Runtime& rt, const Roles& r, sinew::samples::Sample& s,
                                     const SweepSpec& spec, double best_ms, const KnownPoint& known,
                                     const std::function<void(const SweepPoint&)>& done,
                                     const std::function<bool()>& stop, PinnedCopies* pinned) {
  std::vector<SweepPoint> out;
  std::map<std::string, std::size_t> by_plan;  // normalised plan -> measured point
  double best = std::isnan(best_ms) ? std::numeric_limits<double>::infinity() : best_ms;
  for (unsigned ov : spec.overlaps) {
    double prev = std::numeric_limits<double>::quiet_NaN();
    bool pruning = false;
    const auto w = spec.gpu_weights.count(ov) ? spec.gpu_weights.at(ov) : std::vector<double>{};
    for (double share : spec.shares) {
      if (stop && stop()) return out;
      SweepPoint p;
      p.cpu_share = share;
      p.overlap = ov;
      p.config = make_plan(r, share, w, spec.fission, ov);
      const std::string key = p.config.str();
      if (auto k = known ? known(share, ov) : std::nullopt) {
        p = *k;
        p.config = make_plan(r, share, w, spec.fission, ov);
        if (p.skipped) pruning = true;
      } else if (pruning && share < 1 - 1e-9) {  // the CPUs alone are always measured: the curve
                                                 // need not be V-shaped (devices sharing cores)
        p.skipped = true;
        p.m = Measurement{};
        p.m.check = "OK";
        p.note = "skipped: past the fastest share at this overlap and slower than " + fmt("%g", spec.prune) +
                 "x the best so far";
        done(p);
      } else if (auto it = by_plan.find(key); it != by_plan.end()) {
        p.m = out[it->second].m;
        p.note = "same plan as cpu " + pct(out[it->second].cpu_share) + " ovl " + std::to_string(out[it->second].overlap);
        done(p);
      } else {
        const double give_up = std::isfinite(best) ? spec.prune * best : 0;
        p.m = time_sinew(rt, s, with_config(p.config), spec.warmup, spec.repeat, nullptr, pinned, spec.budget_ms, give_up);
        if (p.m.ok() && p.m.runs == 0)
          p.note = "untimed runs only: slower than " + fmt("%g", spec.prune) + "x the best so far";
        std::cerr << "  [" << fmt("%6.1f", seconds_since_start()) << " s] " << s.name() << " " << count_label(s.size())
                  << " oracle cpu " << pct(share) << " ovl " << ov << ": " << fmt("%.3f", p.m.median_ms) << " ms "
                  << p.m.check << (p.note.empty() ? "" : " (" + p.note + ")") << "\n";
        done(p);
      }
      out.push_back(p);
      if (!p.skipped && p.m.ok() && !std::isnan(p.m.median_ms)) {
        by_plan.emplace(key, out.size() - 1);
        const double t = p.m.median_ms;
        if (t > spec.prune * best && !std::isnan(prev) && t > prev) pruning = true;
        prev = t;
        best = std::min(best, t);
      }
    }
  }
  return out;
}

const SweepPoint* best_point(const std::vector<SweepPoint>& points) {
  const SweepPoint* b = nullptr;
  for (const auto& p : points)
    if (!p.skipped && p.m.ok() && !std::isnan(p.m.median_ms) && (!b || p.m.median_ms < b->m.median_ms)) b = &p;
  return b;
}

}  // namespace sinew_bench
