// tree/nodes/map_reduce.cpp — building map_reduce nodes and reducers, and checking them.
#include "tree/nodes/map_reduce.hpp"

#include "platform/hash.hpp"
#include "tree/analysis.hpp"
#include "tree/nodes/kernel.hpp"

namespace sinew {
namespace detail {
namespace {
const char* op_name(Reducer::Op op) {
  switch (op) {
    case Reducer::Op::sum: return "sum";
    case Reducer::Op::min: return "min";
    case Reducer::Op::max: return "max";
    case Reducer::Op::custom: return "custom";
  }
  return "?";
}
}  // namespace

void MapReduceNode::dump_settings(std::ostream& s) const {
  s << " reduce=" << op_name(reducer.op) << "(" << (reducer.input ? reducer.input->name : "?") << ") -> "
    << (reducer.output ? reducer.output->name : "?");
  if (reducer.op == Reducer::Op::custom) s << " using " << reducer.function << " from " << reducer.origin;
}

void MapReduceNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const {
  // After the arguments in the signature's order; a map_reduce has none.
  s << "reduce" << static_cast<int>(reducer.op) << id(reducer.input.get()) << reducer.function
    << hash_hex(reducer.source);
}

void MapReduceNode::check_structure(const std::string& path, StructureFacts& facts) const {
  const Reducer& r = reducer;
  if (!r.input || !r.output)
    fail(errc::invalid_tree, path, "reducer", "the reducer has no input vector or no result",
         "build it with sinew::reduce::sum(partial, result) or another sinew::reduce function");
  if (r.op != Reducer::Op::custom && (!r.input->type.known() || r.input->type.lanes != 1))
    fail(errc::invalid_argument, path, "reducer input '" + r.input->name + "'",
         "built-in reductions work on scalar element types, not " +
             (r.input->type.known() ? r.input->type.name : std::string("opaque types")),
         "reduce a vector of float, int, uint, ... or use sinew::reduce::custom");
  if (!(r.input->type == r.output->type) && r.output->type.size != r.input->type.size)
    fail(errc::invalid_argument, path, "result '" + r.output->name + "'",
         "the result's type differs from the reduced vector's (" + r.input->type.name + ")",
         "declare the result as sinew::result<cl_" + r.input->type.name + ">");
  if (r.op == Reducer::Op::custom) {
    if (r.identity.size() != r.input->type.size)
      fail(errc::invalid_argument, path, "reducer identity", "the identity's size differs from the element size",
           "pass an identity of the vector's element type");
    if (r.source.find(r.function) == std::string::npos)
      fail(errc::invalid_argument, path, "reducer function '" + r.function + "'",
           "the function is not defined in '" + r.origin + "'", "name a function T f(T a, T b) defined in that file");
  }
  for (const ResultState* p : facts.produced)
    if (p == r.output.get())
      fail(errc::invalid_tree, path, "result '" + r.output->name + "'", "two map_reduce nodes write the same result",
           "give each map_reduce its own sinew::result");
  facts.produced.push_back(r.output.get());
}

void MapReduceNode::check_flow(const Analysis& an, const std::string& path) const {
  auto it = an.index.find(reducer.input.get());
  if (it == an.index.end() || !an.vectors[it->second].written)
    fail(errc::invalid_tree, path, "reducer input '" + reducer.input->name + "'",
         "the reduced vector is not written by any leaf of the tree",
         "reduce a vector that the map_reduce body writes with sinew::out or sinew::inout");
}

}  // namespace detail

namespace reduce {
namespace {
Reducer builtin(Reducer::Op op, const VectorRef& partial, const ResultRef& out) {
  Reducer r;
  r.op = op;
  r.input = detail::VectorAccess::get(partial);
  r.output = detail::ResultAccess::get(out);
  return r;
}
}  // namespace
Reducer sum(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::sum, p, o); }
Reducer min(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::min, p, o); }
Reducer max(const VectorRef& p, const ResultRef& o) { return builtin(Reducer::Op::max, p, o); }
Reducer custom_source_bytes(const VectorRef& partial, const ResultRef& out, const std::string& source,
                            const std::string& function, const std::string& origin) {
  Reducer r = builtin(Reducer::Op::custom, partial, out);
  r.source = source;
  r.origin = origin;
  r.function = function;
  return r;
}
Reducer custom_bytes(const VectorRef& partial, const ResultRef& out, const std::string& file,
                     const std::string& function) {
  auto src = detail::load_kernel_source(file);
  return custom_source_bytes(partial, out, src->text, function, src->origin);
}
}  // namespace reduce

Node map_reduce(Node body, Reducer reducer) {
  auto n = std::make_shared<detail::MapReduceNode>();
  n->children.push_back(detail::need(body, "map_reduce"));
  n->reducer = std::move(reducer);
  return Node(n);
}

}  // namespace sinew
