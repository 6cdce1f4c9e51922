// exec/reduce.hpp — the pieces of map_reduce that are not OpenCL calls: the reduction kernel's
// source for an operator and type, identities, and the host-side combination of partition values.
#pragma once

#include "tree/nodes/map_reduce.hpp"

#include <string>
#include <vector>

namespace sinew::detail {

// The name of the compile-time check, in the reduction kernels, that the OpenCL C element type
// has the C++ type's size: a build log that names it means the two differ.
inline constexpr const char* kSizeCheck = "sinew_element_size_differs_from_cpp_sizeof";
// What the library's reduction and scan kernels start with: SINEW_OP for the operator (the user's
// function after its source), fp64 enabled for doubles.
std::string operator_prelude(Reducer::Op op, const std::string& source, const std::string& function,
                             const ElementType& t);
// kernels/reduce.cl with SINEW_T and SINEW_OP defined for this reducer and element type.
std::string reduce_source(const Reducer& r, const ElementType& t);
// The neutral element of a built-in reduction (sum: 0, min: +inf/max, max: -inf/lowest).
std::vector<unsigned char> identity_of(Reducer::Op op, const ElementType& t);
// Combines the partitions' values of a built-in reduction on the host.
Value combine_builtin(Reducer::Op op, const std::vector<std::vector<unsigned char>>& parts, const ElementType& t);

}  // namespace sinew::detail
