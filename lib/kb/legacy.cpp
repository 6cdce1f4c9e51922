// kb/legacy.cpp — older spellings and counter-named vector features mapped to today's (see
// legacy.hpp), and the reader of Node::dump() text that gives a tree's vectors their positions.
#include "kb/legacy.hpp"

#include <sinew/options.hpp>

#include <algorithm>
#include <set>
#include <utility>

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

// ---------------------------------------------------------------------------------------------
// Positional vector features.

bool is_counter_name(std::string_view name) {
  return name.size() > 1 && name[0] == 'v' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

namespace {

constexpr std::string_view kSize = ".size";

// An argument line's text after "<i>: ": Arg::describe(), then, for in/out/inout/whole, two
// spaces and the vector's description "<name> [<type>, unit <u>[, <n> elements]]". False when it
// is none of those; `vector` is set for the kinds that have one.
bool read_argument(std::string_view text, std::optional<std::string>& vector) {
  vector.reset();
  for (std::string_view kind : {"scalar ", "local ", "iteration"})
    if (text.starts_with(kind)) return true;
  struct Kind {
    std::string_view prefix;
    bool described;  // followed by the vector's description
  };
  static constexpr Kind kinds[] = {{"in '", true},         {"out '", true},        {"inout '", true},
                                   {"whole '", true},      {"offset of '", false}, {"count of '", false},
                                   {"size of '", false}};
  for (const auto& kind : kinds) {
    if (!text.starts_with(kind.prefix)) continue;
    std::string_view rest = text.substr(kind.prefix.size());
    // The name ends at the quote that what the dump writes after a name follows (names may
    // themselves hold quotes).
    for (auto q = rest.find('\''); q != std::string_view::npos; q = rest.find('\'', q + 1)) {
      std::string_view name = rest.substr(0, q);
      std::string_view after = rest.substr(q + 1);
      if (after.starts_with(" (feature '")) {
        auto end = after.find("')");
        if (end == std::string_view::npos) continue;
        after.remove_prefix(end + 2);
      }
      bool fits = kind.described ? after.starts_with("  " + std::string(name) + " [") && after.ends_with("]")
                                 : after.empty();
      if (fits && !name.empty()) {
        vector = std::string(name);
        return true;
      }
    }
    return false;
  }
  return false;
}

// A node line's text (detail::node_name, then the node's settings). False when it names no node
// kind; `reducer_input` is set for a map_reduce node: "map_reduce reduce=<op>(<input>) -> <output>".
bool read_node(std::string_view text, std::optional<std::string>& reducer_input) {
  reducer_input.reset();
  if (text.starts_with("kernel '")) return true;  // the rest is the label, origin and settings
  std::string_view kind = text.substr(0, text.find(' '));
  static constexpr std::string_view kinds[] = {"blas.axpy", "blas.gemm", "fft", "copy", "pipeline", "loop", "map"};
  if (std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds)) return true;
  if (kind != "map_reduce") return false;
  constexpr std::string_view reduce = "map_reduce reduce=";
  if (!text.starts_with(reduce)) return text == "map_reduce";
  std::string_view rest = text.substr(reduce.size());
  auto open = rest.find('(');
  if (open == std::string_view::npos) return false;
  std::string_view op = rest.substr(0, open);
  if (op != "sum" && op != "min" && op != "max" && op != "custom") return false;
  auto close = rest.find(") -> ", open);
  if (close == std::string_view::npos) return false;
  std::string_view input = rest.substr(open + 1, close - open - 1);
  if (input.empty() || input == "?") return false;
  reducer_input = std::string(input);
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> dump_vectors(std::string_view dump) {
  std::vector<std::string> order;
  std::set<std::string, std::less<>> seen;
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) order.push_back(name);
  };
  // The node being read: its indentation, its next argument's index, its reducer's input (which
  // comes after its arguments, before its children: added when the next node line starts).
  std::optional<std::size_t> indent;
  std::size_t next_argument = 0;
  std::optional<std::string> reducer_input;

  if (dump.ends_with('\n')) dump.remove_suffix(1);
  if (dump.empty()) return std::nullopt;
  for (std::size_t start = 0; start <= dump.size();) {
    auto end = std::min(dump.find('\n', start), dump.size());
    std::string_view line = dump.substr(start, end - start);
    start = end + 1;

    std::size_t spaces = line.find_first_not_of(' ');
    if (spaces == std::string_view::npos) return std::nullopt;  // a dump has no blank lines
    std::string_view text = line.substr(spaces);
    std::size_t digits = text.find_first_not_of("0123456789");
    if (digits > 0 && digits != std::string_view::npos && text.substr(digits).starts_with(": ")) {
      // "<indent>    <i>: <argument>": the arguments of the node above, numbered from 0.
      if (!indent || spaces != *indent + 4) return std::nullopt;
      if (text.substr(0, digits) != std::to_string(next_argument++)) return std::nullopt;
      std::optional<std::string> vector;
      if (!read_argument(text.substr(digits + 2), vector)) return std::nullopt;
      if (vector) add(*vector);
      continue;
    }
    // A node: the root unindented, a child two spaces further in than its parent.
    if (spaces % 2 != 0 || (!indent && spaces != 0) || (indent && spaces > *indent + 2)) return std::nullopt;
    if (indent && spaces == 0) return std::nullopt;  // a second root
    if (reducer_input) add(*reducer_input);
    if (!read_node(text, reducer_input)) return std::nullopt;
    indent = spaces;
    next_argument = 0;
  }
  if (reducer_input) add(*reducer_input);
  return order;
}

std::optional<std::map<std::string, std::string>> positional_names(std::string_view dump) {
  auto vectors = dump_vectors(dump);
  if (!vectors) return std::nullopt;
  std::map<std::string, std::string> names;
  for (std::size_t k = 0; k < vectors->size(); ++k)
    if (is_counter_name((*vectors)[k])) names.emplace((*vectors)[k], std::string("v").append(std::to_string(k)));
  return names;
}

std::optional<KbFeatures> positional_features(const KbFeatures& features,
                                              const std::map<std::string, std::string>& names) {
  KbFeatures out;
  std::set<std::string, std::less<>> used;
  for (const auto& [name, value] : features) {
    std::string renamed = name;
    if (name.ends_with(kSize)) {
      std::string_view vector = std::string_view(name).substr(0, name.size() - kSize.size());
      if (is_counter_name(vector)) {
        auto it = names.find(std::string(vector));
        if (it == names.end()) return std::nullopt;
        renamed = it->second + std::string(kSize);
      }
    }
    if (!used.insert(renamed).second) return std::nullopt;
    out.emplace_back(std::move(renamed), value);
  }
  return out;
}

}  // namespace sinew::detail::kb
