// tree/nodes/fft.cpp — building and checking the clFFT leaf.
#include "tree/nodes/fft.hpp"

#include "tree/analysis.hpp"

namespace sinew {
namespace detail {

void FftNode::sign(std::ostream& s, const std::function<std::string(const VectorState*)>&) const {
  s << (direction == FftDirection::forward ? "fwd;" : "inv;");
}

void FftNode::check_shapes(const Analysis&, const std::string& path) const {
  const auto& v = *args[0].vector;
  if (v.type.name != "float2")
    fail(errc::invalid_argument, path, "vector '" + v.name + "'",
         "fft works on complex single precision (cl_float2), not " + v.type.name, "use sinew::vector<cl_float2>");
  std::size_t len = v.unit;
  for (std::size_t p : {2, 3, 5, 7, 11, 13})
    while (len % p == 0) len /= p;
  if (len != 1)
    fail(errc::invalid_argument, path, "vector '" + v.name + "' unit",
         "clFFT cannot transform length " + std::to_string(v.unit) + " (only products of 2, 3, 5, 7, 11, 13)",
         "use a transform length such as a power of two");
}

}  // namespace detail

Node fft(const VectorRef& data, FftDirection direction) {
  auto n = std::make_shared<detail::FftNode>();
  n->direction = direction;
  n->args = {inout(data)};
  return Node(n);
}

}  // namespace sinew
