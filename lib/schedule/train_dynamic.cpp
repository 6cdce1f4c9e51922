// schedule/train_dynamic.cpp — the schedule policies' own plans, measured beside the static plans
// a training found (TrainingOptions::dynamic: where some registered policy that trains runs the
// tree). Each policy's training hook (SchedulePolicy::train: the dynamic schedule's plan) sees
// the search through a TrainingSession.
#include "schedule/train_search.hpp"

#include "decompose/schedule_policy.hpp"

namespace sinew::detail {
namespace {

// What the search offers a schedule policy's own measurement.
class SearchSession final : public TrainingSession {
 public:
  explicit SearchSession(PlanSearch& s) : s_(s) {}
  const std::vector<DeviceInfo>& devices() const override { return s_.devices(); }
  std::vector<Point> points() const override {
    std::vector<Point> out;
    for (const auto& p : s_.ledger().points()) out.push_back({p.config, p.time_ms, p.device_ms});
    return out;
  }
  Config fastest() const override { return s_.ledger().fastest().config; }
  std::size_t runs_per_point() const override { return s_.runs_per_point(); }
  bool affords(std::size_t runs) const override { return s_.ledger().affords(runs); }
  std::optional<double> measure(const Config& c) override {
    const TrainingPoint* p = s_.measure_as_asked(c);
    return p ? std::optional<double>(p->time_ms) : std::nullopt;
  }
  std::vector<double> rebalanced(const Point& p) const override {
    return rebalance(s_.devices(), p.config.shares, p.device_ms);
  }
  std::vector<double> even_shares() const override { return s_.even_shares(); }
  // The fit is per share of the work: per unit, over the units the runs split.
  std::optional<DeviceCost> device_cost(std::size_t d, const Config& at) const override {
    const auto cost = s_.fitted_cost(d, at);
    if (!cost || s_.units() == 0) return std::nullopt;
    return DeviceCost{cost->fixed_ms, cost->ms_per_unit / static_cast<double>(s_.units())};
  }

 private:
  PlanSearch& s_;
};

}  // namespace

void measure_dynamic_plan(PlanSearch& s) {
  SearchSession session(s);
  for (const SchedulePolicy* policy : schedule_policies())
    if (policy->trains()) policy->train(session);
}

}  // namespace sinew::detail
