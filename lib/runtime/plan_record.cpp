// runtime/plan_record.cpp — the knowledge base's record of a planned run.
#include "runtime/plan_record.hpp"

namespace sinew::detail {

namespace {

class PlanRecord final : public RunObserver {
 public:
  PlanRecord(const PlannerAccess& planner, const PreparedTree& prepared) : planner_(planner), prepared_(prepared) {}

  void after(const ChosenPlan& plan, Report& report) override {
    const Plan& stored = *plan.stored;
    report.kb_entry = stored.entry;
    report.derived_from = stored.derived_from;
    report.model_choice = stored.model_choice;
    planner_().executed(stored, prepared_, report);
  }

 private:
  const PlannerAccess& planner_;
  const PreparedTree& prepared_;
};

}  // namespace

std::unique_ptr<RunObserver> record_in_knowledge_base(const PlannerAccess& planner, const PreparedTree& prepared,
                                                      const ChosenPlan& plan) {
  if (!plan.stored) return nullptr;
  return std::make_unique<PlanRecord>(planner, prepared);
}

}  // namespace sinew::detail
