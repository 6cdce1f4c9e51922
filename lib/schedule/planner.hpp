// schedule/planner.hpp — the spec's Fig. 1 decision flow: knowledge-base hit -> use it;
// no knowledge (or training forced) -> train; otherwise -> derive. Trained and derived plans are
// stored with their provenance, and every training measurement is committed as it is taken.
//
// A recurrent application runs the same tree on the same input again and again, so the per-run
// path stays off SQLite:
//
// Plan cache. A plan found in the knowledge base is remembered per (tree signature, input
// features) in the runtime's store (LearnedStore::plans(), schedule/plan_cache.hpp) and served
// from memory by later plan() calls. A cached plan is dropped, so that the
// next plan() reads the knowledge base again,
//   - when this planner stores a plan for that key and features (training, forced training,
//     derivation) or a balanced one (balanced() when settled), and after retrain();
//   - after PlannerSettings::refresh_uses plan() calls served from it or refresh_interval after
//     it was read (whichever comes first), so that what another process or KnowledgeBase handle
//     trains, balances or clears shows up within that interval (the staleness this accepts).
// force_training bypasses the cache. Each tree is described (KnowledgeBase::describe_tree) once
// per planner.
//
// Execution runs. Every real run is kept (a KbRun of purpose "execution" and one more use of
// its entry), but buffered and written by a background writer in one transaction once
// PlannerSettings::flush_runs runs are waiting or the oldest has waited flush_interval, and on
// flush() and destruction. So a crash (or a killed process) loses the execution runs of at most
// the last flush_interval; a reader through another handle sees them that late. A run's `created`
// is the time it was executed, not written, so run ids and times of executions may interleave
// with training and balancing runs out of order. Training and balancing runs and balancer events
// are written at once, one transaction each.
//
// Thread safety: plan / executed / retrain / balanced / flush may be called from several threads.
// The KnowledgeBase must outlive the Planner (the destructor writes what is buffered).
#pragma once

#include "exec/environment.hpp"
#include "schedule/prepared.hpp"
#include "schedule/train.hpp"

#include <sinew/binding.hpp>
#include <sinew/kb.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sinew::detail {

struct PlannerSettings {
  TrainingOptions training;
  bool derive_unseen = true;            // option (b); false: option (a), train
  std::size_t derive_executions = 24;   // a derived plan's check (screen_options); 0: none
  Interpolation interpolation = Interpolation::cost_model;
  bool progress = true;                 // training progress lines (info) through `log`
  Logger log;                           // progress and warnings
  // Plan cache: a cached plan is read again from the knowledge base after this many uses or this
  // long after it was read (see the banner).
  std::size_t refresh_uses = 1000;
  std::chrono::milliseconds refresh_interval{1000};
  // Execution runs are written in batches of this many, or once the oldest waited this long.
  std::size_t flush_runs = 50;
  std::chrono::milliseconds flush_interval{1000};
};

// What measuring plans cost a request (a training, a derived plan's check, a pinned device's
// screening): Report::training_*.
struct TrainingCost {
  std::size_t executions = 0;
  double seconds = 0;
  TrainingEnd end = TrainingEnd::none;  // none: the request measured nothing
  double budget_seconds = 0;
  double build_seconds = 0;
  Copies timed_copies;  // what its timed runs moved
  static TrainingCost of(const TrainingResult& r) {
    return {r.executions, r.seconds, r.end, r.budget_seconds, r.build_seconds, r.timed_copies};
  }
  // Into `report`'s training_* fields.
  void report(Report& report) const;
};

struct Plan {
  Config config;
  Provenance provenance = Provenance::knowledge_base;  // knowledge_base | derived | trained
  KbKey key;
  std::int64_t entry = 0;
  std::int64_t derived_from = 0;
  TrainingCost training;  // what this request's training cost, where it trained
  std::optional<ModelChoice> model_choice;
};

// Whether a device alone has platform levels to choose from: a discrete device's overlap levels,
// a CPU's fissions (Planner::single_device).
bool has_platform_levels(const DeviceInfo& device);

class PlanCache;
struct LearnedKey;

class Planner {
 public:
  // `plans`: the runtime's plan cache (LearnedStore::plans()); it must outlive the Planner.
  Planner(Environment& env, KnowledgeBase& kb, PlanCache& plans, PlannerSettings settings);
  // Writes the buffered execution runs; never throws.
  ~Planner();
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  // A plan for running the prepared tree on these bindings. Training runs the tree on copies of
  // every bound vector it writes, so the caller's data is untouched until the real run.
  Plan plan(const PreparedTree& p, const std::vector<Binding>& bindings, bool force_training);

  // A run pinned to `device` (RunOptions::device): the device alone at its best known platform
  // configuration for this tree and input (overlap level, fission) — the fastest measured plan
  // with the device alone among the knowledge base's runs of these features, else among those of
  // the nearest features that have such runs (the interpolator's distance), else measured now:
  // each level once, the two fastest again (one_device_options), within the training's time
  // budget, the runs recorded, so that the next request and the next process find them; then the
  // plan returned (not the cached one) carries the screening's cost (Plan::training_*). A device
  // with one level (no overlap levels, no fissions) runs Config::single with no knowledge-base
  // access. Cached like plans.
  Plan single_device(const PreparedTree& p, const std::vector<Binding>& bindings, std::size_t device);

