// schedule/train_flows.cpp — the flows of the strategies' trainers, one per purpose, each in
// phases that keep the executions of the later phases from it (TrainingLedger::phase): a
// training (the trainer's own, or exhaustive mode's), a derived plan's check, the balancer's
// level 2, one device's screening; then the same finish for all: the dynamic schedule's plan,
// a suspect device alone measured again, the choice of the fastest.
#include "schedule/train_search.hpp"

#include "platform/error.hpp"

#include <algorithm>

namespace sinew::detail {

namespace {

// The runs a flow keeps for the finish, and what the finish does.
struct Finish {
  bool dynamic = false;           // the dynamic schedule's plan is measured
  std::size_t dynamic_runs = 0;   // kept for it from the flow
  std::size_t finalists = 0;      // leaders measured once more
  bool recheck = false;           // a suspect device alone measured again
  std::size_t alone_again = 0;    // runs of each group's fastest plan alone again (a check)
  std::size_t final_runs = 0;     // kept for the finalists, the recheck and alone_again
};

Finish plan_finish(const PlanSearch& s, bool own_budget) {
  const TrainingOptions& o = s.options();
  Finish f;
  // The dynamic schedule's plan after the search, within the budget: its runs are kept from the
  // search. (Its weights come from each device alone, which the flows measure anyway; where they
  // did not, from the fastest split, rebalanced.)
  f.dynamic = o.dynamic && o.purpose == TrainingPurpose::train && s.devices().size() > 1;
  f.dynamic_runs = f.dynamic ? std::min<std::size_t>(s.ledger().total() / 2, s.runs_per_point()) : 0;
  // No finalists where the budget is the caller's few runs (the balancer's level 2) or the
  // trainer's own.
  f.finalists = o.purpose == TrainingPurpose::rebalance || own_budget ? 0 : o.tuning.finalists;
  // With the finalists' runs, one for a device alone timed against the splits' evidence (not in
  // a device's screening, which runs no split).
  f.recheck = f.finalists && o.purpose != TrainingPurpose::screen_device;
  // And in a derived plan's check, which measures each point once, each group's fastest plan
  // alone again, a leader or not.
  const std::size_t groups = s.groups().size();
  f.alone_again =
      f.recheck && o.purpose == TrainingPurpose::check_derived && groups > 1 ? o.tuning.alone_again_runs * groups : 0;
  f.final_runs = f.finalists * s.runs_per_point(1) + (f.recheck ? 1 : 0) + f.alone_again;
  return f;
}

// Exhaustive mode (the spec's uniform search): the trainer's distribution search at every
// fission x overlap combination, each group alone at each.
void search_every_combination(const SearchTrainer& t, PlanSearch& s, const Config& base, std::size_t reserved) {
  s.ledger().phase(reserved, [&] {
    for (const auto& f : s.fissions())
      for (auto ov : s.overlaps()) {
        Config c = base;
        c.fission = f;
        c.overlap = ov;
        t.distribute(s, c);
        if (s.stopped()) return;
        s.each_group_alone(c);
        if (s.stopped()) return;
      }
  });
}

// A derived plan: is its platform configuration right for this input, and its distribution
// near? Screen, one rebalancing step, each device alone; one run a point (the check is for gross
// mismatches, such as an overlap level 2x off; the online balancer refines the distribution).
// Each device alone at the cost model's levels and at the leader's configuration is kept from the
// screening, and at its other levels where runs are left (docs/decisions/044).
void check_derived_plan(PlanSearch& s, const Config& base, std::size_t reserved) {
  s.measure_once_a_point();
  const std::size_t alone_runs = s.groups().size() > 1 ? 2 * s.groups().size() : 0;  // each with its untimed run
  s.ledger().phase(reserved + alone_runs, [&] {
    const TrainingPoint* measured = s.measure(base);
    if (!measured) return;
    const TrainingPoint first = *measured;
    const Config leader = s.screen_platform(first);
    if (s.stopped()) return;
    // The leader's screening run (the choice measures the leaders again): its runs go to the
    // rebalancing step.
    TrainingPoint at = first;
    for (const auto& p : s.ledger().points())
      if (p.config == leader) at = p;
    if (!s.balanced(at)) {
      Config c = at.config;
      c.shares = rebalance(s.devices(), c.shares, at.device_ms);
      s.measure(c);
    }
  });
  s.ledger().phase(reserved, [&] {
    // The levels the cost model predicts each device alone fastest at first: the derived plan's
    // own may be a device's slow one.
    for (const Config& level : s.options().alone_levels)
      if (const Config c = without_idle_levels(level, s.devices()); s.unmeasured_alone(c) && !s.measure(c, 1) && s.stopped()) return;
    s.each_group_alone_at_every_level(s.ledger().fastest().config);
  });
}

// The balancer's level 2 comes when the machine changed under a plan: each device alone first,
// so that a small budget still sees whether one device should now take it all; then the
// distribution at the start's fission and overlap.
void retrain_distribution(const SearchTrainer& t, PlanSearch& s, const Config& base, std::size_t reserved) {
  s.ledger().phase(reserved, [&] {
    s.each_group_alone(base);
    if (s.stopped()) return;
    t.distribute(s, base);
    if (s.stopped()) return;
    s.each_group_alone(s.ledger().fastest().config);
  });
}

// A run pinned to one device with nothing known of it: that device alone at each level of its
// own dimension (its overlap levels, or its fissions), one run each.
void screen_one_device(PlanSearch& s, std::size_t device, std::size_t reserved) {
  s.measure_once_a_point();
  const DeviceInfo& info = s.devices().at(device);
  Config c = Config::single(device, s.devices().size());
  std::vector<Config> levels;
  if (info.discrete) {
    for (auto ov : info.overlap_levels.empty() ? std::vector<unsigned>{1} : info.overlap_levels)
      levels.push_back(c), levels.back().overlap = ov;
  } else {
    levels.push_back(c);
    for (const auto& f : info.fission_configs)
      if (f.name != c.fission) levels.push_back(c), levels.back().fission = f.name;
  }
  s.ledger().phase(reserved, [&] {
    for (const auto& l : levels)
      if (!s.measure(l) && s.stopped()) return;
  });
}

void check_request(const TrainingRequest& request) {
  if (request.devices.empty()) throw_error(errc::no_device, "training needs at least one device");
  const TrainingOptions& o = request.options;
  if (o.purpose == TrainingPurpose::screen_device && o.device >= request.devices.size())
    throw_error(errc::invalid_argument, "training one device alone: device " + std::to_string(o.device) + " of " +
                                            std::to_string(request.devices.size()));
}

}  // namespace

bool SearchTrainer::own_budget_applies(const TrainingOptions& o) const {
  const bool own_flow = o.purpose == TrainingPurpose::train || o.purpose == TrainingPurpose::screen_device;
  return own_executions(o.tuning) > 0 && own_flow && !o.exhaustive;
}

std::size_t SearchTrainer::executions(const TrainingOptions& o) const {
  // A derived plan's check and the balancer's level 2 keep their callers' budgets, exhaustive
  // mode the user's.
  return own_budget_applies(o) ? std::min(o.max_executions, own_executions(o.tuning)) : o.max_executions;
}

// Distribution first, on the base platform configuration; then one dimension at a time at that
// distribution, and the distribution again at the leader; then each group alone at every level of
// its own dimension (kept from the search: a search that spent the budget must still see whether
// one device alone is best, docs/decisions/041). Each group alone at the search's configuration
// is kept whatever the budget; its other levels take at most half of what the search would have
// (a small budget, --quick's 12, still searches).
void SearchTrainer::train_plan(PlanSearch& s, const Config& base, std::size_t reserved) const {
  TrainingLedger& ledger = s.ledger();
  const std::size_t essential = s.groups().size() > 1 ? 2 * s.groups().size() : 0;  // each with its untimed run
  const std::size_t cost = s.each_group_alone_cost();
  const std::size_t levels = cost - std::min(cost, essential);
  const std::size_t left = ledger.limit() - std::min(ledger.limit(), reserved + essential);
  ledger.phase(reserved + essential + std::min(levels, left / 2), [&] {
    const Config best = distribute(s, base);
    if (s.stopped()) return;
    const Config leader = s.screen_platform(ledger.fastest());
    if (s.stopped()) return;
    if (leader.fission != best.fission || leader.overlap != best.overlap) distribute(s, leader);
  });
  ledger.phase(reserved, [&] { s.each_group_alone_at_every_level(ledger.fastest().config); });
}

TrainingResult SearchTrainer::train(const TrainingRequest& request) const {
  check_request(request);
  const TrainingOptions& o = request.options;
  const bool checking = o.purpose == TrainingPurpose::check_derived;
  PlanSearch s(request, executions(o), checking ? MeasuringRule{} : measuring());
  Config base = s.starting_plan(request.start, o.purpose == TrainingPurpose::rebalance, checking);
  // (The model strategy's own few executions leave no room for a probe: docs/decisions/111.)
  if (!own_budget_applies(o) && s.probes_first(request)) s.probe_groups(base);
  const Finish f = plan_finish(s, own_budget_applies(o));
  switch (o.purpose) {
    case TrainingPurpose::screen_device: screen_one_device(s, o.device, f.final_runs); break;
    case TrainingPurpose::check_derived: check_derived_plan(s, base, f.final_runs); break;
    case TrainingPurpose::rebalance: retrain_distribution(*this, s, base, f.dynamic_runs + f.final_runs); break;
    case TrainingPurpose::train:
      if (o.exhaustive) search_every_combination(*this, s, base, f.dynamic_runs + f.final_runs);
      else train_plan(s, base, f.dynamic_runs + f.final_runs);
      break;
  }
  TrainingLedger& ledger = s.ledger();
  if (f.dynamic) ledger.phase(f.final_runs, [&] { measure_dynamic_plan(s); });
  if (f.recheck) ledger.phase(f.final_runs - 1, [&] { s.recheck_suspect_alone(); });
  const auto best = s.choose_fastest(f.finalists, f.alone_again > 0);
  if (ledger.stopped() && ledger.end() != TrainingEnd::time) s.note(ledger.stop_line());  // (time: said once)
  return s.result(name(), best);
}

}  // namespace sinew::detail
