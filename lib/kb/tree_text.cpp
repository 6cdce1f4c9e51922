// kb/tree_text.cpp — reading a stored tree description for what the tree can run (see
// tree_text.hpp).
#include "kb/tree_text.hpp"

#include <algorithm>
#include <set>
#include <vector>

namespace sinew::detail::kb {
namespace {

// How an argument line uses its vector (the argument kinds of Arg::describe that name one).
enum class Use { none, read, write, read_write, whole, halo };

// An argument's text ("out 'y'  y [float, unit 1]", "halo 'img' (1 before, 1 after, clamped)  img
// [int, unit 8]"): how it uses which vector. The name ends at the quote that what the dump writes
// after a name follows (names may themselves hold quotes).
Use read_argument(std::string_view text, std::string& vector) {
  struct Kind {
    std::string_view prefix;
    Use use;
  };
  static constexpr Kind kinds[] = {{"in '", Use::read},     {"out '", Use::write}, {"inout '", Use::read_write},
                                   {"whole '", Use::whole}, {"halo '", Use::halo}};
  for (const auto& kind : kinds) {
    if (!text.starts_with(kind.prefix)) continue;
    std::string_view rest = text.substr(kind.prefix.size());
    for (auto q = rest.find('\''); q != std::string_view::npos; q = rest.find('\'', q + 1)) {
      const std::string name(rest.substr(0, q));
      std::string_view after = rest.substr(q + 1);
      const std::string described = "  " + name + " [";
      const bool fits = kind.use == Use::halo
                            ? after.starts_with(" (") && after.find(")" + described) != std::string_view::npos
                            : after.starts_with(described);
      if (fits && !name.empty()) {
        vector = name;
        return kind.use;
      }
    }
  }
  return Use::none;
}

// Why a node line's node makes the partitions meet, or "" ("loop times=3 until(residual)").
std::string node_reason(std::string_view text) {
  const std::string_view kind = text.substr(0, text.find(' '));
  if (kind == "divide_and_conquer") return "its divide and conquer gathers the partitions' subproblems on one device";
  if (kind == "scan") return "its scan carries each partition's total to the next";
  if (kind == "loop" && text.find(" until(") != std::string_view::npos)
    return "its loop's predicate reads every partition's values each iteration";
  return "";
}

}  // namespace

std::optional<std::string> partitions_meet(std::string_view dump) {
  std::set<std::string> written;
  std::vector<std::string> halos, wholes;  // in order of appearance
  for (std::size_t start = 0; start < dump.size();) {
    const std::size_t end = std::min(dump.find('\n', start), dump.size());
    const std::string_view line = dump.substr(start, end - start);
    start = end + 1;
    const std::size_t spaces = line.find_first_not_of(' ');
    if (spaces == std::string_view::npos) continue;
    const std::string_view text = line.substr(spaces);
    const std::size_t digits = text.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos || !text.substr(digits).starts_with(": ")) {
      if (std::string why = node_reason(text); !why.empty()) return why;
      continue;
    }
    std::string vector;
    switch (read_argument(text.substr(digits + 2), vector)) {
      case Use::write:
      case Use::read_write: written.insert(vector); break;
      case Use::halo: halos.push_back(vector); break;
      case Use::whole: wholes.push_back(vector); break;
      default: break;
    }
  }
  for (const auto& v : halos)
    if (written.count(v)) return "it reads a halo of vector '" + v + "', which it writes";
  for (const auto& v : wholes)
    if (written.count(v)) return "it reads vector '" + v + "' whole while it writes its slices";
  return std::nullopt;
}

}  // namespace sinew::detail::kb
