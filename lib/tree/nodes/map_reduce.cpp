// tree/nodes/map_reduce.cpp — building map_reduce nodes and reducers, and checking them.
#include "tree/nodes/map_reduce.hpp"

#include "platform/hash.hpp"
#include "tree/analysis.hpp"
#include "tree/nodes/kernel.hpp"
#include "tree/source_text.hpp"

namespace sinew {
namespace detail {
const char* reducer_op_name(Reducer::Op op) {
  switch (op) {
    case Reducer::Op::sum: return "sum";
    case Reducer::Op::min: return "min";
    case Reducer::Op::max: return "max";
    case Reducer::Op::custom: return "custom";
  }
  return "?";
}

namespace {

// How messages name an element type: "float4", or "a struct of 256 bytes".
std::string type_spelling(const ElementType& t) {
  return t.known() ? t.name : "a struct of " + std::to_string(t.size) + " bytes";
}

// A custom reduction of a struct: the generated kernels must be able to name the type, and the
// struct the source defines must have the C++ struct's size (the partial vector's bytes are
// reinterpreted as it on the device). The kernels assert the size again when they compile, for
// the structs this reader cannot measure (attributes, macros in array bounds).
void check_struct(const Reducer& r, const std::string& path, const std::string& input) {
  const std::string name = reduction_type_name(r);
  if (name.empty())
    fail(errc::invalid_argument, path, input,
         "the vector holds a struct, and its OpenCL C name cannot be read: no definition T " + r.function +
             "(T a, T b) { ... } was found in '" + r.origin + "'",
         "define the function in that source (not through a macro), or set the reducer's type_name");
  const auto layout = opencl_type_layout(r.source, name);
  if (layout && layout->size != r.input->type.size)
    fail(errc::invalid_argument, path, input,
         "the struct '" + name + "' is " + std::to_string(layout->size) + " bytes in OpenCL C ('" + r.origin +
             "') but " + std::to_string(r.input->type.size) + " bytes in C++",
         "declare the same members in the same order on both sides (OpenCL C aligns vectors, long and double to "
         "their size; use cl_float4, cl_uint... in C++)");
}
}  // namespace

void check_binary_operator(const std::string& source, const std::string& function, const std::string& origin,
                           const std::string& path, const std::string& argument) {
  const auto params = function_params(source, function);
  if (!params || params->size() == 2) return;  // two, or a definition this reader cannot find (a macro)
  const std::size_t n = params->size();
  fail(errc::invalid_argument, path, argument,
       "the function '" + function + "' in '" + origin + "' takes " + std::to_string(n) +
           (n == 1 ? " parameter" : " parameters") + ", but it combines two elements",
       "define it as T " + function + "(T a, T b), associative, with T the element type");
}

std::string reduction_type_name(const Reducer& r) {
  if (r.input->type.known()) return r.input->type.name;
  return r.type_name.empty() ? first_param_type(r.source, r.function) : r.type_name;
}

void MapReduceNode::dump_settings(std::ostream& s) const {
  s << " reduce=" << reducer_op_name(reducer.op) << "(" << (reducer.input ? reducer.input->name : "?") << ") -> "
    << (reducer.output ? reducer.output->name : "?");
  if (reducer.op == Reducer::Op::custom) s << " using " << reducer.function << " from " << reducer.origin;
}

void MapReduceNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const {
  // After the arguments in the signature's order; a map_reduce has none.
  s << "reduce" << static_cast<int>(reducer.op) << id(reducer.input.get()) << reducer.function
    << hash_hex(reducer.source) << reducer.type_name;
}

void MapReduceNode::check_structure(const std::string& path, StructureFacts& facts) const {
  const Reducer& r = reducer;
  if (!r.input || !r.output)
    fail(errc::invalid_tree, path, "reducer", "the reducer has no input vector or no result",
         "build it with sinew::reduce::sum(partial, result) or another sinew::reduce function");
  const ElementType& t = r.input->type;
  const std::string input = "reducer input '" + r.input->name + "'";
  if (r.op != Reducer::Op::custom && !t.known())
    fail(errc::invalid_argument, path, input,
         std::string("the built-in ") + reducer_op_name(r.op) + " works on OpenCL scalar and vector types, not on " +
             type_spelling(t) + " (Sinew cannot know how to add or compare its members)",
         "reduce it with sinew::reduce::custom or sinew::reduce::custom_source and a function T f(T a, T b)");
  if (!(r.output->type == t))
    fail(errc::invalid_argument, path, "result '" + r.output->name + "'",
         "the result's type (" + type_spelling(r.output->type) + ") differs from the reduced vector's element type (" +
             type_spelling(t) + ")",
         t.known() ? "declare the result as sinew::result<cl_" + t.name + ">"
                   : std::string("declare the result with the vector's struct type"));
  if (r.op == Reducer::Op::custom) {
    if (r.identity.size() != t.size)
      fail(errc::invalid_argument, path, "reducer identity",
           "the identity is " + std::to_string(r.identity.size()) + " bytes, an element of '" + r.input->name + "' " +
               std::to_string(t.size),
           "pass an identity of the vector's element type");
    if (r.source.find(r.function) == std::string::npos)
      fail(errc::invalid_argument, path, "reducer function '" + r.function + "'",
           "the function is not defined in '" + r.origin + "'", "name a function T f(T a, T b) defined in that file");
    check_binary_operator(r.source, r.function, r.origin, path, "reducer function '" + r.function + "'");
    if (!t.known()) check_struct(r, path, input);
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
  n->children.push_back(detail::impl_of(body, "map_reduce"));
  n->reducer = std::move(reducer);
  return Node(n);
}

}  // namespace sinew
