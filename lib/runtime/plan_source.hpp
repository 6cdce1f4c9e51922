// runtime/plan_source.hpp — where a request's plan comes from: a chain of sources tried in order
// (runtime/source_chain.hpp), the first that answers giving the plan and its Provenance.
//
// The runtime's chain (plan_sources()), in order:
//   given config      RunOptions::config                                   manual
//   given plan        RunOptions::plan, parsed                             manual
//   pinned device     RunOptions::device with levels to choose from        manual
//                     (Planner::single_device: its best known level)
//   given device      RunOptions::device, Config::single                   manual
//   runtime default   RuntimeOptions::config ($SINEW_CONFIG)               default_plan
//   knowledge base    hit / derive / train (Planner::plan)                 knowledge_base, derived,
//                                                                          trained (balanced later)
//
// A source answers in two steps. offer() runs on the caller's thread before any device work: it
// says whether the source plans the request and checks what it can now (a given plan that
// cannot run, a device index out of range, a tree no split of the devices' memory holds: a
// sinew::Error before any device work). choose() runs as the request runs and may measure (the
// knowledge base's training, a pinned device's screening).
#pragma once

#include "exec/exchanger.hpp"
#include "runtime/source_chain.hpp"
#include "schedule/planner.hpp"
#include "schedule/prepared.hpp"

#include <sinew/binding.hpp>
#include <sinew/config.hpp>
#include <sinew/options.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace sinew::detail {

// What a source sees of a request.
struct PlanRequest {
  const PreparedTree& prepared;
  const std::vector<Binding>& bindings;
  const RunOptions& options;
  const std::vector<DeviceInfo>& devices;
  bool part = false;            // one process's part of a larger run (an exchanger): no screening
  bool force_training = false;  // RunOptions::train or RuntimeOptions::force_training
};

// A source's answer before the run.
struct PlanOffer {
  std::optional<Config> config;  // the plan, where known before the run (checked); else chosen as it runs
  Provenance provenance = Provenance::manual;
  bool knowledge_base = false;   // the knowledge base plans it: watched by default, its runs recorded
};

// The plan a request runs with.
struct ChosenPlan {
  Config config;
  Provenance provenance = Provenance::manual;
  std::optional<Plan> stored;  // the knowledge base's plan (its key, entry and training), where it planned the run
  TrainingCost training;       // what choosing it measured (a training, a check, a pinned device's screening)
};

class PlanSource {
 public:
  virtual ~PlanSource() = default;
  virtual std::string_view name() const = 0;
  // Whether this source plans the request, and what it knows of the plan now (see the banner).
  virtual std::optional<PlanOffer> offer(const PlanRequest& request) const = 0;
  // The plan the request runs with; by default the offer's.
  virtual ChosenPlan choose(const PlanRequest& request, const PlanOffer& offer) const;
};

using PlanSources = SourceChain<PlanSource>;

// The Planner of the runtime, opened on first use (the knowledge base with it).
using PlannerAccess = std::function<Planner&()>;

// The runtime's chain, in the banner's order. `default_config`: RuntimeOptions::config, parsed.
PlanSources plan_sources(std::optional<Config> default_config, PlannerAccess planner);

}  // namespace sinew::detail
