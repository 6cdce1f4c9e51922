// tree/nodes/loop.hpp — the loop skeleton: its body a number of times, or until a predicate on
// the results of the iteration holds.
#pragma once

#include "tree/node.hpp"

namespace sinew::detail {

class LoopNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "loop"; }
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_flow(const Analysis& an, const std::string& path) const override;
  bool joins_partitions() const override { return has_predicate(); }
  const NodeImpl* predicate_scope() const override { return has_predicate() ? &body() : nullptr; }

  bool has_predicate() const { return until_result || until_state; }
  const NodeImpl& body() const { return *children[0]; }

  std::size_t times = 0;
  std::shared_ptr<ResultState> until_result;
  std::function<bool(const Value&)> until_value;
  std::function<bool(const LoopState&)> until_state;
};

}  // namespace sinew::detail
