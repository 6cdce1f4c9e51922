// kb/check.hpp — validation of what the knowledge base stores: entries, runs and events are
// checked before anything is written (by the store's methods and by import_json), and rejected
// with errc::invalid_argument ("knowledge base: ...").
#pragma once

#include <sinew/kb.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace sinew::detail::kb {

// Throws Error(errc::invalid_argument, "knowledge base: " + what).
[[noreturn]] void invalid(const std::string& what);

// A provenance column or field: its one spelling, else nothing (also for a provenance that no
// stored plan can have).
std::optional<Provenance> stored_provenance(std::string_view text);

// Valid UTF-8, no overlong forms, no surrogates.
bool valid_utf8(std::string_view s);

void check_entry(const KbEntry& e);
void check_run(const KbRun& r);
void check_event(const KbEvent& e);

}  // namespace sinew::detail::kb
