// schedule/train_cpu_assisted.cpp — the CPU-assisted trainer (the spec's "CPU-assisted GPU"):
// everything on the other device groups, then CPU work added while the time falls.
#include "schedule/train_search.hpp"

#include <algorithm>

namespace sinew::detail {

namespace {

Config assist(PlanSearch& s, const Config& c, std::size_t cpu_group) {
  const auto& groups = s.groups();
  auto with_cpu = [&](double s_cpu) {
    std::vector<double> shares(s.devices().size(), 0.0);
    double others = 0;
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (g != cpu_group)
        for (auto d : groups[g]) others += std::max(c.shares[d], 1e-9);
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (auto d : groups[g])
        shares[d] = g == cpu_group ? s_cpu / groups[g].size() : (1 - s_cpu) * std::max(c.shares[d], 1e-9) / others;
    return shares;
  };
  const double precision = s.options().precision;
  double s_cpu = 0, step = s.tuning().assist_first_step;
  Config current = c;
  current.shares = with_cpu(0);
  const TrainingPoint* first = s.measure(current);
  if (!first) return current;
  double best = first->time_ms;
  while (step >= precision / 2 && s_cpu + step <= 1.0) {
    Config next = c;
    next.shares = with_cpu(s_cpu + step);
    const TrainingPoint* p = s.measure(next);
    if (!p) return current;
    if (p->time_ms < best) {
      best = p->time_ms;
      s_cpu += step;
      current = next;
    } else {
      step /= 2;
    }
  }
  return current;
}

class CpuAssistedTrainer final : public SearchTrainer {
 public:
  std::string_view name() const override { return "cpu_assisted"; }
  // Where no CPU group works beside other kinds, the even split's search.
  Config distribute(PlanSearch& s, const Config& at) const override {
    const auto cpu = s.cpu_group();
    return cpu ? assist(s, at, *cpu) : even_split_search(s, at);
  }
};

}  // namespace

std::unique_ptr<const Trainer> cpu_assisted_trainer() { return std::make_unique<CpuAssistedTrainer>(); }

}  // namespace sinew::detail
