// platform/settings.hpp — what each numeric setting accepts: one rule per setting, used both to
// check a value a program set in code and to read the same setting from text (variables, command
// lines). See sinew/options.hpp for what the settings mean.
#pragma once

#include "platform/checks.hpp"

#include <sinew/options.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sinew::detail {

struct CountRule {
  std::uint64_t min, max;
  std::uint64_t read(std::string_view text, const std::string& what) const { return parse::count(text, what, min, max); }
  void check(std::uint64_t v, const std::string& what) const { check_count(v, what, min, max); }
};

struct NumberRule {
  double min, max;
  bool min_open;
  double read(std::string_view text, const std::string& what) const {
    return parse::number(text, what, min, max, min_open);
  }
  void check(double v, const std::string& what) const { check_number(v, what, min, max, min_open); }
};

namespace rule {
inline constexpr NumberRule precision{0, 1, true};
inline constexpr CountRule quality{1, 1000};
inline constexpr CountRule max_executions{1, 100000};
inline constexpr CountRule derive_executions{0, 100000};
inline constexpr NumberRule time_budget_s{0, 86400, false};
inline constexpr NumberRule balanced_within{0, 1, true};
inline constexpr NumberRule weight{0, 1, true};
inline constexpr NumberRule trigger{0, 1, true};
inline constexpr CountRule level1_steps{1, 1000};
inline constexpr CountRule window{1, 1000};
inline constexpr CountRule level2_executions{1, 100000};
inline constexpr NumberRule chunk_mb{0, 65536, true};
inline constexpr CountRule overlap{1, 16};
inline constexpr CountRule copy_threads{0, 16};  // a staged chunk holds 16 pieces
}  // namespace rule

}  // namespace sinew::detail
