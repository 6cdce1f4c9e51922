// exec/nodes/loop.cpp — running loops: the body again and again on the same partitions; with a
// predicate, every worker meets after each iteration and the last to arrive combines the
// iteration's reductions and evaluates it.
#include "exec/nodes/runner.hpp"
#include "exec/values.hpp"
#include "platform/error.hpp"
#include "tree/nodes/loop.hpp"

#include <set>

namespace sinew::detail {
namespace {

class LoopRunner final : public NodeRunner {
 public:
  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& node, Step step) const override {
    const auto& n = static_cast<const LoopNode&>(node);
    std::size_t i = 0;
    ++w.loop_depth;
    for (;; ++i) {
      if (n.times && i >= n.times) break;
      interpret(ctx, w, group, n.body(), {i, step.loop_depth + 1});
      if (!n.has_predicate()) continue;
      // The iteration barrier: the host evaluates the predicate over this iteration's results,
      // once they are read back; the rest of the iteration (a copy) goes on meanwhile, so the next
      // iteration's first kernel follows it on the device without waiting for the host. Values
      // only kernels read stay pending until the run is over (exec/values.hpp).
      std::set<const NodeImpl*> judged;
      for (const NodeImpl* r : w.pending)
        if (!value_stays_on_devices(ctx, *r)) judged.insert(r);
      for (const NodeImpl* r : judged) runner_of(*r).wait_values(ctx, w, *r);
      ctx.barrier().arrive_and_wait([&] {
        for (const NodeImpl* r : judged) runner_of(*r).combine(ctx, *r);
        Reductions& reductions = ctx.reductions();
        std::map<std::string, Value> scratch;
        reductions.loop_done = evaluate(ctx, n, reductions.for_predicate(judged, scratch), i);
      });
      for (const NodeImpl* r : judged) w.pending.erase(r);
      if (ctx.reductions().loop_done) {
        ++i;
        break;
      }
    }
    --w.loop_depth;  // (a worker that throws is done: its depth no longer matters)
    visit(n.body(), [&](const NodeImpl& c) { runner_of(c).loop_ended(ctx, w, group, c); });
    // Counted once: by the first worker, for its first partition (streaming runs loops per partition).
    if (step.loop_depth == 0 && ctx.first_worker(w) && group.front() == w.parts.front()) ctx.record().iterations += i;
  }

 private:
  static bool evaluate(NodeContext& ctx, const LoopNode& n, const std::map<std::string, Value>& results,
                       std::size_t i) {
    if (n.until_result && n.until_value(results.at(n.until_result->name))) return true;
    if (!n.until_state) return false;
    LoopState state;
    state.iteration = i + 1;
    state.lookup = [&](const ResultRef& r) -> const Value& {
      auto it = results.find(r.name());
      if (it == results.end())
        throw_error(errc::invalid_tree,
                    "the loop predicate reads result '" + r.name() + "' that no map_reduce has produced yet",
                    {.node = ctx.path(n), .fix = "read only results computed inside the loop body"});
      return it->second;
    };
    return n.until_state(state);
  }
};

}  // namespace

const NodeRunner& loop_runner() {
  static const LoopRunner runner;
  return runner;
}

}  // namespace sinew::detail
