// tree/nodes/copy.cpp — building and checking the copy leaf.
#include "tree/nodes/copy.hpp"

namespace sinew {
namespace detail {

void CopyNode::check_shapes(const Analysis&, const std::string& path) const {
  const auto& s = *args[0].vector;
  const auto& d = *args[1].vector;
  if (s.type.size != d.type.size || s.unit != d.unit)
    fail(errc::invalid_argument, path, "'" + s.name + "' -> '" + d.name + "'",
         "copy needs vectors of the same element size and unit", "copy between vectors of one shape");
}

}  // namespace detail

Node copy(const VectorRef& src, const VectorRef& dst) {
  auto n = std::make_shared<detail::CopyNode>();
  n->args = {in(src), out(dst)};
  return Node(n);
}

}  // namespace sinew
