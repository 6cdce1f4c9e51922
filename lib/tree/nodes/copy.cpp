// tree/nodes/copy.cpp — building and checking the copy leaf.
#include "tree/nodes/copy.hpp"

namespace sinew {
namespace detail {
namespace {
std::string type_text(const ElementType& t) {
  return t.known() ? t.name : "a " + std::to_string(t.size) + "-byte struct";
}
}  // namespace

std::string CopyNode::argument() const { return "'" + args[0].vector->name + "' -> '" + args[1].vector->name + "'"; }

void CopyNode::check_structure(const std::string& path, StructureFacts&) const {
  // A copy moves bytes: between element types it would reinterpret them (float bits as ints).
  const auto& s = *args[0].vector;
  const auto& d = *args[1].vector;
  if (!(s.type == d.type))
    fail(errc::invalid_argument, path, argument(),
         "copy(" + s.name + ", " + d.name + ") copies elements of " + type_text(s.type) + " into a vector of " +
             type_text(d.type) + ": their bytes would be reinterpreted, not converted",
         "copy between vectors of one element type, or convert with a kernel (in(" + s.name + "), out(" + d.name +
             "))");
}

void CopyNode::check_shapes(const Analysis&, const std::string& path) const {
  const auto& s = *args[0].vector;
  const auto& d = *args[1].vector;
  if (s.unit != d.unit)
    fail(errc::invalid_argument, path, argument(),
         "copy(" + s.name + ", " + d.name + ") copies units of " + std::to_string(s.unit) + " elements into units of " +
             std::to_string(d.unit) + ": each slice would be cut at other elements",
         "give both vectors the same unit()");
}

}  // namespace detail

Node copy(const VectorRef& src, const VectorRef& dst) {
  auto n = std::make_shared<detail::CopyNode>();
  n->args = {in(src), out(dst)};
  return Node(n);
}

}  // namespace sinew
