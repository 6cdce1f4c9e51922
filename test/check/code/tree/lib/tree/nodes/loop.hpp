// tree/nodes/loop.hpp — a node kind, and one deriving from it.
#pragma once

#include "tree/node.hpp"

namespace fake::detail {

class LoopNode : public NodeImpl {
 public:
  int units() const override { return 2; }
};

class WhileNode final : public LoopNode {};

// Not a node: a plain struct of the same folder.
struct LoopFacts {
  int iterations = 0;
};

}  // namespace fake::detail
