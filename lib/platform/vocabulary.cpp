// platform/vocabulary.cpp — the one spelling of every option enum and of Provenance, and the
// checks behind every setting (sinew::parse): what the environment reader, the samples and `sinew`
// share.
#include "platform/checks.hpp"
#include "platform/error.hpp"
#include "platform/items.hpp"

#include <sinew/options.hpp>

#include <cerrno>
#include <cctype>
#include <charconv>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace sinew {

namespace {
template <class E>
struct Names;
template <>
struct Names<Strategy> {
  static constexpr std::pair<Strategy, std::string_view> all[] = {
      {Strategy::even_split, "even_split"}, {Strategy::cpu_assisted, "cpu_assisted"}, {Strategy::model, "model"}};
};
template <>
struct Names<Interpolation> {
  static constexpr std::pair<Interpolation, std::string_view> all[] = {
      {Interpolation::nearest, "nearest"}, {Interpolation::inverse_distance, "inverse_distance"},
      {Interpolation::cost_model, "cost_model"}};
};
template <>
struct Names<UnseenPolicy> {
  static constexpr std::pair<UnseenPolicy, std::string_view> all[] = {{UnseenPolicy::derive, "derive"},
                                                                      {UnseenPolicy::train, "train"}};
};
template <>
struct Names<TransferMode> {
  static constexpr std::pair<TransferMode, std::string_view> all[] = {{TransferMode::staged, "staged"},
                                                                      {TransferMode::direct, "direct"}};
};
template <>
struct Names<WaitMode> {
  static constexpr std::pair<WaitMode, std::string_view> all[] = {
      {WaitMode::automatic, "automatic"}, {WaitMode::block, "block"}, {WaitMode::poll, "poll"}};
};
template <>
struct Names<Provenance> {
  static constexpr std::pair<Provenance, std::string_view> all[] = {
      {Provenance::manual, "manual"},   {Provenance::default_plan, "default_plan"},
      {Provenance::knowledge_base, "knowledge_base"}, {Provenance::trained, "trained"},
      {Provenance::derived, "derived"}, {Provenance::balanced, "balanced"},
  };
};
template <>
struct Names<LogLevel> {
  static constexpr std::pair<LogLevel, std::string_view> all[] = {
      {LogLevel::info, "info"}, {LogLevel::warning, "warning"}, {LogLevel::progress, "progress"}};
};

template <class E>
std::string_view name_of(E v) noexcept {
  for (const auto& [e, name] : Names<E>::all)
    if (e == v) return name;
  return "?";
}
}  // namespace

std::string_view to_string(Strategy v) noexcept { return name_of(v); }
std::string_view to_string(Interpolation v) noexcept { return name_of(v); }
std::string_view to_string(UnseenPolicy v) noexcept { return name_of(v); }
std::string_view to_string(TransferMode v) noexcept { return name_of(v); }
std::string_view to_string(WaitMode v) noexcept { return name_of(v); }
std::string_view to_string(LogLevel v) noexcept { return name_of(v); }
std::string_view to_string(Provenance v) noexcept { return name_of(v); }

template <class E>
std::optional<E> from_string(std::string_view text) noexcept {
  for (const auto& [e, name] : Names<E>::all)
    if (name == text) return e;
  return std::nullopt;
}

std::optional<Provenance> provenance_from_string(std::string_view text) noexcept {
  return from_string<Provenance>(text);
}

