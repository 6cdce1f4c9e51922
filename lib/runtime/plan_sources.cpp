// runtime/plan_sources.cpp — the runtime's plan sources (runtime/plan_source.hpp), one class each.
#include "decompose/decompose.hpp"
#include "platform/error.hpp"
#include "runtime/plan_source.hpp"

#include <string>
#include <utility>

namespace sinew::detail {

ChosenPlan PlanSource::choose(const PlanRequest&, const PlanOffer& offer) const {
  return {*offer.config, offer.provenance, std::nullopt, {}};
}

namespace {

// A plan known before the run, checked now (Config::check, the decomposition), before any device
// work, and run as it is: one that gives a device more than its memory holds is refused, naming
// where it was given (`given`), not fitted as the knowledge base's plans are.
PlanOffer checked(const PlanRequest& r, Config config, Provenance provenance, const std::string& given) {
  try {
    r.prepared.decomposition(config, r.devices);
  } catch (const MemoryShortfall& shortfall) {
    ErrorContext context = shortfall.context();
    if (context.argument.empty()) context.argument = given;
    throw MemoryShortfall(shortfall.device_index,
                          shortfall.message() + "; the plan was given by " + given + " and runs as given", context);
  }
  return {std::move(config), provenance, false};
}

// RunOptions::device, an index into the runtime's devices.
std::size_t device_index(const PlanRequest& r) {
  const std::size_t device = *r.options.device;
  if (device >= r.devices.size())
    throw_error(errc::invalid_argument,
                "device index " + std::to_string(device) + " but the runtime has " + std::to_string(r.devices.size()) +
                    " device(s)",
                {.argument = "RunOptions::device", .fix = "use an index into Runtime::devices()"});
  return device;
}

// Whether `config` gives all the units to `device`.
bool alone_on(const Config& config, std::size_t device) {
  for (std::size_t d = 0; d < config.shares.size(); ++d)
    if ((d == device) != (config.shares[d] > 0)) return false;
  return device < config.shares.size();
}

class GivenConfig final : public PlanSource {
 public:
  std::string_view name() const override { return "given config"; }
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    if (!r.options.config) return std::nullopt;
    return checked(r, *r.options.config, Provenance::manual, "RunOptions::config");
  }
};

class GivenPlanText final : public PlanSource {
 public:
  std::string_view name() const override { return "given plan"; }
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    if (r.options.plan.empty()) return std::nullopt;
    return checked(r, Config::parse(r.options.plan, r.devices), Provenance::manual, "RunOptions::plan");
  }
};

// A run pinned to a device with levels to choose from (overlap, fission) runs at its best known
// one (Planner::single_device), found as the run starts, not at the first level
// (docs/decisions/060). Not one process's part of a larger run: its screening runs would
// exchange with processes that make no such runs.
class PinnedDevice final : public PlanSource {
 public:
  explicit PinnedDevice(PlannerAccess planner) : planner_(std::move(planner)) {}
  std::string_view name() const override { return "pinned device"; }
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    if (!r.options.device || r.part) return std::nullopt;
    const std::size_t device = device_index(r);
    if (!has_platform_levels(r.devices[device])) return std::nullopt;
    return checked(r, Config::single(device, r.devices.size()), Provenance::manual, "RunOptions::device");
  }
  ChosenPlan choose(const PlanRequest& r, const PlanOffer& offer) const override {
    ChosenPlan chosen{*offer.config, offer.provenance, std::nullopt, {}};
    const Plan best = planner_().single_device(r.prepared, r.bindings, *r.options.device);
    chosen.training = best.training;  // its screening, where this request screened the device
    // The run stays on its device: a best level whose runs moved work elsewhere (a level the
    // device's memory could not hold) is not taken.
    if (alone_on(best.config, *r.options.device)) try {
        r.prepared.decomposition(best.config, r.devices);  // a level from a neighbour's input may not fit this one
        chosen.config = best.config;
      } catch (const Error&) {
      }
    return chosen;
  }

 private:
  PlannerAccess planner_;
};

class GivenDevice final : public PlanSource {
 public:
  std::string_view name() const override { return "given device"; }
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    if (!r.options.device) return std::nullopt;
    return checked(r, Config::single(device_index(r), r.devices.size()), Provenance::manual, "RunOptions::device");
  }
};

class RuntimeDefault final : public PlanSource {
 public:
  explicit RuntimeDefault(std::optional<Config> config) : config_(std::move(config)) {}
  std::string_view name() const override { return "runtime default"; }
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    if (!config_) return std::nullopt;
    return checked(r, *config_, Provenance::default_plan, "RuntimeOptions::config ($SINEW_CONFIG)");
  }

 private:
  std::optional<Config> config_;
};

// Always answers: the last source.
class KnowledgeBasePlans final : public PlanSource {
 public:
  explicit KnowledgeBasePlans(PlannerAccess planner) : planner_(std::move(planner)) {}
  std::string_view name() const override { return "knowledge base"; }
  // A tree that no split of the devices' memory holds fails now, before any training or
  // knowledge-base entry: an even split, fitted to their memory, says whether one does.
  std::optional<PlanOffer> offer(const PlanRequest& r) const override {
    Config even;
    even.shares.assign(r.devices.size(), 1.0 / static_cast<double>(r.devices.size()));
    r.prepared.fitted(even, r.devices);
    return PlanOffer{std::nullopt, Provenance::knowledge_base, true};
  }
  ChosenPlan choose(const PlanRequest& r, const PlanOffer&) const override {
    Plan plan = planner_().plan(r.prepared, r.bindings, r.force_training);
    const TrainingCost training = plan.training;
    return {plan.config, plan.provenance, std::move(plan), training};
  }

 private:
  PlannerAccess planner_;
};

}  // namespace

PlanSources plan_sources(std::optional<Config> default_config, PlannerAccess planner) {
  PlanSources chain;
  chain.add(std::make_unique<GivenConfig>())
      .add(std::make_unique<GivenPlanText>())
      .add(std::make_unique<PinnedDevice>(planner))
      .add(std::make_unique<GivenDevice>())
      .add(std::make_unique<RuntimeDefault>(std::move(default_config)))
      .add(std::make_unique<KnowledgeBasePlans>(std::move(planner)));
  return chain;
}

}  // namespace sinew::detail
