// schedule/planner.cpp — knowledge-base lookup, derivation and training of a request's plan.
#include "schedule/planner.hpp"

#include "exec/executor.hpp"
#include "platform/error.hpp"

#include <cstring>
#include <iostream>

namespace sinew::detail {

Planner::Planner(Environment& env, KnowledgeBase& kb, PlannerSettings settings)
    : env_(env), kb_(kb), settings_(std::move(settings)), interpolator_(make_interpolator(settings_.interpolator)) {}

template <class F>
void Planner::safely(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() != make_error_code(errc::knowledge_base)) throw;
    std::call_once(warned_, [&] {
      std::cerr << "sinew: warning: the knowledge base failed; running on without it ("
                << e.what() << ")\n";
    });
  }
}

Plan Planner::plan(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings, std::size_t granule,
                   const Streaming& streaming, bool force_training) {
  const KbKey key = make_kb_key(tree.signature(), env_.infos);
  safely([&] { kb_.describe_tree(key.tree, tree.label(), tree.dump()); });
  // Reads fail like writes (a disk error, a lock held too long): then the KB knows nothing.
  auto lookup = [&]() -> std::optional<KbEntry> {
    std::optional<KbEntry> hit;
    safely([&] { hit = kb_.find(key, an.features); });
    if (hit && hit->config.shares.size() == env_.infos.size()) return hit;
    return std::nullopt;
  };
  if (!force_training)
    if (auto hit = lookup()) return {hit->config, "kb", key, hit->id, hit->source.value_or(0), 0, 0};
  std::lock_guard lock(training_mutex_);
  if (!force_training)  // another request may have trained it while this one waited
    if (auto hit = lookup()) return {hit->config, "kb", key, hit->id, hit->source.value_or(0), 0, 0};
  std::vector<KbEntry> known;
  safely([&] { known = kb_.entries(key); });
  std::optional<Derived> derived;
  if (!known.empty()) derived = interpolator_->derive(known, an.features);
  if (!force_training && settings_.derive_unseen && derived) {
    Plan p{derived->config, "derived", key, 0, derived->source, 0, 0};
    KbEntry e;
    e.key = key;
    e.features = an.features;
    e.config = derived->config;
    e.provenance = "derived";
    e.source = derived->source;
    e.strategy = derived->method;
    for (const auto& k : known)
      if (k.id == derived->source) e.time_ms = k.time_ms;
    safely([&] { p.entry = kb_.store_entry(e); });
    return p;
  }
  // Training starts from the nearest known plan when there is one.
  return train_plan(tree, an, bindings, granule, streaming, key,
                    derived ? std::optional<Config>(derived->config) : std::nullopt);
}

TrainingResult train_on_copies(Environment& env, const Node& tree, const Analysis& an,
                               const std::vector<Binding>& bindings, std::size_t granule, const Streaming& streaming,
                               const TrainingOptions& options, const Progress& progress,
                               const std::optional<Config>& start, const std::function<void(KbRun&)>& record) {
  // Scratch copies of what the tree writes; inputs it only reads are shared.
  std::vector<Binding> scratch = bindings;
  std::vector<std::vector<unsigned char>> copies;
  copies.reserve(bindings.size());
  std::vector<std::pair<void*, const void*>> restore;  // scratch <- original, before every run
  std::vector<std::size_t> sizes;
  for (auto& b : scratch) {
    const bool written = b.result || (b.vector && an.use(b.vector.get()).written);
    if (!written) continue;
    const std::size_t bytes = b.elements * b.type.size;
    copies.emplace_back(bytes);
    restore.emplace_back(copies.back().data(), b.data);
    sizes.push_back(bytes);
    b.data = copies.back().data();
    b.read_only = false;
  }
  const Analysis scratch_an = analyze(*tree.impl(), scratch);
  Measure measure = [&](const Config& c) {
    for (std::size_t i = 0; i < restore.size(); ++i) std::memcpy(restore[i].first, restore[i].second, sizes[i]);
    const Decomposition dec = decompose(an.units, granule, c, env.infos, streaming);
    Report r = execute(env, *tree.impl(), scratch_an, dec);
    if (record) {
      KbRun run;
      run.features = an.features;
      run.config = c;
      run.time_ms = r.wall_ms;
      for (const auto& p : r.partitions) run.partition_ms.push_back(p.ms);
      record(run);
    }
    return Measurement{r.wall_ms, r.device_ms};
  };
  return train(env.infos, measure, options, progress, start);
}

