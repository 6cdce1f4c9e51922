// kb/legacy.hpp — what older Sinew versions wrote into knowledge bases and exports, and how it
// reads today. The one source of truth for both the schema migrations (kb/migrate.cpp, migrations
// 003 and 004) and KnowledgeBase::import_json (exports written before them).
#pragma once

#include <sinew/kb.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinew::detail::kb {

// --- Strategy spellings (migration 003) ---
// entries.strategy today: to_string(Strategy) ("even_split", "cpu_assisted") for trained entries,
// the interpolator's name (to_string(Interpolation): "nearest", "inverse_distance") for derived
// ones, followed by "+screen" when runs checked the derived plan, "balancer", or "". Older
// versions wrote "even", "50/50", "cpu-assisted", "assisted", "nearest-neighbour" and
// "inverse-distance" (each possibly followed by "+screen"): those are mapped to today's spelling;
// anything else is returned as it is.
std::string canonical_strategy(std::string_view strategy);

// --- Positional vector features (migration 004) ---
// The schema version from which a knowledge base (and an export's "schema") names the features
// of unnamed vectors by position in the tree ("v<k>.size") instead of by a process-wide counter.
inline constexpr int kPositionalFeaturesVersion = 4;

// A counter-made vector name: "v" and decimal digits ("v17").
bool is_counter_name(std::string_view name);

// The vector names of a tree's Node::dump() text (lib/tree/tree.cpp, dump_node) in the order of
// first appearance that Node::signature() numbers vectors by: nodes in pre-order; within a node
// each argument with a vector (in, out, inout, whole, offset of, count of, size of) in argument
// order, then a reducer's input. Nothing when the text is not such a dump. The dump shows names
// only: two vectors given one name read as one.
std::optional<std::vector<std::string>> dump_vectors(std::string_view dump);

// Counter-made names of dump_vectors(dump) -> "v<k>", k the vector's position among all of the
// tree's vectors (named ones keep their names but count). Nothing when the dump cannot be read.
std::optional<std::map<std::string, std::string>> positional_names(std::string_view dump);

// `features` with each "<counter name>.size" renamed by `names`; other features as they are.
// Nothing when one names a vector that `names` lacks (the row was written by a process that
// numbered the vectors otherwise than the one whose dump is stored) or two would share a name.
std::optional<KbFeatures> positional_features(const KbFeatures& features,
                                              const std::map<std::string, std::string>& names);

}  // namespace sinew::detail::kb
