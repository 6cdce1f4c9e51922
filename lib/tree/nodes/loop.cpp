// tree/nodes/loop.cpp — building and checking loops.
#include "tree/nodes/loop.hpp"

#include "platform/error.hpp"
#include "tree/nodes/map_reduce.hpp"

namespace sinew {
namespace detail {

void LoopNode::dump_settings(std::ostream& s) const {
  if (times) s << " times=" << times;
  if (until_result) s << " until(" << until_result->name << ")";
  if (until_state) s << " until(state)";
}

void LoopNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>&) const {
  s << "times=" << times << ";until=" << has_predicate() << ";";
}

void LoopNode::check_structure(const std::string& path, StructureFacts&) const {
  if (!times && !has_predicate())
    fail(errc::invalid_tree, path, "", "a loop with neither .times(n) nor .until(...)",
         "give the loop a count with .times(n) or a stop condition with .until(result, predicate)");
}

void LoopNode::check_flow(const Analysis&, const std::string& path) const {
  if (!until_result) return;
  bool inside = false;
  visit(body(), [&](const NodeImpl& n) {
    if (auto* mr = dynamic_cast<const MapReduceNode*>(&n); mr && mr->reducer.output == until_result) inside = true;
  });
  if (!inside)
    fail(errc::invalid_tree, path, "until(" + until_result->name + ")",
         "the loop waits on a result that no map_reduce inside its body produces",
         "put the map_reduce that computes '" + until_result->name + "' inside the loop body");
}

}  // namespace detail

Loop loop(Node body) {
  auto n = std::make_shared<detail::LoopNode>();
  n->children.push_back(detail::impl_of(body, "loop"));
  return Loop(n);
}

namespace {
detail::LoopNode& loop_of(const std::shared_ptr<detail::NodeImpl>& impl) { return static_cast<detail::LoopNode&>(*impl); }
}  // namespace

Loop& Loop::times(std::size_t n) {
  if (n == 0)
    detail::throw_error(errc::invalid_argument, "times(0): a loop's count must be at least 1",
                        {.node = impl_->title(), .argument = "times",
                         .fix = "give times(n) with n >= 1 (with until(...), the most iterations it may run); to run "
                                "the body no time, leave the loop out of the tree"});
  loop_of(impl_).times = n;
  impl_->changed();
  return *this;
}
Loop& Loop::until(std::function<bool(const LoopState&)> done) {
  loop_of(impl_).until_state = std::move(done);
  impl_->changed();
  return *this;
}
Loop& Loop::until_value(const ResultRef& r, std::function<bool(const Value&)> done) {
  loop_of(impl_).until_result = detail::ResultAccess::get(r);
  loop_of(impl_).until_value = std::move(done);
  impl_->changed();
  return *this;
}
Loop& Loop::name(std::string text) {
  Node::name(std::move(text));
  return *this;
}

}  // namespace sinew
