// schedule/planner.hpp — the spec's Fig. 1 decision flow: knowledge-base hit -> use it;
// no knowledge (or training forced) -> train; otherwise -> derive. Trained and derived plans are
// stored with their provenance, and every training measurement is committed as it is taken.
#pragma once

#include "decompose/decompose.hpp"
#include "exec/environment.hpp"
#include "schedule/train.hpp"
#include "tree/validate.hpp"

#include <sinew/kb.hpp>
#include <sinew/runtime.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace sinew::detail {

struct PlannerSettings {
  TrainingOptions training;
  bool derive_unseen = true;            // option (b); false: option (a), train
  std::string interpolator = "nearest";
  bool progress = true;                 // training progress on stderr
};

struct Plan {
  Config config;
  std::string provenance;               // kb | derived | trained
  KbKey key;
  std::int64_t entry = 0;
  std::int64_t derived_from = 0;
  std::size_t training_executions = 0;
  double training_seconds = 0;
};

// Runs the training search for `tree` on scratch copies of every bound vector it writes (so the
// caller's data is untouched), each measurement passed to `record` (may be empty) as it is taken.
TrainingResult train_on_copies(Environment& env, const Node& tree, const Analysis& an,
                               const std::vector<Binding>& bindings, std::size_t granule, const Streaming& streaming,
                               const TrainingOptions& options, const Progress& progress,
                               const std::optional<Config>& start, const std::function<void(KbRun&)>& record);

class Planner {
 public:
  Planner(Environment& env, KnowledgeBase& kb, PlannerSettings settings);

  // A plan for running `root` (the tree `tree`) on these bindings. Training runs the tree on
  // copies of every bound vector it writes, so the caller's data is untouched until the real run.
  Plan plan(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings, std::size_t granule,
            const Streaming& streaming, bool force_training);

  // Records the real run of a plan: a measurement (purpose "execution") and one more use.
  void executed(const Plan& plan, const Analysis& an, const Report& report);

  // The balancer's level 2: the distribution retrained at `current`'s fission and overlap, at
  // most `executions` runs, each recorded (purpose "balancing").
  Config retrain(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings, std::size_t granule,
                 const Streaming& streaming, const Plan& plan, const Config& current, std::size_t executions);
  // A rebalance of the plan's entry: the event is recorded, and when `settled` the entry becomes
  // `after` with provenance "balanced" (kept for the next process).
  void balanced(const Plan& plan, const Analysis& an, const BalanceEvent* event, bool settled, const Config& after,
                double time_ms);

  KnowledgeBase& kb() { return kb_; }

 private:
  Plan train_plan(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings, std::size_t granule,
                  const Streaming& streaming, const KbKey& key, const std::optional<Config>& start);
  // Runs `f`; a knowledge-base failure is reported once and ignored: the computation goes on.
  template <class F>
  void safely(F&& f);

  Environment& env_;
  KnowledgeBase& kb_;
  PlannerSettings settings_;
  std::unique_ptr<Interpolator> interpolator_;
  std::mutex training_mutex_;  // one training at a time per runtime: they would disturb each other
  std::once_flag warned_;
};

}  // namespace sinew::detail
