// schedule/planner.cpp — knowledge-base lookup, derivation and training of a request's plan; the
// plan cache and the batched writing of execution runs that keep SQLite off a recurrent run's path.
#include "schedule/planner.hpp"

#include "decompose/schedule_policy.hpp"

#include "kb/features.hpp"
#include "kb/utc.hpp"
#include "platform/error.hpp"
#include "schedule/derive.hpp"
#include "schedule/plan_cache.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sinew::detail {

void TrainingCost::report(Report& r) const {
  r.training_executions = executions;
  r.training_seconds = seconds;
  r.training_end = end;
  r.training_budget_seconds = budget_seconds;
  r.training_build_seconds = build_seconds;
  r.training_copies = timed_copies;
}

Planner::Planner(Environment& env, KnowledgeBase& kb, PlanCache& plans, PlannerSettings settings)
    : env_(env),
      kb_(kb),
      settings_(std::move(settings)),
      interpolator_(make_interpolator(settings_.interpolation)),
      base_key_(make_kb_key({}, env_.infos)),
      plans_(plans) {
  settings_.flush_runs = std::max<std::size_t>(1, settings_.flush_runs);
  for (std::size_t d = 0; d < env_.infos.size(); ++d)
    single_plan_texts_.push_back(Config::single(d, env_.infos.size()).str());
  writer_ = std::thread([this] { writer(); });
}

Planner::~Planner() {
  try {
    {
      std::lock_guard lock(pending_mutex_);
      stopping_ = true;
    }
    pending_cv_.notify_all();
    if (writer_.joinable()) writer_.join();  // the writer writes what is waiting before it stops
    flush();
  } catch (...) {  // destructors never throw; write() already warned
  }
}

bool Planner::usable(const KbEntry& e, const PreparedTree& p) {
  try {
    e.config.check(env_.infos, "knowledge-base entry #" + std::to_string(e.id));
    schedule_policy_of(e.config).check_tree(p.analysis, e.config,
                                            "knowledge-base entry #" + std::to_string(e.id) + ": plan");
    return true;
  } catch (const Error& error) {
    // A plan the runtime cannot run (imported from elsewhere, written by hand) is no plan: the
    // request derives or trains one, which replaces it. Said once per entry.
    bool first = false;
    {
      std::lock_guard lock(noted_mutex_);
      first = unusable_.insert(e.id).second;
    }
    if (first) warn(error.message() + "; planning as if the knowledge base had no plan for this input");
    return false;
  }
}

void Planner::info(const std::string& line) const {
  if (settings_.progress && settings_.log) settings_.log(LogLevel::info, line);
}

void Planner::progress(const std::string& line) const {
  if (settings_.progress && settings_.log) settings_.log(LogLevel::progress, line);
}

void Planner::warn(const std::string& line) const {
  if (settings_.log) settings_.log(LogLevel::warning, line);
}

template <class F>
void Planner::safely(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() != make_error_code(errc::knowledge_base)) throw;
    std::call_once(warned_, [&] {
      warn(std::string("the knowledge base failed; running on without it (") + e.what() + ")");
    });
  }
}

namespace {

PlanCache::Refresh refresh_of(const PlannerSettings& s) { return {s.refresh_uses, s.refresh_interval}; }

// "14 executions, 2.3 s (0.4 s of it builds), time budget 2.0 s; ended by its time budget": what a
// training cost, its builds (off the budget's clock), its time budget and what ended it.
std::string training_cost(const TrainingResult& r) {
  std::ostringstream line;
  line << r.executions << " executions, " << std::fixed << std::setprecision(1) << r.seconds << " s";
  if (r.build_seconds >= 0.05) line << " (" << r.build_seconds << " s of it builds)";
  if (r.budget_seconds > 0) line << ", time budget " << r.budget_seconds << " s";
  if (r.end == TrainingEnd::time) line << "; ended by its time budget";
  if (r.end == TrainingEnd::executions) line << "; ended by its executions";
  return line.str();
}

}  // namespace

void Planner::describe_once(const PreparedTree& p) {
  bool describe = false;
  {
    std::lock_guard lock(noted_mutex_);
    describe = described_.insert(p.signature).second;
  }
  if (describe) safely([&] { kb_.describe_tree(p.signature, p.label, p.tree.dump()); });
}

