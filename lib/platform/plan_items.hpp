// platform/plan_items.hpp — plan items beyond the split and the platforms' configuration.
//
// A schedule or a skeleton may add knobs of its own to a plan (a dynamic schedule's chunk size,
// a divide-and-conquer tree's crossover level). Each is a field of Config plus one row of
// plan_items() (config.cpp): Config::parse and Config::str, the knowledge base's `plan` column
// and its exports all go through the rows, so a new item is stored, printed and imported without
// touching them.
#pragma once

#include <sinew/config.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

struct PlanItem {
  const char* name;  // as a plan names it (lower case) and the knowledge base stores it
  // Its value as text, or nullopt at its default (a default is neither printed nor stored).
  std::optional<std::string> (*get)(const Config&);
  // Sets it from text. Returns "" when `text` is accepted, otherwise what the item accepts.
  std::string (*set)(Config&, const std::string& text);
};

const std::vector<PlanItem>& plan_items();
const PlanItem* find_plan_item(const std::string& name);

// The items of `c` that are not at their defaults, in plan_items() order: (name, value text).
std::vector<std::pair<std::string, std::string>> plan_item_values(const Config& c);

}  // namespace sinew::detail