Plan Planner::train_plan(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings,
                         std::size_t granule, const Streaming& streaming, const KbKey& key,
                         const std::optional<Config>& start) {
  const std::string label = tree.label().empty() ? key.tree.substr(0, 12) : tree.label();
  auto record = [&](KbRun& run) {
    run.key = key;
    run.purpose = "training";
    safely([&] { kb_.record_run(run); });  // committed now: a crash loses only the run in flight
  };
  Progress progress;
  if (settings_.progress) {
    std::cerr << "sinew: training '" << label << "' (" << an.units << " units, strategy "
              << to_string(settings_.training.strategy) << ", at most " << settings_.training.max_executions
              << " executions)\n";
    progress = [&](const std::string& line) { std::cerr << "sinew:   " << line << "\n"; };
  }
  TrainingResult result =
      train_on_copies(env_, tree, an, bindings, granule, streaming, settings_.training, progress, start, record);
  if (settings_.progress)
    std::cerr << "sinew: trained '" << label << "': " << result.best.str() << " in " << result.time_ms << " ms ("
              << result.executions << " executions, " << result.seconds << " s)\n";

  Plan p{result.best, "trained", key, 0, 0, result.executions, result.seconds};
  KbEntry e;
  e.key = key;
  e.features = an.features;
  e.config = result.best;
  e.time_ms = result.time_ms;
  e.provenance = "trained";
  e.precision = settings_.training.precision;
  e.quality = settings_.training.quality;
  e.strategy = result.strategy;
  safely([&] { p.entry = kb_.store_entry(e); });
  return p;
}

void Planner::executed(const Plan& plan, const Analysis& an, const Report& report) {
  KbRun run;
  run.key = plan.key;
  run.features = an.features;
  run.config = report.config;
  run.time_ms = report.wall_ms;
  for (const auto& p : report.partitions) run.partition_ms.push_back(p.ms);
  run.purpose = "execution";
  safely([&] {
    kb_.record_run(run);
    if (plan.entry) kb_.add_executions(plan.entry);
  });
}

Config Planner::retrain(const Node& tree, const Analysis& an, const std::vector<Binding>& bindings,
                       std::size_t granule, const Streaming& streaming, const Plan& plan, const Config& current,
                       std::size_t executions) {
  std::lock_guard lock(training_mutex_);
  TrainingOptions options = settings_.training;
  options.fixed_platform = true;
  options.exhaustive = false;
  options.max_executions = executions;
  auto record = [&](KbRun& run) {
    run.key = plan.key;
    run.purpose = "balancing";
    safely([&] { kb_.record_run(run); });
  };
  Progress progress;
  if (settings_.progress) progress = [](const std::string& line) { std::cerr << "sinew:   " << line << "\n"; };
  return train_on_copies(env_, tree, an, bindings, granule, streaming, options, progress, current, record).best;
}

void Planner::balanced(const Plan& plan, const Analysis& an, const BalanceEvent* event, bool settled,
                       const Config& after, double time_ms) {
  safely([&] {
    if (event && plan.entry) {
      KbEvent e;
      e.entry = plan.entry;
      e.execution = static_cast<std::int64_t>(event->execution);
      e.level = event->level;
      e.before = event->before;
      e.after = event->after;
      e.time_ms = time_ms;
      e.partition_ms = event->device_ms;
      e.deviation = event->deviation;
      e.lbt = event->lbt;
      kb_.record_event(e);
    }
    if (settled) {
      KbEntry e;
      e.key = plan.key;
      e.features = an.features;
      e.config = after;
      e.time_ms = time_ms;
      e.provenance = "balanced";
      // Where the plan first came from (the entry it was derived from, else itself); the events
      // keep every step in between.
      if (plan.derived_from) e.source = plan.derived_from;
      else if (plan.entry) e.source = plan.entry;
      e.strategy = "balancer";
      kb_.store_entry(e);
    }
  });
}

}  // namespace sinew::detail
