// kb/check.cpp — validation of stored entries, runs and events (see check.hpp).
#include "kb/check.hpp"

#include <sinew/error.hpp>

#include "kb/json.hpp"

#include <cmath>
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

void check_key(const KbKey& key) {
  if (key.tree.empty()) invalid("the key has no tree signature");
  if (key.devices.empty()) invalid("the key has no device set");
  if (key.library.empty()) invalid("the key has no library version");
}

void check_features(const KbFeatures& features) {
  std::set<std::string> names;
  for (const auto& [name, value] : features) {
    if (name.empty()) invalid("a feature has no name");
    if (!names.insert(name).second) invalid("feature '" + name + "' is given twice");
    check_finite(value, "feature '" + name + "'", false);
  }
}

void check_config(const Config& c, const std::string& what) {
  if (c.shares.empty()) invalid(what + " has no shares");
  double sum = 0;
  for (std::size_t i = 0; i < c.shares.size(); ++i) {
    check_finite(c.shares[i], what + " share " + std::to_string(i));
    sum += c.shares[i];
  }
  if (sum <= 0) invalid(what + "'s shares sum to zero");
  if (c.fission.empty()) invalid(what + " has no fission configuration name");
  if (c.overlap < 1) invalid(what + " has overlap 0 (at least 1 queue per GPU)");
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
  check_features(x.features);
  check_config(x.config, whose + "'s config");
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
  check_finite(e.precision, "the entry's precision");
  if (e.executions < 0) invalid("the entry's executions are negative");
  if (!is_stored_provenance(e.provenance))
    invalid("provenance '" + std::string(to_string(e.provenance)) + "' is none of trained, derived, balanced, manual");
}

void check_run(const KbRun& r) {
  check_plan(r, "the run");
  check_times(r.partition_ms, "the run's partition time");
  if (!is_purpose(r.purpose)) invalid("purpose '" + r.purpose + "' is none of training, balancing, execution");
}

void check_event(const KbEvent& e) {
  if (e.level != 1 && e.level != 2) invalid("event level " + std::to_string(e.level) + " is neither 1 nor 2");
  check_config(e.before, "the event's config before");
  check_config(e.after, "the event's config after");
  check_finite(e.time_ms, "the event's time");
  check_times(e.partition_ms, "the event's partition time");
  check_finite(e.deviation, "the event's deviation");
  check_finite(e.lbt, "the event's lbt");
}

}  // namespace sinew::detail::kb
