// runtime/balancer_observer.cpp — the online balancer as a run observer.
#include "runtime/balancer_observer.hpp"

#include "schedule/balancer_registry.hpp"

#include <iomanip>
#include <mutex>
#include <sstream>

namespace sinew::detail {

namespace {

class BalancerObserver final : public RunObserver {
 public:
  BalancerObserver(const BalancerContext& context, const PlanRequest& request) : context_(context), request_(request) {}

  // The watched plan runs with the balancer's current distribution.
  void before(ChosenPlan& plan) override {
    const Config start = plan.config;
    const Plan* stored = plan.stored ? &*plan.stored : nullptr;
    const PreparedTree& p = request_.prepared;
    const LearnedKey key{p.signature, p.features, stored ? std::string() : start.str()};
    watch_ = context_.watches.get_or_make(
        key, [&] { return std::make_shared<PlanWatch>(balancer_for(start, stored), p.label); });
    Config now;
    {
      std::lock_guard lock(watch_->mutex);
      if (stored && !(start == watch_->base)) {  // the plan changed underneath: start over
        watch_->balancer = balancer_for(start, stored);
        watch_->base = start;
      }
      now = watch_->balancer->config();
    }
    if (!(now == start)) {
      plan.config = now;
      plan.provenance = Provenance::balanced;
    }
  }

  // The balancer's verdict into the report, a rebalance announced, recorded (and, once settled,
  // stored) in the knowledge base for planned runs.
  void after(const ChosenPlan& plan, Report& report) override {
    std::lock_guard lock(watch_->mutex);
    const Plan* stored = plan.stored ? &*plan.stored : nullptr;
    OnlineBalancer& balancer = *watch_->balancer;
    const BalanceStep step = balancer.observe(report.device_ms, [&](const Config& current) {
      return retrain(current, stored, balancer.executions());
    });
    report.execution = step.execution;
    report.deviation = step.deviation;
    report.lbt = step.lbt;
    report.balance = step.event;
    if (step.event) announce(step);
    if (stored && (step.event || step.settled)) {
      context_.planner().balanced(*stored, request_.prepared, step.event ? &*step.event : nullptr, step.settled,
                                  balancer.config(), report.wall_ms);
      if (step.settled) watch_->base = balancer.config();  // what the knowledge base now returns
    }
  }

 private:
  // A balancer starting from `start`; for a planned run (`stored`), given the plan's stored runs.
  std::unique_ptr<OnlineBalancer> balancer_for(const Config& start, const Plan* stored) const {
    auto b = make_balancer(context_.env.infos, start, context_.settings);
    if (stored) b->recall(context_.planner().stored_times(*stored, request_.prepared));
    return b;
  }

  // The balancer's level 2: the distribution retrained at `current`'s levels.
  Config retrain(const Config& current, const Plan* stored, std::size_t executions) const {
    context_.info("balancer: run " + std::to_string(executions) + " of '" + watch_->label +
                  "' still unbalanced after level 1; retraining the distribution (level 2)");
    const std::size_t budget = *context_.settings.level2_executions;
    if (stored) return context_.planner().retrain(request_.prepared, request_.bindings, *stored, current, budget);
    return train_on_copies(context_.env, request_.prepared, request_.bindings, level2_options(context_.training, budget),
                           {}, current, {})
        .best;
  }

  void announce(const BalanceStep& step) const {
    std::ostringstream line;
    line << "balancer: run " << step.execution << " of '" << watch_->label << "' (deviation " << std::setprecision(3)
         << step.deviation << ", lbt " << step.event->lbt << "): level " << step.event->level << ", "
         << step.event->before.str() << " -> " << step.event->after.str();
    context_.info(line.str());
  }

  const BalancerContext& context_;
  const PlanRequest& request_;
  std::shared_ptr<PlanWatch> watch_;
};

}  // namespace

std::unique_ptr<RunObserver> watch_with_balancer(const BalancerContext& context, const PlanRequest& request,
                                                 const PlanOffer& offer, const ChosenPlan& plan) {
  const bool asked = request.options.balance.value_or(false);
  const bool watched = request.options.balance.value_or(offer.knowledge_base && *context.settings.enabled);
  if (!watched || (!asked && plan.config.item("crossover"))) return nullptr;
  return std::make_unique<BalancerObserver>(context, request);
}

}  // namespace sinew::detail
