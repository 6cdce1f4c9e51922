// kb/rows.cpp — values <-> columns of the knowledge base's tables (see rows.hpp).
#include "kb/rows.hpp"

#include <sinew/error.hpp>

#include "kb/check.hpp"
#include "kb/features.hpp"
#include "platform/plan_items.hpp"

namespace sinew::detail::kb {

json::Value numbers_value(const std::vector<double>& numbers) {
  json::Value::Array a;
  for (double n : numbers) a.emplace_back(n);
  return json::Value(std::move(a));
}
std::string numbers_text(const std::vector<double>& numbers) { return json::dump(numbers_value(numbers)); }

json::Value config_value(const Config& c) {
  json::Value v{json::Value::Object{}};
  v.set("fission", json::Value(c.fission));
  v.set("overlap", json::Value(c.overlap));
  v.set("shares", numbers_value(c.shares));
  // Only where the plan has items: a plan of the split alone exports without "plan", in the
  // shape exports before schema 6 have.
  if (auto items = detail::plan_item_values(c); !items.empty()) {
    json::Value plan{json::Value::Object{}};
    for (const auto& [name, value] : items) plan.set(name, json::Value(value));
    v.set("plan", std::move(plan));
  }
  return v;
}

std::string plan_text(const Config& c) {
  json::Value plan{json::Value::Object{}};
  for (const auto& [name, value] : detail::plan_item_values(c)) plan.set(name, json::Value(value));
  return json::dump(plan);
}

std::string apply_plan(Config& c, const json::Value& plan) {
  if (!plan.is_object()) return "plan is not a JSON object";
  for (const auto& [name, value] : plan.object()) {
    if (!value.is_string()) return "plan item '" + name + "' is not text";
    if (name == "schedule") {
      if (!detail::is_schedule_name(value.string()))
        return "plan item 'schedule' = '" + value.string() + "' (it takes " + detail::schedule_spellings() + ")";
      c.schedule = value.string();
      continue;
    }
    const auto* item = detail::find_plan_item(name);
    if (!item) return "plan item '" + name + "' is unknown to this version of Sinew";
    if (auto accepts = item->accepts(value.string()); !accepts.empty())
      return "plan item '" + name + "' = '" + value.string() + "' (it takes " + accepts + ")";
    c.items.insert_or_assign(name, value.string());
  }
  return "";
}

namespace {

// Reading back what we wrote: anything malformed means the file was damaged or edited.
[[noreturn]] void damaged(const std::string& what) {
  throw Error(sinew::errc::knowledge_base, "knowledge base: damaged value: " + what,
              {.fix = "export what is readable with 'sinew kb export', or remove the file"});
}

json::Value parse_column(const std::string& text, const char* column) {
  try {
    return json::parse(text);
  } catch (const std::invalid_argument& e) {
    damaged(std::string(column) + " (" + e.what() + ")");
  }
}

KbFeatures features_from(const std::string& text) {
  std::string why;
  if (auto features = parse_features(text, &why)) return *features;
  damaged(why);
}

std::vector<double> numbers_from(const std::string& text, const char* column) {
  auto v = parse_column(text, column);
  if (!v.is_array()) damaged(std::string(column) + " is not a JSON array");
  std::vector<double> out;
  for (const auto& n : v.array()) {
    if (!n.is_number()) damaged(std::string(column) + " holds a non-number");
    out.push_back(n.number());
  }
  return out;
}

// The columns of one Config: fission, overlap and shares at `first` on, its plan at `plan`.
Config config_from(const Statement& s, int first, int plan) {
  Config c;
  c.fission = s.text(first);
  c.overlap = unsigned(s.integer(first + 1));
  c.shares = numbers_from(s.text(first + 2), "shares");
  if (auto why = apply_plan(c, parse_column(s.text(plan), "plan")); !why.empty()) damaged(why);
  return c;
}

}  // namespace

KbEntry entry_from(const Statement& s) {
  KbEntry e;
  e.id = s.integer(0);
  e.key = {s.text(1), s.text(2), s.text(3)};
  e.features = features_from(s.text(4));
  e.config = config_from(s, 5, 17);
  e.time_ms = s.real(8);
  e.provenance = stored_provenance(s.text(9)).value_or(Provenance::manual);  // the schema allows no other
  e.source = s.optional_integer(10);
  e.precision = s.real(11);
  e.quality = unsigned(s.integer(12));
  e.executions = s.integer(13);
  e.strategy = s.text(14);
  e.created = s.text(15);
  e.updated = s.text(16);
  return e;
}

KbRun run_from(const Statement& s) {
  KbRun r;
  r.id = s.integer(0);
  r.key = {s.text(1), s.text(2), s.text(3)};
  r.features = features_from(s.text(4));
  r.config = config_from(s, 5, 12);
  r.time_ms = s.real(8);
  r.partition_ms = numbers_from(s.text(9), "partition_ms");
  r.purpose = s.text(10);
  r.created = s.text(11);
  r.device_ms = numbers_from(s.text(13), "device_ms");
  return r;
}

KbEvent event_from(const Statement& s) {
  KbEvent e;
  e.id = s.integer(0);
  e.entry = s.integer(1);
  e.execution = s.integer(2);
  e.level = int(s.integer(3));
  e.before = config_from(s, 4, 15);
  e.after = config_from(s, 7, 16);
  e.time_ms = s.real(10);
  e.partition_ms = numbers_from(s.text(11), "partition_ms");
  e.deviation = s.real(12);
  e.lbt = s.real(13);
  e.created = s.text(14);
  return e;
}

}  // namespace sinew::detail::kb
