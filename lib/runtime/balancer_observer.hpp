// runtime/balancer_observer.hpp — the online balancer as a run observer: a watched plan runs with
// the balancer's current distribution, and each run's device times are its next step
// (schedule/balancer.hpp). One balancer per tree and input (and, for a given plan, per plan) in
// the runtime's store (LearnedStore::watches()), shared by the requests that run it.
//
// Which runs are watched: RunOptions::balance when set; else plans from the knowledge base when
// BalancerSettings::enabled. A divide-and-conquer plan's devices do not finish together by design
// (the crossover device runs the upper levels alone), so the balancer, which evens finish times,
// watches one only when asked to. For a planned run the balancer starts from the knowledge base's
// plan, with its stored runs as the times a load present from the first run shows against
// (OnlineBalancer::recall); a plan that changed underneath (retrained, or stored by another process)
// starts it over; a rebalance is recorded in the knowledge base and a settled plan stored there.
// Its balancers, like the Cluster's rank split's, are made by make_balancer
// (schedule/balancer_registry.hpp: the policy BalancerSettings::policy names).
#pragma once

#include "exec/environment.hpp"
#include "runtime/run_observer.hpp"
#include "schedule/learned.hpp"
#include "schedule/train.hpp"

#include <sinew/options.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sinew::detail {

// What the balancer observer borrows from the runtime.
struct BalancerContext {
  Environment& env;
  const BalancerSettings& settings;
  TrainingOptions training;  // a given plan's level 2 (RuntimeOptions::training)
  PlannerAccess planner;
  std::function<void(const std::string&)> info;  // the balancer's lines (not when quiet)
  Keyed<PlanWatch>& watches;
};

// The observer that watches `request`'s run of `plan`, or null where the run is not watched.
std::unique_ptr<RunObserver> watch_with_balancer(const BalancerContext& context, const PlanRequest& request,
                                                 const PlanOffer& offer, const ChosenPlan& plan);

}  // namespace sinew::detail
