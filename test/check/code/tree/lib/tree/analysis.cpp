// tree/analysis.cpp — inside lib/tree, a node kind may be asked for by its class.
#include "tree/nodes/loop.hpp"

namespace fake::detail {

bool is_loop(const NodeImpl& n) { return dynamic_cast<const LoopNode*>(&n) != nullptr; }

}  // namespace fake::detail
