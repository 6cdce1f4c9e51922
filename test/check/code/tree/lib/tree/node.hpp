// tree/node.hpp — the fake tree's node base.
#pragma once

namespace fake::detail {

class NodeImpl {
 public:
  virtual ~NodeImpl() = default;
  virtual int units() const { return 1; }
};

}  // namespace fake::detail
