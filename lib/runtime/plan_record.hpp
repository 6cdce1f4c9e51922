// runtime/plan_record.hpp — the knowledge base's record of a planned run, as a run observer: the
// plan's entry, derivation and training into the report, and the run itself as a measurement
// (purpose "execution") and one more use of the entry (Planner::executed, buffered).
#pragma once

#include "runtime/run_observer.hpp"

#include <memory>

namespace sinew::detail {

// The observer that records `plan`'s run, or null where the knowledge base did not plan it.
std::unique_ptr<RunObserver> record_in_knowledge_base(const PlannerAccess& planner, const PreparedTree& prepared,
                                                      const ChosenPlan& plan);

}  // namespace sinew::detail