  // Records the real run of a plan: a measurement (purpose "execution") and one more use,
  // buffered (see the banner).
  void executed(const Plan& plan, const PreparedTree& p, const Report& report);

  // The balancer's level 2: the distribution retrained at `current`'s fission and overlap, at
  // most `executions` runs, each recorded (purpose "balancing").
  Config retrain(const PreparedTree& p, const std::vector<Binding>& bindings, const Plan& plan, const Config& current,
                 std::size_t executions);
  // A rebalance of the plan's entry: the event is recorded, and when `settled` the entry becomes
  // `after` with provenance "balanced" (kept for the next process).
  void balanced(const Plan& plan, const PreparedTree& p, const BalanceEvent* event, bool settled, const Config& after,
                double time_ms);

  // The times of the knowledge base's runs of `plan`'s config at the prepared tree's features
  // (training, executions of earlier processes), oldest first: what the balancer holds the plan's
  // first runs against (OnlineBalancer::recall). None for a derived plan (no runs at these features).
  std::vector<double> stored_times(const Plan& plan, const PreparedTree& p);

  // Writes the buffered execution runs now, in the calling thread.
  void flush();

  KnowledgeBase& kb() { return kb_; }

 private:
  struct Pending {
    KbRun run;
    std::int64_t entry = 0;
    std::chrono::system_clock::time_point at;
  };

  // A derived plan for an unseen input: the interpolator's, or the cost model's where it fits.
  struct Derivation {
    Derived derived;
    std::vector<Config> alone_levels;  // the cost model's pick for each device alone, for the check
  };

  // Each tree is described to the knowledge base once per planner.
  void describe_once(const PreparedTree& p);
  // The knowledge base's usable plan for the tree and features, remembered in the plan cache;
  // none where it has none (or cannot be read).
  std::optional<Plan> stored_plan(const PreparedTree& p, const KbKey& key, const LearnedKey& cache_key);
  // A plan derived from the usable entries `known` of the key (the cost model's where the
  // settings ask for it and the runs fit); none where nothing can be derived.
  std::optional<Derivation> derive(const PreparedTree& p, const KbKey& key, const std::vector<KbEntry>& known);
  // The derived plan, checked by a few runs where the settings ask for it, stored with provenance
  // "derived".
  Plan store_derived(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                     const std::vector<KbEntry>& known, const Derivation& derivation);
  // The device alone at the level the nearest features with runs of it ran fastest at (the
  // interpolator's distance); none where no features have such runs.
  std::optional<Config> nearest_alone_level(const PreparedTree& p, const KbKey& key, std::size_t device);
  // `plan`: the device alone at the level a screening of its levels finds fastest (the stored
  // runs' medians decide, as a later lookup's), with what the screening cost; the runs are recorded.
  void screen_alone(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                    std::size_t device, Plan& plan);
  Plan train_plan(const PreparedTree& p, const std::vector<Binding>& bindings, const KbKey& key,
                  const std::optional<Config>& start);
  // A derived plan's check (screen_options, PlannerSettings::derive_executions runs from the
  // derived plan, each device alone first at `alone_levels`): `plan` and its entry `e` become the
  // checked plan.
  void check_derived(const PreparedTree& p, const std::vector<Binding>& bindings, const Derived& derived,
                     const std::vector<Config>& alone_levels, Plan& plan, KbEntry& e);
  // Training, level 2 and a derived plan's check: train_on_copies with progress lines (when
  // enabled) and every measurement recorded under `key` with `purpose`.
  TrainingResult search(const PreparedTree& p, const std::vector<Binding>& bindings, const TrainingOptions& options,
                        const std::optional<Config>& start, const KbKey& key, const char* purpose);
  void info(const std::string& line) const;      // what training chose, unless quiet
  void progress(const std::string& line) const;  // a training's progress, unless quiet
  // Whether a stored plan fits this runtime's devices (Config::check) and the tree (its schedule:
  // check_schedule); warns once per entry when not.
  bool usable(const KbEntry& e, const PreparedTree& p);
  void warn(const std::string& line) const;
  // Runs `f`; a knowledge-base failure is reported once and ignored: the computation goes on.
  template <class F>
  void safely(F&& f);

  void write(std::vector<Pending> batch);
  void writer();

  Environment& env_;
  KnowledgeBase& kb_;
  PlannerSettings settings_;
  std::unique_ptr<Interpolator> interpolator_;
  KbKey base_key_;  // device set and library: fixed for the planner's life; the tree is per call
  // Config::single(d, devices).str() for each device d: the key of a pinned device's plan, read on
  // every pinned run (single_device) and fixed for the planner's life.
  std::vector<std::string> single_plan_texts_;
  std::mutex training_mutex_;  // one training at a time per runtime: they would disturb each other
  std::once_flag warned_;

  PlanCache& plans_;

  std::mutex noted_mutex_;  // guards described_, unusable_
  std::set<std::string> described_;
  std::set<std::int64_t> unusable_;  // entries warned about

  std::mutex pending_mutex_;  // guards pending_, oldest_, stopping_
  std::condition_variable pending_cv_;
  std::vector<Pending> pending_;
  std::chrono::steady_clock::time_point oldest_;
  bool stopping_ = false;
  std::thread writer_;  // last: started once everything it uses exists
};

}  // namespace sinew::detail
