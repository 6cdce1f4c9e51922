// kb/tree_text.hpp — what a stored tree description (Node::dump() text, lib/tree/tree.cpp) says
// about the plans the tree can run, for checks made where only the text is at hand (an import):
// the knowledge base knows no tree module. The runtime's own rule is Analysis::streamable
// (lib/tree/analysis.cpp); this reads the same facts from the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sinew::detail::kb {

// Why the partitions of the tree dumped as `dump` meet while it runs, so that it cannot run a plan
// with the dynamic schedule: a divide-and-conquer or scan node, a loop with a predicate, a vector
// it writes and reads with a halo, a vector it writes and reads whole. In a few words ("it reads a
// halo of vector 'img', which it writes"); nothing when the text shows none of these, or is no
// dump this reader knows (the runtime checks the plan again against the tree itself).
std::optional<std::string> partitions_meet(std::string_view dump);

}  // namespace sinew::detail::kb
