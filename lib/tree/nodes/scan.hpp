// tree/nodes/scan.hpp — the scan leaf: an inclusive or exclusive prefix combination (sum, min,
// max or a user's associative function) of one vector, in place or into a second vector, over
// the whole vector across every partition.
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class ScanNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "scan"; }
  bool is_leaf() const override { return true; }
  std::string short_label() const override;
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;
  // A partition's result depends on the totals of every partition before it.
  bool joins_partitions() const override { return true; }

  // args: {inout(v)} in place, or {in(src), out(dst)}.
  const VectorState& input() const { return *args.front().vector; }
  const VectorState& output() const { return *args.back().vector; }

  ScanOp op;
  ScanKind scan_kind = ScanKind::inclusive;
};

}  // namespace sinew::detail
