// runtime/run_observer.hpp — a stage around one request's run: what watches the runs of a plan
// and learns from them (the balancer: runtime/balancer_observer.hpp; the knowledge base's record of
// the execution: runtime/plan_record.hpp). The request pipeline (runtime/request.hpp) makes a
// request's observers once its plan is chosen, calls every before() in order, runs the plan,
// then every after() in order.
#pragma once

#include "runtime/plan_source.hpp"

#include <sinew/report.hpp>

namespace sinew::detail {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Before the run: may change the plan it runs with (and say so in its provenance).
  virtual void before(ChosenPlan&) {}
  // After the run: what the observer makes of it, into the report (and its own state).
  virtual void after(const ChosenPlan& plan, Report& report) = 0;
};

}  // namespace sinew::detail
