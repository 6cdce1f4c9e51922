// kb/check.cpp — validation of stored entries, runs and events (see check.hpp).
#include "kb/check.hpp"

#include <sinew/error.hpp>

#include "kb/json.hpp"

#include <cmath>
#include <cstdint>
#include <set>

namespace sinew::detail::kb {

[[noreturn]] void invalid(const std::string& what) {
  throw Error(sinew::errc::invalid_argument, "knowledge base: " + what);
}

namespace {

void check_finite(double v, const std::string& what, bool non_negative = true) {
  if (!std::isfinite(v)) invalid(what + " is not a finite number");
  if (non_negative && v < 0) invalid(what + " is negative (" + json::number(v) + ")");
}

}  // namespace

// Valid UTF-8: what SQLite stores as TEXT and JSON exports carry.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // No overlong forms, no surrogates, nothing past U+10FFFF.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n;
  }
  return true;
}

namespace {

void check_text(std::string_view s, const std::string& what) {
  if (!valid_utf8(s)) invalid(what + " is not valid UTF-8");
}

void check_key(const KbKey& key) {
  if (key.tree.empty()) invalid("the key has no tree signature");
  if (key.devices.empty()) invalid("the key has no device set");
  if (key.library.empty()) invalid("the key has no library version");
}

void check_features(const KbFeatures& features) {
  std::set<std::string> names;
  for (const auto& [name, value] : features) {
    if (name.empty()) invalid("a feature has no name");
    check_text(name, "feature name");
    if (!names.insert(name).second) invalid("feature '" + name + "' is given twice");
    check_finite(value, "feature '" + name + "'", false);
  }
}

// The runtime's own rules for a plan (Config::check), for `devices` devices.
void check_config(const Config& c, std::size_t devices, const std::string& what) {
  if (c.shares.empty()) invalid(what + " has no shares");
  try {
    c.check(devices, what);
  } catch (const Error& e) {
    invalid(e.message());
  }
}

void check_times(const std::vector<double>& times, const std::string& what) {
  for (std::size_t i = 0; i < times.size(); ++i) check_finite(times[i], what + " " + std::to_string(i));
}

// What an entry may be: the provenances a stored plan can have.
bool is_stored_provenance(Provenance p) {
  return p == Provenance::trained || p == Provenance::derived || p == Provenance::balanced || p == Provenance::manual;
}
bool is_purpose(std::string_view p) { return p == "training" || p == "balancing" || p == "execution"; }

// What entries and runs share: a key, features, a configuration and its time (`whose`: "the
// entry", "the run").
template <class T>
void check_plan(const T& x, const std::string& whose) {
  check_key(x.key);
  check_text(x.key.tree, whose + "'s tree signature");
  check_text(x.key.devices, whose + "'s device set");
  check_text(x.key.library, whose + "'s library version");
  check_features(x.features);
  check_config(x.config, device_count(x.key.devices), whose + "'s config");
  check_finite(x.time_ms, whose + "'s time");
}

}  // namespace

// A provenance column or field: its one spelling, else nothing.
std::optional<Provenance> stored_provenance(std::string_view text) {
  auto p = provenance_from_string(text);
  if (p && is_stored_provenance(*p)) return p;
  return std::nullopt;
}

void check_entry(const KbEntry& e) {
  check_plan(e, "the entry");
  check_text(e.strategy, "the entry's strategy");
  check_finite(e.precision, "the entry's precision");
  if (e.executions < 0) invalid("the entry's executions are negative");
  if (!is_stored_provenance(e.provenance))
    invalid("provenance '" + std::string(to_string(e.provenance)) + "' is none of trained, derived, balanced, manual");
}

void check_run(const KbRun& r) {
  check_plan(r, "the run");
  check_times(r.partition_ms, "the run's partition time");
  check_times(r.device_ms, "the run's device time");
  if (!r.device_ms.empty() && r.device_ms.size() != r.config.shares.size())
    invalid("the run has " + std::to_string(r.device_ms.size()) + " device times for " +
            std::to_string(r.config.shares.size()) + " shares");
  if (!is_purpose(r.purpose)) invalid("purpose '" + r.purpose + "' is none of training, balancing, execution");
}

void check_event(const KbEvent& e) {
  if (e.level != 1 && e.level != 2) invalid("event level " + std::to_string(e.level) + " is neither 1 nor 2");
  check_config(e.before, e.before.shares.size(), "the event's config before");
  check_config(e.after, e.before.shares.size(), "the event's config after");
  check_finite(e.time_ms, "the event's time");
  check_times(e.partition_ms, "the event's partition time");
  check_finite(e.deviation, "the event's deviation");
  check_finite(e.lbt, "the event's lbt");
}

}  // namespace sinew::detail::kb
