// bench/common/sinew_side.cpp — Sinew's side of the benchmarks (see sinew_side.hpp).
#include "sinew_side.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

namespace bench {

Roles Roles::of(const sinew::Runtime& rt) {
  Roles r;
  const auto& devs = rt.devices();
  r.devices = devs.size();
  std::vector<std::size_t> stand_ins;
  for (const auto& d : devs) {
    if (!d.discrete)
      r.cpus.push_back(d.index);
    else if (d.kind == sinew::DeviceKind::cpu)
      stand_ins.push_back(d.index);
    else
      r.gpus.push_back(d.index);
  }
  r.stand_in = !stand_ins.empty();
  r.gpus.insert(r.gpus.end(), stand_ins.begin(), stand_ins.end());
  if (!r.gpus.empty() && !devs[r.gpus[0]].overlap_levels.empty()) r.overlaps = devs[r.gpus[0]].overlap_levels;
  return r;
}

Roles::Pair Roles::pair() const {
  Pair p;
  p.has_cpu = !cpus.empty();
  p.has_gpu = !gpus.empty() || cpus.size() > 1;
  p.gpu_discrete = !gpus.empty();
  if (p.has_cpu) p.cpu = cpus[0];
  if (p.has_gpu) p.gpu = gpus.empty() ? cpus[1] : gpus[0];
  if (!p.has_cpu) p.cpu = p.gpu;
  if (!p.has_gpu) p.gpu = p.cpu;
  p.two = p.has_cpu && p.has_gpu && p.cpu != p.gpu;
  return p;
}

std::string Roles::describe(const sinew::Runtime& rt) const {
  auto list = [&](const std::vector<std::size_t>& ix, const char* what) {
    std::string s = std::to_string(ix.size()) + " " + what + (ix.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < ix.size(); ++i)
      s += (i ? ", " : " (") + rt.devices()[ix[i]].id() + " " + rt.devices()[ix[i]].name +
           (i + 1 == ix.size() ? ")" : "");
    return s;
  };
  return list(cpus, "CPU") + " + " + list(gpus, "GPU") +
         (stand_in ? " [no GPU: a CPU device driven as discrete stands in]" : "");
}

std::unique_ptr<sinew::Runtime> make_runtime(bool zero_copy_stand_in, sinew::RuntimeOptions options) {
  // A discrete device named by the program or by $SINEW_DISCRETE (as the runtime reads it).
  const auto discrete = options.or_else(sinew::RuntimeOptions::from_environment()).discrete;
  if (zero_copy_stand_in || (discrete && !discrete->empty()))
    return std::make_unique<sinew::Runtime>(std::move(options));
  static std::optional<std::string> stand_in;  // depends only on the devices: decided once
  if (!stand_in) {
    sinew::RuntimeOptions probe;
    probe.devices = options.devices;
    probe.quiet = true;
    probe.kb_path = ":memory:";
    std::vector<std::string> cpus;
    bool gpu = false;
    for (const auto& d : sinew::Runtime(probe).devices()) {
      if (d.kind != sinew::DeviceKind::cpu)
        gpu = true;
      else
        cpus.push_back(d.id());
    }
    stand_in = !gpu && cpus.size() >= 2 ? cpus[1] : std::string();
  }
  options.discrete = *stand_in;
  return std::make_unique<sinew::Runtime>(std::move(options));
}

sinew::Config make_plan(const Roles& r, double cpu_share, const std::vector<double>& w, const std::string& fission,
                        unsigned overlap) {
  sinew::Config c;
  c.shares.assign(r.devices, 0.0);
  if (r.gpus.empty()) cpu_share = 1;
  if (r.cpus.empty()) cpu_share = 0;
  cpu_share = std::clamp(cpu_share, 0.0, 1.0);
  for (auto d : r.cpus) c.shares[d] = cpu_share / static_cast<double>(r.cpus.size());
  double wsum = 0;
  for (std::size_t i = 0; i < r.gpus.size() && i < w.size(); ++i) wsum += w[i];
  for (std::size_t i = 0; i < r.gpus.size(); ++i)
    c.shares[r.gpus[i]] =
        (1 - cpu_share) * (wsum > 0 ? (i < w.size() ? w[i] : 0) / wsum : 1.0 / static_cast<double>(r.gpus.size()));
  c.fission = cpu_share > 0 ? fission : "none";
  c.overlap = cpu_share < 1 ? std::max(1u, overlap) : 1;
  return c;
}

sinew::RunOptions with_config(const sinew::Config& c) {
  sinew::RunOptions o;
  o.config = c;
  return o;
}

sinew::RunOptions on_device(std::size_t device) {
  sinew::RunOptions o;
  o.device = device;
  return o;
}

sinew::RunOptions on_device_at(std::size_t device, std::size_t devices, unsigned overlap) {
  if (overlap == 0) return on_device(device);
  sinew::Config c = sinew::Config::single(device, devices);
  c.overlap = overlap;
  return with_config(c);
}

std::vector<double> SplitShares::gpu_weights() const {
  std::vector<double> w = per_gpu;
  if (!(gpu > 0)) return {};
  for (auto& x : w) x /= gpu;
  return w;
}

SplitShares shares_of(const sinew::Config& c, const Roles& r) {
  SplitShares s;
  for (auto d : r.cpus) s.cpu += d < c.shares.size() ? c.shares[d] : 0;
  for (auto d : r.gpus) {
    s.per_gpu.push_back(d < c.shares.size() ? c.shares[d] : 0);
    s.gpu += s.per_gpu.back();
  }
  return s;
}

std::string join_shares(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s.append(s.empty() ? "" : "/").append(fmt("%.3f", x));
  return s;
}

std::vector<double> parse_shares(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, '/');)
    if (!item.empty()) out.push_back(to_num(item));
  return out;
}