std::optional<Plan> Planner::stored_plan(const PreparedTree& p, const KbKey& key, const LearnedKey& cache_key) {
  // Reads fail like writes (a disk error, a lock held too long): then the KB knows nothing.
  const std::uint64_t generation = plans_.generation();
  std::optional<KbEntry> hit;
  safely([&] { hit = kb_.find(key, p.features); });
  if (!hit || !usable(*hit, p)) return std::nullopt;
  // Without the idle devices' levels (an entry stored before training named a device alone at
  // one level only): a plan of one device runs that device alone's partitions and queues.
  Plan found{without_idle_levels(hit->config, env_.infos), Provenance::knowledge_base, key, hit->id,
             hit->source.value_or(0), {}, {}};
  plans_.remember(cache_key, found, generation, refresh_of(settings_));
  return found;
}

std::optional<Planner::Derivation> Planner::derive(const PreparedTree& p, const KbKey& key,
                                                   const std::vector<KbEntry>& known) {
  if (known.empty()) return std::nullopt;
  std::optional<Derived> derived = interpolator_->derive(known, p.features);
  if (!derived) return std::nullopt;
  Derivation out{*derived, {}};
  if (derived->distance > 0 && settings_.interpolation == Interpolation::cost_model) {
    // The neighbours' runs of each device alone, fitted over the size: the device, split and
    // levels that fit this size rather than the nearest size's plan.
    std::vector<KbRun> runs;
    safely([&] { runs = kb_.runs_for_tree(key.tree); });
    std::erase_if(runs, [&](const KbRun& r) {
      return !(r.key == key) || !kb::same_residency(r.features, p.features);
    });
    if (auto model = derive_from_costs(env_.infos, runs, p.features)) {
      info("cost model for '" + p.label + "': " + model->str());
      out.derived.config = model->config;
      out.derived.method = std::string(to_string(Interpolation::cost_model));
      out.alone_levels = model->alone_levels(env_.infos.size());
    }
  }
  return out;
}

Plan Planner::store_derived(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                            const std::vector<KbEntry>& known, const Derivation& derivation) {
  const Derived& derived = derivation.derived;
  Plan plan{derived.config, Provenance::derived, key, 0, derived.source, {}, {}};
  KbEntry e;
  e.key = key;
  e.features = p.features;
  e.config = derived.config;
  e.provenance = Provenance::derived;
  e.source = derived.source;
  e.strategy = derived.method;
  for (const auto& k : known)
    if (k.id == derived.source) e.time_ms = k.time_ms;
  if (settings_.derive_executions > 0) check_derived(p, bindings, derived, derivation.alone_levels, plan, e);
  safely([&] { plan.entry = kb_.store_entry(e); });
  return plan;
}

Plan Planner::plan(const PreparedTree& p, const std::vector<Binding>& bindings, bool force_training) {
  KbKey key = base_key_;
  key.tree = p.signature;
  const LearnedKey cache_key{key.tree, p.features, {}};
  if (!force_training)
    if (auto hit = plans_.find(cache_key, refresh_of(settings_))) return *hit;
  describe_once(p);
  if (!force_training)
    if (auto hit = stored_plan(p, key, cache_key)) return *hit;
  std::lock_guard lock(training_mutex_);
  if (!force_training)  // another request may have trained it while this one waited
    if (auto hit = stored_plan(p, key, cache_key)) return *hit;
  std::vector<KbEntry> known;
  safely([&] { known = kb_.entries(key); });
  std::erase_if(known, [&](const KbEntry& e) { return !usable(e, p); });
  const std::optional<Derivation> derivation = derive(p, key, known);
  Plan plan;
  if (!force_training && settings_.derive_unseen && derivation) {
    plan = store_derived(p, bindings, key, known, *derivation);
  } else {
    // Training starts from the nearest known plan when there is one.
    plan = train_plan(p, bindings, key,
                      derivation ? std::optional<Config>(derivation->derived.config) : std::nullopt);
  }
  plans_.forget(cache_key);
  return plan;
}

