// tree/halo.cpp — sinew::halo: the argument of a stencil's neighbour units (exec/halo.hpp runs it).
#include "tree/node.hpp"

#include "platform/error.hpp"

#include <sstream>

namespace sinew {

namespace detail {
const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::none: return "boundary none";
    case Boundary::clamp: return "clamped";
    case Boundary::zero: return "zero";
    case Boundary::constant: return "constant";
  }
  return "?";
}
}  // namespace detail

Arg halo(const VectorRef& v, std::ptrdiff_t before, std::ptrdiff_t after, Boundary boundary) {
  auto bad = [&](const char* which, std::ptrdiff_t w) {
    std::ostringstream m;
    m << "halo of vector '" << v.name() << "': " << which << " = " << w << " is negative";
    detail::throw_error(errc::invalid_argument, m.str(),
                        {.node = "halo", .argument = which,
                         .fix = "give the number of neighbour units to read on that side (0 or more)"});
  };
  if (before < 0) bad("before", before);
  if (after < 0) bad("after", after);
  Arg a;
  a.kind = Arg::Kind::halo;
  a.vector = detail::VectorAccess::get(v);
  a.halo_before = static_cast<std::size_t>(before);
  a.halo_after = static_cast<std::size_t>(after);
  a.boundary = boundary;
  if (boundary == Boundary::zero || boundary == Boundary::constant) a.bytes.assign(v.type().size, 0);
  return a;
}
}  // namespace sinew
