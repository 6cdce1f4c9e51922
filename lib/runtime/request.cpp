// runtime/request.cpp — the path of one request: admitted, then run through its stages.
#include "runtime/request.hpp"

#include "runtime/plan_record.hpp"

#include <utility>

namespace sinew::detail {

RequestPipeline::RequestPipeline(Environment& env, PlanSources sources, BalancerContext balancer,
                                 PlannerAccess planner)
    : env_(env), sources_(std::move(sources)), balancer_(std::move(balancer)), planner_(std::move(planner)) {}

void RequestPipeline::admit(Request& request) const {
  auto answered = sources_.first(request.plan_request(env_.infos));
  request.source = answered.source;
  request.offer = std::move(answered.answer);
}

Report RequestPipeline::run(const Request& request) const {
  const PlanRequest plan_request = request.plan_request(env_.infos);
  ChosenPlan plan = request.source->choose(plan_request, request.offer);
  const auto watching = observers(plan_request, request.offer, plan);
  for (const auto& o : watching) o->before(plan);
  Report report = measure_plan(request, plan.config);
  report.provenance = plan.provenance;
  plan.training.report(report);
  for (const auto& o : watching) o->after(plan, report);
  return report;
}

// In order: the knowledge base's record, then the balancer.
std::vector<std::unique_ptr<RunObserver>> RequestPipeline::observers(const PlanRequest& request,
                                                                     const PlanOffer& offer,
                                                                     const ChosenPlan& plan) const {
  std::vector<std::unique_ptr<RunObserver>> out;
  if (auto record = record_in_knowledge_base(planner_, request.prepared, plan)) out.push_back(std::move(record));
  if (auto watch = watch_with_balancer(balancer_, request, offer, plan)) out.push_back(std::move(watch));
  return out;
}

Report RequestPipeline::measure_plan(const Request& request, const Config& config) const {
  if (env_.poison_check)
    return measure_checked(env_, *request.prepared, request.bindings, config, request.profile, request.exchanger);
  return measure(env_, *request.prepared, request.bindings, config, request.profile, 0, request.exchanger);
}

}  // namespace sinew::detail
