// platform/checks.hpp — range checks of settings a program gave in code, worded like the checks of
// the same settings read from text (sinew::parse): "what = value is not <accepted>".
#pragma once

#include <cstdint>
#include <string>

namespace sinew::detail {

// Throws sinew::Error(errc::invalid_argument) unless min <= v <= max.
void check_count(std::uint64_t v, const std::string& what, std::uint64_t min, std::uint64_t max);
// Throws unless v is finite and within [min, max] ((min, max] with min_open).
void check_number(double v, const std::string& what, double min, double max, bool min_open = false);

}  // namespace sinew::detail
