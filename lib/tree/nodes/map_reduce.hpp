// tree/nodes/map_reduce.hpp — the map_reduce skeleton: a body over independent partitions, then a
// reduction of one vector it writes to one value (a Result).
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

// An operator as dumps and messages spell it ("sum", ...); reductions and scans share it.
const char* reducer_op_name(Reducer::Op op);

// Refuses a user operator `function` (a reduction's or a scan's) whose definition in `source`
// takes other than two parameters: the kernels generated around it call function(a, b), and would
// fail to compile in a generated file. `argument` names it in the message; `origin` the source.
void check_binary_operator(const std::string& source, const std::string& function, const std::string& origin,
                           const std::string& path, const std::string& argument);

// The OpenCL C name of the reduced element type: the vector's own for OpenCL types; for a struct,
// the reducer's type_name, else the type of its function's first parameter ("" when neither).
std::string reduction_type_name(const Reducer& r);

class MapReduceNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "map_reduce"; }
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  const VectorState* extra_vector() const override { return reducer.input.get(); }
  const Reducer* reduction() const override { return &reducer; }
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_flow(const Analysis& an, const std::string& path) const override;

  const NodeImpl& body() const { return *children[0]; }

  Reducer reducer;
};

}  // namespace sinew::detail
