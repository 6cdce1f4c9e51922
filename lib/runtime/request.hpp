// runtime/request.hpp — the path of one request: admitted on the caller's thread (the prepared
// tree, the plan source that answers and what it knows before the run: every check before any
// device work), then run as a pipeline of stages:
//
//   choose the plan       the answering source's choose()             runtime/plan_source.hpp
//   observers, before     the balancer's current distribution          runtime/balancer_observer.hpp
//   run                   measure() (measure_checked() under the       schedule/prepared.hpp
//                         poison check), over an exchanger for one
//                         process's part of a larger run
//   observers, after      the knowledge base's record, the balancer    runtime/plan_record.hpp,
//                         (its verdict, its next step)                 runtime/balancer_observer.hpp
//
// A stage that acts before or after every run of a plan (moving resident data, agreeing with
// other processes) is one more observer; a new way to find a plan is one more source.
#pragma once

#include "exec/environment.hpp"
#include "exec/exchanger.hpp"
#include "exec/resident_array.hpp"
#include "runtime/balancer_observer.hpp"
#include "runtime/plan_source.hpp"
#include "runtime/run_observer.hpp"

#include <sinew/binding.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>

#include <memory>
#include <vector>

namespace sinew::detail {

// One request, as admitted.
struct Request {
  std::shared_ptr<const PreparedTree> prepared;
  std::vector<Binding> bindings;
  RunOptions options;
  Exchanger* exchanger = nullptr;  // one process's part of a larger run (exec/exchanger.hpp)
  bool profile = false;            // its queues profile every command
  bool force_training = false;
  const PlanSource* source = nullptr;  // the source that answered
  PlanOffer offer;                     // and what it knew before the run
  ArrayClaims arrays;                  // the turns of the resident arrays it binds

  PlanRequest plan_request(const std::vector<DeviceInfo>& devices) const {
    return {*prepared, bindings, options, devices, exchanger != nullptr, force_training};
  }
};

class RequestPipeline {
 public:
  RequestPipeline(Environment& env, PlanSources sources, BalancerContext balancer, PlannerAccess planner);

  // On the caller's thread, before any device work: the source that plans `request` and its offer
  // (a sinew::Error for a plan that cannot run).
  void admit(Request& request) const;
  // Runs an admitted request through the stages.
  Report run(const Request& request) const;

  const PlanSources& sources() const { return sources_; }

 private:
  std::vector<std::unique_ptr<RunObserver>> observers(const PlanRequest& request, const PlanOffer& offer,
                                                      const ChosenPlan& plan) const;
  Report measure_plan(const Request& request, const Config& config) const;

  Environment& env_;
  PlanSources sources_;
  BalancerContext balancer_;
  PlannerAccess planner_;
};

}  // namespace sinew::detail
