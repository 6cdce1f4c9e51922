// platform/plan_items.hpp — the registry of plan items and schedule names.
//
// A schedule policy or a node kind may add knobs of its own to a plan (the dynamic schedule's
// chunk size, a divide-and-conquer tree's crossover level). Each is registered here once, by its
// owner's file (a static PlanItemRegistrar), as a row saying which values it accepts; Config keeps
// the values as text (Config::items). Config::parse, Config::set, Config::check, Config::str, the
// knowledge base's `plan` column and its exports all go through the rows, so a new item is
// parsed, checked, stored, printed and imported without touching them. Schedule policies register
// their names the same way, so that `schedule=<name>` is checked where plans are parsed, below
// the modules that hold the policies.
//
// Thread safety: registration happens while the library's static objects are made, before any
// plan is read; lookups afterwards only read.
#pragma once

#include <sinew/config.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail {

struct PlanItem {
  const char* name;   // as a plan names it (lower case) and the knowledge base stores it
  const char* owner;  // who reads it, for messages: "divide and conquer", "the dynamic schedule"
  // The schedule policy the item belongs to ("": any schedule). An item of another policy than the
  // plan's is refused (Config::check): min_chunk with the static schedule has no chunks to size.
  const char* schedule = "";
  // "" when `text` is accepted, otherwise what the item accepts ("a level from 0 to 40"): the
  // value alone, before any device is known.
  std::string (*accepts)(const std::string& text) = nullptr;
  // "" when the accepted value fits a runtime of `devices` devices, otherwise why not (a device
  // index beyond them). May be null: every accepted value fits.
  std::string (*fits)(const std::string& text, std::size_t devices) = nullptr;
};

// Registers an item; a second item of the same name is a programming error (std::logic_error).
void register_plan_item(const PlanItem& item);
// Every registered item, by name.
const std::vector<PlanItem>& plan_items();
const PlanItem* find_plan_item(std::string_view name);

// Registers a schedule policy's name (Config::schedule); a second registration of one name is a
// programming error (std::logic_error).
void register_schedule_name(const std::string& name);
// The registered names, "static" first.
const std::vector<std::string>& schedule_names();
bool is_schedule_name(std::string_view name);
// "'static' or 'dynamic'": the registered names, for messages.
std::string schedule_spellings();

// "fission, overlap, schedule, crossover, ...": every name a plan may give an item, for messages.
std::string item_names();
// The item name `name` is most likely a misspelling of (at most two edits away), or "".
std::string nearest_item(std::string_view name);

// The plan's items and, where it is not "static", its schedule, as plans print and store them:
// (name, value text), the schedule first, then the items by name.
std::vector<std::pair<std::string, std::string>> plan_item_values(const Config& c);

// Item `name` of `c` as a whole number (the item's owner registered it as one); nullopt when the
// plan does not set it.
std::optional<unsigned long long> whole_item(const Config& c, std::string_view name);
// A plan item's whole number from its text (digits only, at most 18: it fits 64 bits).
std::optional<unsigned long long> whole_number(const std::string& text);

// Registers a plan item (or a schedule name) while the library's static objects are made: a
// namespace-scope `const PlanItemRegistrar x{...};` in the owner's file.
struct PlanItemRegistrar {
  explicit PlanItemRegistrar(const PlanItem& item) { register_plan_item(item); }
  explicit PlanItemRegistrar(const std::string& schedule) { register_schedule_name(schedule); }
};

}  // namespace sinew::detail
