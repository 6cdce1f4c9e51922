// schedule/train_screen.cpp — the platform levels (a discrete device's overlap levels, a CPU's
// fissions) screened at one distribution.
#include "schedule/train_search.hpp"

namespace sinew::detail {

// Overlap levels, then fissions, one at a time at `from`'s distribution (one run each). At
// fixed shares a faster device just waits for the other, so combinations are ranked by the time
// they would take once rebalanced (balanced_time). Returns the leader.
Config PlanSearch::screen_platform(const TrainingPoint& from) {
  const Config at = from.config;  // a copy: measuring adds points
  Config leader = at;
  double leader_time = balanced_time(from);
  auto screen = [&](const Config& c) {
    const TrainingPoint* p = measure(c, 1);
    if (!p) return !stopped();  // stopped, or estimated too slow to run: the next level
    if (balanced_time(*p) < leader_time) {
      leader_time = balanced_time(*p);
      leader = p->config;
    }
    return true;
  };
  // A dimension matters only where its devices have work.
  bool gpu_work = false, cpu_work = false;
  for (const auto& d : devices_) (d.discrete ? gpu_work : cpu_work) |= at.shares[d.index] > 0;
  for (auto ov : overlaps_)
    if (gpu_work && ov != at.overlap) {
      Config c = at;
      c.overlap = ov;
      if (!screen(c)) return leader;
    }
  for (const auto& f : fissions_)
    if (cpu_work && f != leader.fission) {
      Config c = leader;
      c.fission = f;
      if (!screen(c)) return leader;
    }
  return leader;
}

// The time a point's configuration would take with its shares rebalanced: each active group g
// does share_g in t_g, so all of them together do the whole in 1 / sum(share_g / t_g).
double PlanSearch::balanced_time(const TrainingPoint& p) const {
  double rate = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto [share, t] = group_load(p, g);
    if (share > 0 && t > 0) rate += share / t;
  }
  return rate > 0 ? 1.0 / rate : p.time_ms;
}

}  // namespace sinew::detail
