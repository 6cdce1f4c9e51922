// exec/executor.cpp — one execution request from start to end: prepare, drive, combine the
// reductions, report (the parts: exec/run.hpp).
#include "exec/executor.hpp"

#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"

#include <set>

namespace sinew::detail {

Report execute(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
               const Decomposition& dec, const RunSettings& settings) {
  if (!an.paths) throw std::logic_error("sinew: an analysis without node paths");
  if (!dec.policy) throw std::logic_error("sinew: a decomposition without its schedule policy");
  RunState run(env, root, an, bindings, dec, settings.profile, settings.poison, settings.exchanger);
  prepare(run, settings.schedule_memory);
  return run_prepared(run);
}

Report run_prepared(RunState& run) {
  run.record.prepared_ms = run.now_ms();
  drive(run);
  if (run.error()) std::rethrow_exception(run.error());
  run.residency.commit();
  // Every worker walked the same tree, so each lists the same reductions; a worker that took no
  // chunk (a schedule that cuts chunks as the run goes) walked nothing: their union.
  std::set<const NodeImpl*> pending;
  for (const auto& w : run.workers.list) pending.insert(w.pending.begin(), w.pending.end());
  NodeContext ctx(run);
  for (const NodeImpl* n : pending) runner_of(*n).combine(ctx, *n);
  return report(run, run.now_ms());
}

}  // namespace sinew::detail