void Planner::check_derived(const PreparedTree& p, const std::vector<Binding>& bindings, const Derived& derived,
                            const std::vector<Config>& alone_levels, Plan& plan, KbEntry& e) {
  // The neighbour's overlap and fission were right for its input, not necessarily for this one: a
  // few runs check them (and each device alone) at the derived distribution. Its runs are a small
  // training's measurements.
  TrainingOptions check = screen_options(settings_.training, settings_.derive_executions);
  check.alone_levels = alone_levels;
  const TrainingResult checked = search(p, bindings, check, derived.config, plan.key, "training");
  plan.config = e.config = checked.best;
  e.time_ms = checked.time_ms;
  e.strategy = derived.method + "+screen";
  e.precision = settings_.training.precision;
  e.quality = settings_.training.quality;
  plan.training = TrainingCost::of(checked);
  info("derived a plan from entry #" + std::to_string(derived.source) + " (" + derived.config.str() +
       "), checked in " + training_cost(checked) + ": " + checked.best.str());
}

namespace {

// The fastest configuration among `runs` with `device` alone (the static schedule), by the median
// of each configuration's times; with `lowest_within` > 0, of those within that fraction of the
// fastest, the lowest overlap level (a tree whose levels cost more than their time shows:
// PlanSearch::kept_level, docs/decisions/171, 178).
std::optional<std::pair<Config, double>> fastest_alone(const std::vector<KbRun>& runs, std::size_t device,
                                                       const std::vector<DeviceInfo>& devices,
                                                       double lowest_within = 0) {
  std::vector<std::pair<Config, std::vector<double>>> times;
  for (const auto& r : runs) {
    // (A CPU's runs "at" each overlap level are one plan's.)
    const auto alone = alone_plan(r.config, devices);
    if (!alone || alone->second != device) continue;
    const Config& c = alone->first;
    auto it = std::find_if(times.begin(), times.end(), [&](const auto& t) { return t.first == c; });
    if (it == times.end()) times.emplace_back(c, std::vector<double>{r.time_ms});
    else it->second.push_back(r.time_ms);
  }
  std::optional<std::pair<Config, double>> best;
  for (auto& [c, t] : times)
    if (const double m = median(t); !best || m < best->second) best = {c, m};
  if (!best || lowest_within <= 0) return best;
  std::pair<Config, double> kept = *best;
  for (auto& [c, t] : times)
    if (const double m = median(t); c.overlap < kept.first.overlap && m <= best->second * (1 + lowest_within))
      kept = {c, m};
  return kept;
}

// Where a tree's levels cost more than their time shows, the precision within which the lowest
// is kept; else 0.
double lowest_level_within(const PreparedTree& p, const TrainingOptions& training) {
  return p.keeps_lowest_level() ? training.precision : 0;
}

}  // namespace

bool has_platform_levels(const DeviceInfo& d) {
  return d.discrete ? d.overlap_levels.size() > 1 : d.fission_configs.size() > 1;
}

std::optional<Config> Planner::nearest_alone_level(const PreparedTree& p, const KbKey& key, std::size_t device) {
  // Each other features' best configuration of the device alone as a plan of their own, for
  // the interpolator.
  std::vector<KbEntry> neighbours;
  safely([&] {
    std::vector<KbRun> runs = kb_.runs_for_tree(key.tree);
    std::erase_if(runs, [&](const KbRun& r) {
      return !(r.key == key) || !kb::same_residency(r.features, p.features);
    });
    std::vector<KbFeatures> seen;
    for (const auto& r : runs) {
      if (std::find(seen.begin(), seen.end(), r.features) != seen.end()) continue;
      seen.push_back(r.features);
      std::vector<KbRun> same_features;
      for (const auto& x : runs)
        if (x.features == r.features) same_features.push_back(x);
      if (auto best = fastest_alone(same_features, device, env_.infos)) {
        KbEntry e;
        e.key = key;
        e.features = r.features;
        e.config = best->first;
        e.id = static_cast<std::int64_t>(neighbours.size()) + 1;
        neighbours.push_back(std::move(e));
      }
    }
  });
  const auto derived = interpolator_->derive(neighbours, p.features);
  if (!derived) return std::nullopt;
  Config level = Config::single(device, env_.infos.size());
  level.overlap = derived->config.overlap;
  level.fission = derived->config.fission;
  return without_idle_levels(level, env_.infos);
}

