// tree/nodes/scan.cpp — building scan leaves and their operators, and checking them.
#include "tree/nodes/scan.hpp"

#include "platform/hash.hpp"
#include "tree/analysis.hpp"
#include "tree/nodes/kernel.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <cstdint>
#include <limits>

namespace sinew {
namespace detail {
namespace {
const char* scan_kind_name(ScanKind k) { return k == ScanKind::inclusive ? "inclusive" : "exclusive"; }
}  // namespace

std::string ScanNode::short_label() const {
  return std::string("scan.") + (op.op == Reducer::Op::custom ? op.function : reducer_op_name(op.op));
}

void ScanNode::dump_settings(std::ostream& s) const {
  s << " op=" << reducer_op_name(op.op) << " " << scan_kind_name(scan_kind);
  if (op.op == Reducer::Op::custom) s << " using " << op.function << " from " << op.origin;
}

void ScanNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>&) const {
  // The arguments (in place or not) are signed by every leaf's common part.
  s << "scan" << static_cast<int>(op.op) << scan_kind_name(scan_kind) << op.function << hash_hex(op.source);
}

void ScanNode::check_structure(const std::string& path, StructureFacts&) const {
  const VectorState& in = input();
  const VectorState& out = output();
  const std::string arg = "vector '" + in.name + "'";
  if (op.op != Reducer::Op::custom) {
    if (!in.type.known() || in.type.lanes != 1)
      fail(errc::invalid_argument, path, arg,
           std::string("the built-in ") + reducer_op_name(op.op) + " scan works on scalar element types, not " +
               (in.type.known() ? in.type.name : std::string("an opaque type")),
           "scan a vector of int, uint, long, ulong, float, double, ... or give an associative function with "
           "sinew::scan_op::custom_source");
  } else {
    // The kernels are generated around the function, so the element type needs its OpenCL C name.
    if (!in.type.known())
      fail(errc::invalid_argument, path, arg,
           "a scan needs an OpenCL element type (float, int2, ...); the vector's type is opaque to Sinew",
           "scan a vector of an OpenCL C type");
    if (op.identity.size() != in.type.size)
      fail(errc::invalid_argument, path, "scan identity",
           "the identity has " + std::to_string(op.identity.size()) + " bytes but an element of '" + in.name +
               "' (" + in.type.name + ") has " + std::to_string(in.type.size),
           "pass an identity of the vector's element type (cl_" + in.type.name + ")");
    if (op.function.empty() || op.source.find(op.function) == std::string::npos)
      fail(errc::invalid_argument, path, "scan function '" + op.function + "'",
           "the function is not defined in '" + op.origin + "'",
           "name a function T f(T a, T b) defined in that source");
    check_binary_operator(op.source, op.function, op.origin, path, "scan function '" + op.function + "'");
  }
  if (&in != &out && !(in.type == out.type))
    fail(errc::invalid_argument, path, "vector '" + out.name + "'",
         "the scan's output has another element type (" + (out.type.known() ? out.type.name : "opaque") +
             ") than its input '" + in.name + "' (" + (in.type.known() ? in.type.name : "opaque") + ")",
         "declare the output as sinew::vector<cl_" + in.type.name + ">");
}

void ScanNode::check_shapes(const Analysis& an, const std::string& path) const {
  const VectorState& in = input();
  const VectorState& out = output();
  if (in.unit != out.unit)
    fail(errc::invalid_argument, path, "'" + in.name + "' -> '" + out.name + "'",
         "a scan's input and output need the same unit (" + std::to_string(in.unit) + " and " +
             std::to_string(out.unit) + " elements): they are split at the same elements",
         "give both vectors the same unit()");
  // The kernels index a slice with 32-bit unsigned integers (as the reductions do), and a block
  // may reach past the slice's end: half the range keeps every index from wrapping, whatever the
  // plan (one partition may hold the whole vector).
  const std::size_t elements = an.use(&in).elements;
  if (elements > std::numeric_limits<std::int32_t>::max())
    fail(errc::invalid_argument, path, "vector '" + in.name + "'",
         "a scan handles up to 2147483647 elements, not " + std::to_string(elements),
         "scan the vector in parts of at most 2^31 - 1 elements");
}

}  // namespace detail

namespace scan_op {
namespace {
ScanOp builtin(Reducer::Op op) {
  ScanOp o;
  o.op = op;
  return o;
}
}  // namespace
ScanOp sum() { return builtin(Reducer::Op::sum); }
ScanOp min() { return builtin(Reducer::Op::min); }
ScanOp max() { return builtin(Reducer::Op::max); }
ScanOp custom_source_bytes(const std::string& source, const std::string& function, const std::string& origin) {
  ScanOp o = builtin(Reducer::Op::custom);
  o.source = source;
  o.function = function;
  o.origin = origin;
  return o;
}
ScanOp custom_bytes(const std::string& file, const std::string& function) {
  auto src = detail::load_kernel_source(file);
  return custom_source_bytes(src->text, function, src->origin);
}
}  // namespace scan_op

namespace {
Node make_scan(std::vector<Arg> args, ScanOp op, ScanKind kind) {
  auto n = std::make_shared<detail::ScanNode>();
  n->args = std::move(args);
  n->op = std::move(op);
  n->scan_kind = kind;
  return Node(n);
}
}  // namespace

Node scan(const VectorRef& v, ScanOp op, ScanKind kind) { return make_scan({inout(v)}, std::move(op), kind); }

Node scan(const VectorRef& in, const VectorRef& out, ScanOp op, ScanKind kind) {
  // The same vector twice is the in-place scan: one inout argument, not a slice read and written
  // through two arguments.
  if (in == out) return scan(in, std::move(op), kind);
  return make_scan({sinew::in(in), sinew::out(out)}, std::move(op), kind);
}

}  // namespace sinew
