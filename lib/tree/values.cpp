// tree/values.cpp — results passed to kernels as arguments (sinew::value): which map_reduce
// produces each one, and the checks that every value exists before the kernel that reads it.
#include "tree/analysis.hpp"

#include "tree/nodes/kernel.hpp"
#include "tree/nodes/loop.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <set>
#include <vector>

namespace sinew::detail {
namespace {

// A node's place in the order the tree runs in: its index in a parents-first walk, and the index
// of the last node of its subtree. A map_reduce's value exists once its whole subtree (its body)
// has run, so a node reads it when its own index is past the producer's `last`.
struct Place {
  std::size_t index = 0, last = 0;
  std::string path;
};

std::map<const NodeImpl*, Place> places_of(const NodeImpl& root) {
  std::map<const NodeImpl*, Place> places;
  std::vector<const NodeImpl*> order;
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    places[&n] = {order.size(), order.size(), path};
    order.push_back(&n);
  });
  // Children follow their parent in `order`: a subtree's last index is its last child's last.
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (!(*it)->children.empty()) places[*it].last = places[(*it)->children.back().get()].last;
  return places;
}

using Producers = std::map<const ResultState*, const MapReduceNode*>;

Producers producers_of(const NodeImpl& root) {
  Producers producers;
  visit(root, [&](const NodeImpl& n) {
    if (auto* mr = dynamic_cast<const MapReduceNode*>(&n)) producers[mr->reducer.output.get()] = mr;
  });
  return producers;
}

// Guarantees: the leaf reading `a` (argument `i`) is a kernel whose parameters were read from its
// source (they say whether it takes the value or a buffer), and the value is produced before it.
void check_value_argument(const NodeImpl& leaf, std::size_t i, const Arg& a, const Place& at,
                          const Producers& producers,
                          const std::map<const NodeImpl*, Place>& places, Analysis& an) {
  const std::string label = leaf.argument_label(i);
  const std::string& name = a.result->name;
  const auto* kernel = dynamic_cast<const KernelNode*>(&leaf);
  if (!kernel)
    fail(errc::invalid_argument, at.path, label, "only a kernel leaf takes a result as an argument",
         "pass result '" + name + "' to a sinew::kernel");
  if (!kernel->params)
    fail(errc::invalid_argument, at.path, label,
         "the kernel's parameters cannot be read from its source (a macro?), so Sinew cannot tell whether it takes "
         "result '" + name + "' by value or through a pointer",
         "write the __kernel's parameter list without macros");
  auto p = producers.find(a.result.get());
  if (p == producers.end())
    fail(errc::invalid_tree, at.path, label, "result '" + name + "' is produced by no map_reduce of this tree",
         "add the map_reduce that computes '" + name + "' to the tree, before this kernel");
  const Place& from = places.at(p->second);
  if (at.index <= from.last) {
    const bool inside = at.index > from.index;
    fail(errc::invalid_tree, at.path, label,
         "result '" + name + "' is read " + (inside ? "inside the body of" : "before") + " the map_reduce that " +
             "produces it (" + from.path + "), so it has no value yet" +
             (inside ? "" : " (inside a loop, a later stage's result is not the previous iteration's)"),
         "move this kernel to a stage after that map_reduce");
  }
  an.value_sources[a.result.get()] = {p->second, p->second->reducer.op == Reducer::Op::custom};
  if ((*kernel->params)[i].pointer) an.values_through_pointers.emplace(&leaf, i);
}

// The producers whose value no host code reads while the tree runs: every kernel takes it through
// a pointer, and no loop predicate can read it (a predicate on its result, or one on the loop's
// state, which may look up any result).
void find_values_only_on_devices(const NodeImpl& root, Analysis& an) {
  bool any_state_predicate = false;
  std::set<const ResultState*> judged;
  visit(root, [&](const NodeImpl& n) {
    if (auto* loop = dynamic_cast<const LoopNode*>(&n)) {
      if (loop->until_state) any_state_predicate = true;
      if (loop->until_result) judged.insert(loop->until_result.get());
    }
  });
  if (any_state_predicate) return;
  std::set<const ResultState*> by_value;
  visit(root, [&](const NodeImpl& n) {
    for (std::size_t i = 0; i < n.args.size(); ++i)
      if (n.args[i].kind == Arg::Kind::value && !an.values_through_pointers.count({&n, i}))
        by_value.insert(n.args[i].result.get());
  });
  for (const auto& [result, source] : an.value_sources)
    if (!by_value.count(result) && !judged.count(result)) an.values_only_on_devices.insert(source.producer);
}

}  // namespace

void check_value_arguments(const NodeImpl& root, Analysis& an) {
  const auto places = places_of(root);
  const auto producers = producers_of(root);
  walk(root, [&](const NodeImpl& n, const std::string&) {
    if (!n.is_leaf()) return;
    const Place& at = places.at(&n);
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      const Arg& a = n.args[i];
      if (a.kind != Arg::Kind::value) continue;
      if (!a.result)
        fail(errc::invalid_argument, at.path, n.argument_label(i), "a value argument without a result",
             "build it with sinew::value(result)");
      check_value_argument(n, i, a, at, producers, places, an);
      if (an.streamable)
        an.joined = {at.path, n.argument_label(i),
                     "reads result '" + a.result->name + "' as a value, so every partition's value of it is "
                     "combined before this kernel runs",
                     "run it with the static schedule, or pass the result to a kernel of another tree"};
      an.streamable = false;
    }
  });
  find_values_only_on_devices(root, an);
}

}  // namespace sinew::detail