void Planner::screen_alone(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                           std::size_t device, Plan& plan) {
  const DeviceInfo& dev = env_.infos.at(device);
  const TrainingOptions o = one_device_options(settings_.training, env_.infos, device);
  info("screening " + dev.id() + " alone for '" + p.label + "' (the knowledge base has no run of it)");
  const TrainingResult r = search(p, bindings, o, std::nullopt, key, "training");
  // The stored runs decide, by the same median a later process's lookup takes (the search's own
  // pick can differ where two levels' times overlap); the search's pick when nothing was stored.
  std::optional<std::pair<Config, double>> stored;
  safely([&] {
    stored = fastest_alone(kb_.runs(key, p.features), device, env_.infos, lowest_level_within(p, settings_.training));
  });
  plan.config = stored ? stored->first : r.best;
  plan.training = TrainingCost::of(r);
  info("screened " + dev.id() + " alone for '" + p.label + "' in " + training_cost(r) + ": " + plan.config.str());
}

Plan Planner::single_device(const PreparedTree& p, const std::vector<Binding>& bindings, std::size_t device) {
  // Every level may be screened: a leaf marked whole_range() runs on a queue of its own on the
  // whole device, whatever the fission or overlap of the partitions (exec/whole_leaves.hpp).
  const bool levels = has_platform_levels(env_.infos.at(device));
  // The pinned device's plan is the key's plan: a hit (every pinned run after the first) copies
  // nothing but the cached plan.
  std::optional<LearnedKey> cache_key;
  if (levels) {
    cache_key = LearnedKey{p.signature, p.features, single_plan_texts_.at(device)};
    if (auto hit = plans_.find(*cache_key, refresh_of(settings_))) return *hit;
  }
  KbKey key = base_key_;
  key.tree = p.signature;
  Plan plan{Config::single(device, env_.infos.size()), Provenance::manual, key, 0, 0, {}, {}};
  if (!levels) return plan;
  std::lock_guard lock(training_mutex_);  // a screening below runs the tree; one at a time
  const std::uint64_t generation = plans_.generation();
  std::optional<std::pair<Config, double>> known;
  safely([&] {
    known = fastest_alone(kb_.runs(key, p.features), device, env_.infos, lowest_level_within(p, settings_.training));
  });
  Plan screened = plan;
  if (known) plan.config = known->first;
  else if (auto nearest = nearest_alone_level(p, key, device)) plan.config = *nearest;
  else screen_alone(p, bindings, key, device, screened), plan.config = screened.config;
  plans_.remember(*cache_key, plan, generation, refresh_of(settings_));  // the screening is this request's
  return screened.training.end == TrainingEnd::none ? plan : screened;
}

TrainingResult Planner::search(const PreparedTree& p, const std::vector<Binding>& bindings,
                               const TrainingOptions& options, const std::optional<Config>& start, const KbKey& key,
                               const char* purpose) {
  auto record = [&](KbRun& run) {
    run.key = key;
    run.purpose = purpose;
    safely([&] { kb_.record_run(run); });  // committed now: a crash loses only the run in flight
  };
  Progress progress;
  if (settings_.progress && settings_.log) progress = [this](const std::string& line) { this->progress("  " + line); };
  return train_on_copies(env_, p, bindings, options, progress, start, record);
}

Plan Planner::train_plan(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                         const std::optional<Config>& start) {
  const std::string& label = p.label;
  const TrainingOptions& o = settings_.training;
  {
    std::ostringstream line;
    line << "training '" << label << "' (" << p.analysis.units << " units, strategy " << to_string(o.strategy)
         << ", at most " << execution_budget(o) << " executions";
    if (o.time_budget_s > 0)
      line << " or max(" << o.time_budget_s << " s, " << o.tuning.budget_best_plan_times << " x the fastest plan)";
    line << ")";
    info(line.str());
  }
  TrainingResult result = search(p, bindings, o, start, key, "training");
  {
    std::ostringstream line;
    line << "trained '" << label << "': " << result.best.str() << " in " << result.time_ms << " ms ("
         << training_cost(result) << ")";
    info(line.str());
  }

  Plan plan{result.best, Provenance::trained, key, 0, 0, TrainingCost::of(result), result.model_choice};
  KbEntry e;
  e.key = key;
  e.features = p.features;
  e.config = result.best;
  e.time_ms = result.time_ms;
  e.provenance = Provenance::trained;
  e.precision = settings_.training.precision;
  e.quality = result.quality;
  e.strategy = result.strategy;
  safely([&] { plan.entry = kb_.store_entry(e); });
  return plan;
}

