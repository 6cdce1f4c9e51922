// exec/kept_run.cpp — a run's prepared state kept for the next identical run (see kept_run.hpp).
#include "exec/kept_run.hpp"

#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"

namespace sinew::detail {

struct KeptRun::State {
  const Environment* env = nullptr;
  std::shared_ptr<const Decomposition> dec;
  ScheduleMemory* memory = nullptr;
  // The run's bindings (its RunState reads them): the request's, copied in before each run; while
  // kept, without their arrays, which `arrays` and `alive` name instead.
  std::vector<Binding> bindings;
  std::vector<const ArrayState*> arrays;
  std::vector<std::weak_ptr<ArrayState>> alive;
  std::unique_ptr<RunState> run;  // last: gone before the bindings it reads

  bool same_bindings(const std::vector<Binding>& other) const {
    if (other.size() != bindings.size()) return false;
    for (std::size_t i = 0; i < other.size(); ++i) {
      const Binding& a = bindings[i];
      const Binding& b = other[i];
      if (a.vector != b.vector || a.result != b.result || a.data != b.data || a.elements != b.elements ||
          a.type != b.type || a.read_only != b.read_only || a.first_unit != b.first_unit ||
          a.whole_units != b.whole_units || a.distributed != b.distributed || arrays[i] != b.array.get() ||
          (arrays[i] && alive[i].expired()))
        return false;
    }
    return true;
  }
};

namespace {

// Whether a run that succeeded left a state that serves an identical run (the rules in
// kept_run.hpp).
bool serves_again(const RunState& run) {
  if (run.error() || run.profile || run.buffers.poison()) return false;
  if (run.schedule.takes_chunks() || run.workers.parts.size() != run.dec.parts.size()) return false;
  if (run.replicas->any() || run.whole_leaves.any() || !run.an.swap_copies.empty()) return false;
  for (const auto& u : run.an.vectors)
    if (u.read_halo) return false;
  for (const auto& [info, bytes] : run.buffers.allocated())
    if (bytes) return false;
  bool all = true;
  visit(run.root, [&](const NodeImpl& n) { all = all && runner_of(n).serves_identical_runs(); });
  return all;
}

// A kept state's queues hold no build number between its runs (QueueBuild): the numbers stay
// few however many trees keep a state, so the programs each number is built with serve the
// trees run after them. The run has waited for its queues, so their launches have ended.
void give_builds_back(RunState& run) {
  for (auto& w : run.workers.list)
    if (w.slot && w.slot->build) w.slot->build->give_back();
}

// Its queues' numbers back, each the one its kept kernels were built with; false (none held)
// where another queue holds one now: the run is prepared afresh.
bool take_builds_again(RunState& run) {
  for (auto& w : run.workers.list) {
    if (!w.slot || !w.slot->build || w.slot->build->take_again()) continue;
    give_builds_back(run);
    return false;
  }
  return true;
}

}  // namespace

KeptRun::KeptRun() = default;
KeptRun::~KeptRun() = default;

Report KeptRun::execute(Environment& env, const NodeImpl& root, const Analysis& an,
                        const std::vector<Binding>& bindings, const std::shared_ptr<const Decomposition>& dec,
                        const RunSettings& settings) {
  if (settings.profile || settings.poison || settings.exchanger)
    return detail::execute(env, root, an, bindings, *dec, settings);
  if (std::unique_ptr<State> state = take(env, bindings, *dec, settings.schedule_memory)) {
    state->bindings = bindings;
    if (prepare_again(*state->run, settings.schedule_memory)) {
      Report report = run_prepared(*state->run);  // a failure takes the state with it
      report.prepared_again = true;
      keep(std::move(state));
      return report;
    }
  }  // (a state whose schedule now runs otherwise is gone here: the run is prepared afresh)
  if (!an.paths) throw std::logic_error("sinew: an analysis without node paths");
  if (!dec->policy) throw std::logic_error("sinew: a decomposition without its schedule policy");
  auto state = std::make_unique<State>();
  state->env = &env;
  state->dec = dec;
  state->memory = settings.schedule_memory;
  state->bindings = bindings;
  state->run = std::make_unique<RunState>(env, root, an, state->bindings, *dec, false);
  prepare(*state->run, settings.schedule_memory);
  Report report = run_prepared(*state->run);
  if (serves_again(*state->run)) keep(std::move(state));
  return report;
}

// The kept state where it is identical to the run asked for (taken: no other run uses it
// meanwhile); else none, and the kept state dropped (the run asked for replaces it).
std::unique_ptr<KeptRun::State> KeptRun::take(const Environment& env, const std::vector<Binding>& bindings,
                                              const Decomposition& dec, ScheduleMemory* memory) {
  std::unique_ptr<State> state;
  {
    std::lock_guard lock(mutex_);
    state = std::move(kept_);
  }
  if (state && state->env == &env && state->dec.get() == &dec && state->memory == memory &&
      state->same_bindings(bindings) && take_builds_again(*state->run))
    return state;
  return nullptr;  // (a state of another run goes here, its queues back to the pool)
}

void KeptRun::keep(std::unique_ptr<State> state) {
  state->run->residency.forget();
  give_builds_back(*state->run);
  state->arrays.resize(state->bindings.size());
  state->alive.resize(state->bindings.size());
  for (std::size_t i = 0; i < state->bindings.size(); ++i) {
    Binding& b = state->bindings[i];
    state->arrays[i] = b.array.get();
    state->alive[i] = b.array;
    b.array.reset();
  }
  std::unique_ptr<State> replaced;  // one kept by a run that ran at the same time: gone, unlocked
  std::lock_guard lock(mutex_);
  replaced = std::move(kept_);
  kept_ = std::move(state);
}

}  // namespace sinew::detail