template <class E>
std::string spellings() {
  std::string out;
  const std::size_t n = std::size(Names<E>::all);
  for (std::size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(Names<E>::all[i].second);
  return out;
}

namespace {
[[noreturn]] void refuse(const std::string& what, std::string_view text, const std::string& accepted) {
  detail::throw_error(errc::invalid_argument, what + " = '" + std::string(text) + "' is not " + accepted,
                      {.argument = what, .fix = "give " + accepted});
}

std::string range_text(double min, double max, bool min_open) {
  std::ostringstream s;
  s << "a number " << (min_open ? "greater than " : "from ") << min << (min_open ? " and at most " : " to ") << max;
  return s.str();
}

std::string count_text(std::uint64_t min, std::uint64_t max) {
  return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
}

// What a setting accepts: a value read from text (sinew::parse) and one set in code alike.
bool within(std::uint64_t v, std::uint64_t min, std::uint64_t max) { return v >= min && v <= max; }
bool within(double v, double min, double max, bool min_open) {
  return std::isfinite(v) && v <= max && (min_open ? v > min : v >= min);
}
}  // namespace

namespace detail {
void check_count(std::uint64_t v, const std::string& what, std::uint64_t min, std::uint64_t max) {
  if (!within(v, min, max)) refuse(what, std::to_string(v), count_text(min, max));
}

void check_number(double v, const std::string& what, double min, double max, bool min_open) {
  if (!within(v, min, max, min_open)) {
    std::ostringstream text;
    text << v;
    refuse(what, text.str(), range_text(min, max, min_open));
  }
}
}  // namespace detail

namespace parse {

std::uint64_t count(std::string_view text, const std::string& what, std::uint64_t min, std::uint64_t max) {
  const std::string accepted = count_text(min, max);
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end || !within(v, min, max)) refuse(what, text, accepted);
  return v;
}

double number(std::string_view text, const std::string& what, double min, double max, bool min_open) {
  const std::string accepted = range_text(min, max, min_open);
  const std::string s(text);
  char* stop = nullptr;
  errno = 0;
  const double v = s.empty() || std::isspace(static_cast<unsigned char>(s[0])) ? NAN : std::strtod(s.c_str(), &stop);
  if (s.empty() || stop != s.c_str() + s.size() || errno == ERANGE || !within(v, min, max, min_open))
    refuse(what, text, accepted);
  return v;
}

bool flag(std::string_view text, const std::string& what) {
  for (std::string_view yes : {"1", "true", "yes", "on"})
    if (text == yes) return true;
  for (std::string_view no : {"0", "false", "no", "off"})
    if (text == no) return false;
  refuse(what, text, "1, 0, true, false, yes, no, on or off");
}

template <class E>
E choice(std::string_view text, const std::string& what) {
  if (auto v = from_string<E>(text)) return *v;
  refuse(what, text, spellings<E>());
}

namespace {
// A whole number of bytes with an optional unit, 0 included; malformed text is refused.
std::uint64_t size_in_bytes(std::string_view text, const std::string& what) {
  const std::string accepted = "a size: a whole number of bytes, or with a unit KB, MB, GB or TB (e.g. 256MB)";
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc()) refuse(what, text, accepted);
  std::string unit(stop, end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB") shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB") shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB") shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB") shift = 40;
  if (shift < 0 || v > (std::numeric_limits<std::uint64_t>::max() >> shift)) refuse(what, text, accepted);
  return v << shift;
}

// A size of 0 reads as a size: the message says what is wrong with it (`rule`) and the fix.
[[noreturn]] void refuse_zero(const std::string& what, std::string_view text, const std::string& rule,
                              const std::string& fix) {
  detail::throw_error(errc::invalid_argument, what + " = '" + std::string(text) + "' is 0 bytes: " + rule,
                      {.argument = what, .fix = fix});
}
}  // namespace

std::uint64_t bytes(std::string_view text, const std::string& what) {
  const std::uint64_t v = size_in_bytes(text, what);
  if (v == 0) refuse_zero(what, text, "a size must be above 0", "give at least 1 byte (e.g. 64MB)");
  return v;
}

std::vector<std::pair<std::string, std::uint64_t>> memory_caps(std::string_view text, const std::string& what) {
  std::vector<std::pair<std::string, std::uint64_t>> caps;
  for (const std::string& item : detail::split_items(std::string(text))) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      refuse(what, text, "selection=size items, comma-separated, e.g. gpu:0=256MB,cpu:1=64MB");
    std::string selection = item.substr(0, eq);
    selection.erase(selection.find_last_not_of(" \t") + 1);
    std::string size = item.substr(eq + 1);
    size.erase(0, size.find_first_not_of(" \t"));
    const std::string named = what + " (" + selection + ")";
    const std::uint64_t cap = size_in_bytes(size, named);
    if (cap == 0)
      refuse_zero(named, size, "a memory cap must be above 0 (no run fits in no memory)",
                  "give the device at least 1 byte (e.g. " + selection + "=64MB), or leave it out of the run with "
                  "SINEW_DEVICES");
    caps.emplace_back(selection, cap);
  }
  return caps;
}
}  // namespace parse

#define SINEW_ENUM_TEXT(E)                                                 \
  template std::optional<E> from_string<E>(std::string_view) noexcept;     \
  template std::string spellings<E>();                                     \
  template E parse::choice<E>(std::string_view, const std::string&);
SINEW_ENUM_TEXT(Strategy)
SINEW_ENUM_TEXT(Interpolation)
SINEW_ENUM_TEXT(UnseenPolicy)
SINEW_ENUM_TEXT(TransferMode)
SINEW_ENUM_TEXT(WaitMode)
SINEW_ENUM_TEXT(LogLevel)
#undef SINEW_ENUM_TEXT

}  // namespace sinew
