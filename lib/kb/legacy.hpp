// kb/legacy.hpp — what older Sinew versions wrote into knowledge bases and exports, and how it
// reads today. The one source of truth for both the schema migrations (kb/migrate.cpp, migration
// 003) and KnowledgeBase::import_json (exports written before them).
#pragma once

#include <string>
#include <string_view>

namespace sinew::detail::kb {

// --- Strategy spellings (migration 003) ---
// entries.strategy today: to_string(Strategy) ("even_split", "cpu_assisted") for trained entries,
// the interpolator's name (to_string(Interpolation): "nearest", "inverse_distance") for derived
// ones, followed by "+screen" when runs checked the derived plan, "balancer", or "". Older
// versions wrote "even", "50/50", "cpu-assisted", "assisted", "nearest-neighbour" and
// "inverse-distance" (each possibly followed by "+screen"): those are mapped to today's spelling;
// anything else is returned as it is.
std::string canonical_strategy(std::string_view strategy);

}  // namespace sinew::detail::kb