std::vector<double> Planner::stored_times(const Plan& plan, const PreparedTree& p) {
  std::vector<double> out;
  if (plan.provenance == Provenance::derived || plan.entry == 0) return out;
  safely([&] {
    for (const KbRun& r : kb_.runs(plan.key, p.features))
      if (r.config == plan.config) out.push_back(r.time_ms);
  });
  return out;
}

void Planner::executed(const Plan& plan, const PreparedTree& prepared, const Report& report) {
  Pending p;
  p.run.key = plan.key;
  p.run.features = prepared.features;
  p.run.config = report.config;
  p.run.time_ms = report.wall_ms;
  p.run.partition_ms = partition_times(report);
  p.run.device_ms = device_times(report);
  p.run.purpose = "execution";
  p.entry = plan.entry;
  p.at = std::chrono::system_clock::now();
  bool wake = false;
  {
    std::lock_guard lock(pending_mutex_);
    if (pending_.empty()) oldest_ = std::chrono::steady_clock::now();
    pending_.push_back(std::move(p));
    // The first run starts the writer's clock; a full batch is written at once.
    wake = pending_.size() == 1 || pending_.size() >= settings_.flush_runs;
  }
  if (wake) pending_cv_.notify_one();
}

void Planner::flush() {
  std::vector<Pending> batch;
  {
    std::lock_guard lock(pending_mutex_);
    batch.swap(pending_);
  }
  write(std::move(batch));
}

void Planner::write(std::vector<Pending> batch) {
  if (batch.empty()) return;
  try {
    std::vector<KbRun> runs;
    runs.reserve(batch.size());
    std::map<std::int64_t, std::int64_t> uses;
    for (auto& p : batch) {
      p.run.created = kb::utc_text(p.at);
      if (p.entry) ++uses[p.entry];
      runs.push_back(std::move(p.run));
    }
    const std::vector<std::pair<std::int64_t, std::int64_t>> counts(uses.begin(), uses.end());
    try {
      safely([&] { kb_.record_runs(runs, counts); });
    } catch (const Error& e) {
      if (e.code() != make_error_code(errc::invalid_argument)) throw;
      // A run the knowledge base rejects (a non-finite feature) must not take the batch with it.
      for (const auto& run : runs) {
        try {
          safely([&] { kb_.record_run(run); });
        } catch (const Error& bad) {
          if (bad.code() != make_error_code(errc::invalid_argument)) throw;
          warn(std::string("an execution run was not recorded (") + bad.what() + ")");
        }
      }
      for (const auto& [entry, n] : counts) safely([&] { kb_.add_executions(entry, n); });
    }
  } catch (const std::exception& e) {  // the writer thread and the destructor must not throw
    warn(std::to_string(batch.size()) + " execution run(s) were not recorded (" + e.what() + ")");
  } catch (...) {
  }
}

void Planner::writer() {
  std::unique_lock lock(pending_mutex_);
  for (;;) {
    pending_cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (!stopping_)
      pending_cv_.wait_until(lock, oldest_ + settings_.flush_interval,
                             [&] { return stopping_ || pending_.size() >= settings_.flush_runs; });
    std::vector<Pending> batch;
    batch.swap(pending_);  // may be empty: flush() took it meanwhile
    if (batch.empty()) {
      if (stopping_) return;
      continue;
    }
    lock.unlock();
    write(std::move(batch));
    lock.lock();
  }
}

Config Planner::retrain(const PreparedTree& p, const std::vector<Binding>& bindings, const Plan& plan,
                        const Config& current, std::size_t executions) {
  std::lock_guard lock(training_mutex_);
  const TrainingResult r =
      search(p, bindings, level2_options(settings_.training, executions), current, plan.key, "balancing");
  info("retrained the distribution of '" + p.label + "' in " + training_cost(r) + ": " + r.best.str());
  plans_.forget({plan.key.tree, p.features, {}});
  return r.best;
}

void Planner::balanced(const Plan& plan, const PreparedTree& p, const BalanceEvent* event, bool settled,
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
      e.features = p.features;
      e.config = after;
      e.time_ms = time_ms;
      e.provenance = Provenance::balanced;
      // Where the plan first came from (the entry it was derived from, else itself); the events
      // keep every step in between.
      if (plan.derived_from) e.source = plan.derived_from;
      else if (plan.entry) e.source = plan.entry;
      e.strategy = "balancer";
      kb_.store_entry(e);
    }
  });
  if (settled) plans_.forget({plan.key.tree, p.features, {}});
}

}  // namespace sinew::detail