std::size_t parallelism(const sinew::Report& r) {
  std::set<std::tuple<std::size_t, unsigned, unsigned>> lanes;
  for (const auto& p : r.partitions)
    if (p.units > 0) lanes.insert({p.device, p.sub_device, p.queue});
  return lanes.size();
}

std::vector<sinew::Binding> PinnedCopies::wrap(std::vector<sinew::Binding> b) {
  back_.clear();
  pinned_.resize(std::max(pinned_.size(), b.size()));
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!b[i].vector) continue;
    const std::size_t bytes = b[i].elements * b[i].type.size;
    if (pinned_[i].size() != bytes) {
      pinned_[i] = {};  // free the old block first
      pinned_[i] = rt_.pinned<unsigned char>(bytes);
    }
    std::memcpy(pinned_[i].data(), b[i].data, bytes);
    if (!b[i].read_only) back_.push_back({b[i].data, pinned_[i].data(), bytes});
    b[i].data = pinned_[i].data();
  }
  return b;
}

void PinnedCopies::restore() const {
  for (const auto& b : back_) std::memcpy(b.to, b.from, b.bytes);
}

std::string check_of(sinew::samples::Sample& s) {
  const auto c = s.check();
  return c.ok ? "OK" : c.message;
}

Job sinew_job(sinew::Runtime& rt, sinew::samples::Sample& s, sinew::RunOptions options, sinew::Report* last,
              PinnedCopies* pinned) {
  auto bindings = std::make_shared<std::vector<sinew::Binding>>();
  return {[&s, bindings, pinned] { *bindings = pinned ? pinned->wrap(s.bindings()) : s.bindings(); },
          [&rt, &s, bindings, last, options] {
            sinew::Report rep = rt.execute(s.tree(), std::move(*bindings), options);
            const double ms = rep.wall_ms;
            if (last) *last = std::move(rep);
            return ms;
          },
          [&s, pinned] {
            if (pinned) pinned->restore();
            return check_of(s);
          }};
}

Planned time_planned(sinew::Runtime& rt, sinew::samples::Sample& s, bool train, const Timing& t, PinnedCopies* pinned) {
  Planned p;
  try {
    sinew::RunOptions first;
    first.train = train;
    first.balance = false;  // the plan as trained or derived, not as the balancer would move it
    p.first = rt.execute(s.tree(), pinned ? pinned->wrap(s.bindings()) : s.bindings(), first);
    sinew::RunOptions again;
    again.balance = false;
    p.m = measure(sinew_job(rt, s, again, &p.last, pinned), t);
  } catch (const std::exception& e) {
    p.m = Stats{.check = std::string("ERROR: ") + e.what()};
  }
  return p;
}

void remove_kb(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path.string() + suffix, ec);
}

void clear_overrides(const std::string& program, std::initializer_list<const char*> variables) {
  for (const char* v : variables)
    if (const char* x = std::getenv(v); x && *x) {
      std::cerr << program << ": note: ignoring " << v << "=" << x << " (the program sets what it measures)\n";
      unsetenv(v);
    }
}

std::vector<double> sweep_shares(double step, const std::vector<double>& extra) {
  std::vector<double> s;
  for (int k = 0; std::round(k * step * 1e6) / 1e6 <= 1 + 1e-9; ++k)
    s.push_back(std::min(1.0, std::round(k * step * 1e6) / 1e6));
  if (s.empty() || std::fabs(s.back() - 1.0) > 1e-9) s.push_back(1.0);
  for (double e : extra)
    if (std::none_of(s.begin(), s.end(), [&](double x) { return std::fabs(x - e) < 1e-9; })) s.push_back(e);
  std::sort(s.begin(), s.end());
  return s;
}

std::vector<SweepPoint> sweep_splits(const Roles& r, const SweepSpec& spec, double best_ms,
                                     const std::function<Stats(const SweepPoint&, double)>& measure,
                                     const std::function<void(const SweepPoint&)>& record,
                                     const std::function<bool()>& stop) {
  std::vector<SweepPoint> out;
  std::map<std::string, std::pair<Stats, std::string>> by_plan;  // plan -> result, where it came from
  double best = std::isnan(best_ms) ? INFINITY : best_ms;
  for (unsigned ov : spec.overlaps) {
    double prev = kNaN;
    bool pruning = false;
    const auto w = spec.gpu_weights.count(ov) ? spec.gpu_weights.at(ov) : std::vector<double>{};
    for (double share : spec.shares) {
      if (stop()) return out;
      SweepPoint p{share, ov, make_plan(r, share, w, spec.fission, ov), {}, {}, false};
      const std::string key = p.config.str();
      if (pruning && share < 1 - 1e-9) {  // the CPUs alone always count: devices sharing cores
                                          // need not give a V-shaped curve
        p.skipped = true;
        p.note = "skipped: past the fastest share at this overlap, slower than " + fmt("%g", spec.prune) +
                 "x the best so far";
        record(p);
      } else if (auto it = by_plan.find(key); it != by_plan.end()) {
        p.m = it->second.first;
        p.note = "same plan as " + it->second.second;
        record(p);
      } else {
        p.m = measure(p, std::isfinite(best) ? spec.prune * best : 0);
        if (p.m.ok()) by_plan[key] = {p.m, "cpu " + pct(share) + " ovl " + std::to_string(ov)};
      }
      out.push_back(p);
      if (!p.skipped && p.m.ok() && !std::isnan(p.m.median_ms)) {
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

}  // namespace bench
