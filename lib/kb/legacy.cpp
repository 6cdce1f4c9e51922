// kb/legacy.cpp — older spellings mapped to today's (see legacy.hpp).
#include "kb/legacy.hpp"

#include <sinew/options.hpp>

#include <utility>
#include <vector>

namespace sinew::detail::kb {

// ---------------------------------------------------------------------------------------------
// Strategy spellings.

namespace {

// Every superseded spelling and the value it meant; today's spelling comes from the enums.
const std::vector<std::pair<std::string_view, std::string>>& old_strategies() {
  static const std::vector<std::pair<std::string_view, std::string>> list = {
      {"even", std::string(to_string(Strategy::even_split))},
      {"50/50", std::string(to_string(Strategy::even_split))},
      {"cpu-assisted", std::string(to_string(Strategy::cpu_assisted))},
      {"assisted", std::string(to_string(Strategy::cpu_assisted))},
      {"nearest-neighbour", std::string(to_string(Interpolation::nearest))},
      {"inverse-distance", std::string(to_string(Interpolation::inverse_distance))},
  };
  return list;
}

constexpr std::string_view kScreen = "+screen";  // a derived plan checked by runs

}  // namespace

std::string canonical_strategy(std::string_view strategy) {
  std::string_view base = strategy, suffix;
  if (base.size() > kScreen.size() && base.ends_with(kScreen)) {
    base.remove_suffix(kScreen.size());
    suffix = kScreen;
  }
  for (const auto& [old, canonical] : old_strategies())
    if (base == old) return canonical + std::string(suffix);
  return std::string(strategy);
}

}  // namespace sinew::detail::kb
