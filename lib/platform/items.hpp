// platform/items.hpp — the comma-separated lists of device selections and plans (Config::parse).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace sinew::detail {

// The non-empty items of "a, b,,c", each trimmed of spaces and tabs.
inline std::vector<std::string> split_items(const std::string& spec) {
  std::vector<std::string> items;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace sinew::detail
