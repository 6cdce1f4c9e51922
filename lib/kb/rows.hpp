// kb/rows.hpp — entries, runs and events as table rows: the JSON text of their list columns
// (shares, partition times; features are kb/features.hpp's), and rows read back into values,
// anything malformed reported as a damaged file.
#pragma once

#include <sinew/kb.hpp>

#include "kb/json.hpp"
#include "kb/sqlite.hpp"

#include <string>
#include <vector>

namespace sinew::detail::kb {

// A list of numbers as a JSON array (value and text), and a Config as a JSON object (exports).
json::Value numbers_value(const std::vector<double>& numbers);
std::string numbers_text(const std::vector<double>& numbers);
json::Value config_value(const Config& c);
// A Config's plan items (platform/plan_items.hpp) as the `plan` column's JSON object text.
std::string plan_text(const Config& c);
// Sets `c`'s plan items from a JSON object of name -> value text (the `plan` column, an export's
// "plan"). Returns "" when they are all known and accepted, otherwise what is wrong.
std::string apply_plan(Config& c, const json::Value& plan);

// A row of `SELECT kEntryColumns FROM entries` (likewise runs, events) read back. Throws
// Error(errc::knowledge_base) for a column that is not what the store writes.
inline constexpr const char* kEntryColumns =
    "id, tree, devices, library, features, fission, overlap, shares, time_ms, provenance, source, precision, "
    "quality, executions, strategy, created, updated, plan";
KbEntry entry_from(const Statement& s);

inline constexpr const char* kRunColumns =
    "id, tree, devices, library, features, fission, overlap, shares, time_ms, partition_ms, purpose, created, plan, device_ms";
KbRun run_from(const Statement& s);

inline constexpr const char* kEventColumns =
    "id, entry, execution, level, fission_before, overlap_before, shares_before, fission_after, overlap_after, "
    "shares_after, time_ms, partition_ms, deviation, lbt, created, plan_before, plan_after";
KbEvent event_from(const Statement& s);

}  // namespace sinew::detail::kb
