// kb/exchange.cpp — export_json and import_json: the knowledge base as a JSON document and back
// (older exports read as the migrations read older files: kb/legacy.hpp).
#include <sinew/error.hpp>
#include <sinew/kb.hpp>
#include <sinew/version.hpp>

#include "kb/check.hpp"
#include "kb/features.hpp"
#include "kb/json.hpp"
#include "kb/legacy.hpp"
#include "kb/rows.hpp"
#include "kb/schema.hpp"
#include "kb/sqlite.hpp"
#include "kb/store.hpp"
#include "kb/tree_text.hpp"
#include "kb/utc.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace sinew {

using namespace detail::kb;  // this module's internals (kb/*.hpp)

namespace {

constexpr const char* kFormat = "sinew-knowledge-base";
constexpr int kFormatVersion = 1;

json::Value entry_value(const KbEntry& e) {
  json::Value v{json::Value::Object{}};
  v.set("id", json::Value(double(e.id)));
  v.set("tree", json::Value(e.key.tree));
  v.set("devices", json::Value(e.key.devices));
  v.set("library", json::Value(e.key.library));
  v.set("features", features_value(e.features));
  v.set("config", config_value(e.config));
  v.set("time_ms", json::Value(e.time_ms));
  v.set("provenance", json::Value(std::string(to_string(e.provenance))));
  v.set("source", e.source ? json::Value(double(*e.source)) : json::Value());
  v.set("precision", json::Value(e.precision));
  v.set("quality", json::Value(e.quality));
  v.set("executions", json::Value(double(e.executions)));
  v.set("strategy", json::Value(e.strategy));
  v.set("created", json::Value(e.created));
  v.set("updated", json::Value(e.updated));
  return v;
}

json::Value run_value(const KbRun& r) {
  json::Value v{json::Value::Object{}};
  v.set("tree", json::Value(r.key.tree));
  v.set("devices", json::Value(r.key.devices));
  v.set("library", json::Value(r.key.library));
  v.set("features", features_value(r.features));
  v.set("config", config_value(r.config));
  v.set("time_ms", json::Value(r.time_ms));
  v.set("partition_ms", numbers_value(r.partition_ms));
  v.set("device_ms", numbers_value(r.device_ms));
  v.set("purpose", json::Value(r.purpose));
  v.set("created", json::Value(r.created));
  return v;
}

json::Value event_value(const KbEvent& e) {
  json::Value v{json::Value::Object{}};
  v.set("entry", json::Value(double(e.entry)));
  v.set("execution", json::Value(double(e.execution)));
  v.set("level", json::Value(e.level));
  v.set("before", config_value(e.before));
  v.set("after", config_value(e.after));
  v.set("time_ms", json::Value(e.time_ms));
  v.set("partition_ms", numbers_value(e.partition_ms));
  v.set("deviation", json::Value(e.deviation));
  v.set("lbt", json::Value(e.lbt));
  v.set("created", json::Value(e.created));
  return v;
}

// Typed access to an imported document, with the path of what is wrong in every error.
class Reader {
 public:
  Reader(const json::Value& v, std::string path) : v_(v), path_(std::move(path)) {}

  const json::Value& member(const char* name, json::Value::Type type) const {
    const json::Value* m = v_.find(name);
    if (!m) fail(std::string("has no \"") + name + "\"");
    if (m->type() != type)
      invalid("import: " + path_ + "." + name + " is " + json::type_name(m->type()) + ", expected " +
              json::type_name(type));
    return *m;
  }
  std::string text(const char* name) const { return member(name, json::Value::Type::string).string(); }
  double number(const char* name) const { return member(name, json::Value::Type::number).number(); }
  std::int64_t integer(const char* name) const {
    double n = number(name);
    if (n != std::floor(n) || std::fabs(n) > 9007199254740992.0)
      invalid("import: " + path_ + "." + name + " is not an integer");
    return std::int64_t(n);
  }
  const json::Value* find(const char* name) const { return v_.find(name); }
  std::optional<std::int64_t> optional_integer(const char* name) const {
    const json::Value* m = v_.find(name);
    if (!m || m->is_null()) return std::nullopt;
    return integer(name);
  }
  std::vector<double> numbers(const char* name) const {
    std::vector<double> out;
    for (const auto& n : member(name, json::Value::Type::array).array()) {
      if (!n.is_number()) invalid("import: " + path_ + "." + name + " holds " + json::type_name(n.type()));
      out.push_back(n.number());
    }
    return out;
  }
  KbFeatures features(const char* name) const {
    KbFeatures out;
    for (const auto& [k, n] : member(name, json::Value::Type::object).object()) {
      if (!n.is_number()) invalid("import: " + path_ + "." + name + "." + k + " is not a number");
      out.emplace_back(k, n.number());
    }
    return out;
  }
  Config config(const char* name) const {
    Reader c(member(name, json::Value::Type::object), path_ + "." + name);
    Config out;
    out.fission = c.text("fission");
    auto overlap = c.integer("overlap");
    if (overlap < 1 || overlap > 1024) invalid("import: " + path_ + "." + name + ".overlap is out of range");
    out.overlap = unsigned(overlap);
    out.shares = c.numbers("shares");
    if (const json::Value* plan = c.find("plan"))  // exports before schema 6 have none
      if (auto why = apply_plan(out, *plan); !why.empty()) invalid("import: " + path_ + "." + name + ": " + why);
    return out;
  }
  KbKey key() const { return {text("tree"), text("devices"), text("library")}; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const { invalid("import: " + path_ + " " + what); }

 private:
  const json::Value& v_;
  std::string path_;
};

// Runs `check` and prefixes its invalid_argument message with where the value came from.
template <class F>
void check_imported(const std::string& where, F&& check) {
  try {
    check();
  } catch (const Error& e) {
    invalid("import: " + where + ": " + e.message().substr(std::string("knowledge base: ").size()));
  }
}

const json::Value::Array& section(const json::Value& doc, const char* name) {
  static const json::Value::Array none;
  const json::Value* v = doc.find(name);
  if (!v) return none;
  if (!v->is_array()) invalid(std::string("import: \"") + name + "\" is not an array");
  return v->array();
}

// Calls `read` with a Reader on each element of the array `name` of `doc` (none where the
// document has no such member); each must be an object.
template <class F>
void read_section(const json::Value& doc, const char* name, F&& read) {
  const auto& values = section(doc, name);
  for (std::size_t i = 0; i < values.size(); ++i) {
    Reader r(values[i], std::string(name) + "[" + std::to_string(i) + "]");
    if (!values[i].is_object()) r.fail("is not an object");
    read(r);
  }
}

struct ImportedTree {
  std::string tree, label, description, created;
};

// A plan the tree cannot run (the dynamic schedule where its partitions meet) would fail every
// later run of it: refused where the export (`trees`) or this knowledge base describes the tree.
void check_schedule_fits(const Reader& r, const KbEntry& e, const std::vector<ImportedTree>& trees,
                         KnowledgeBase::Impl& kb) {
  if (e.config.schedule != "dynamic") return;
  std::optional<std::pair<std::string, std::string>> described;  // label, description
  for (const auto& t : trees)
    if (t.tree == e.key.tree && !t.description.empty()) described.emplace(t.label, t.description);
  if (!described)
    described = kb.locked("reading a tree's description", [&] {
      std::optional<std::pair<std::string, std::string>> stored;
      auto s = kb.db.prepare("SELECT label, description FROM trees WHERE tree = ?");
      s.bind_all(e.key.tree);
      if (s.step()) stored.emplace(s.text(0), s.text(1));
      return stored;
    });
  if (!described) return;
  const std::string name = described->first.empty() ? e.key.tree.substr(0, 12) : described->first;
  if (auto why = detail::kb::partitions_meet(described->second))
    r.fail("(tree '" + name + "') has plan " + e.config.str() +
           " with the dynamic schedule, which the tree cannot run: its partitions meet while it runs (" + *why +
           "); export a static plan of it, or let the runtime plan it");
}

// An entry as the export holds it: its id there and the id of the entry it came from there.
struct ImportedEntry {
  std::int64_t file_id;
  std::optional<std::int64_t> file_source;
  KbEntry entry;
};

// Everything an export holds, read and checked before the database is touched.
struct ImportedDocument {
  std::vector<ImportedTree> trees;
  std::vector<ImportedEntry> entries;
  std::vector<KbRun> runs;
  std::vector<KbEvent> events;
};

// Guarantees the text is a JSON object in Sinew's export format, of a format version this Sinew reads.
json::Value parse_export(std::string_view text) {
  json::Value doc;
  try {
    doc = json::parse(text);
  } catch (const std::invalid_argument& e) {
    invalid(std::string("import: not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) invalid("import: the document is not a JSON object");
  const json::Value* format = doc.find("format");
  if (!format || !format->is_string() || format->string() != kFormat)
    invalid(std::string("import: not a Sinew knowledge base export (\"format\" is not \"") + kFormat + "\")");
  if (const json::Value* v = doc.find("format_version"); v && v->is_number() && v->number() > kFormatVersion)
    invalid("import: written by a newer Sinew (format version " + json::number(v->number()) + ")");
  return doc;
}

// The tree descriptions; guarantees each has a signature and valid UTF-8 text.
std::vector<ImportedTree> read_trees(const json::Value& doc) {
  std::vector<ImportedTree> trees;
  read_section(doc, "trees", [&](const Reader& r) {
    trees.push_back({r.text("tree"), r.text("label"), r.text("description"), r.text("created")});
    if (trees.back().tree.empty()) r.fail("has no tree signature");
    for (const std::string* text : {&trees.back().tree, &trees.back().label, &trees.back().description})
      if (!detail::kb::valid_utf8(*text)) r.fail("holds text that is not valid UTF-8");
  });
  return trees;
}

// An export older than positional vector features names unnamed vectors as the process that
// wrote it counted them: renamed as migration 004 renames a stored file's (kb/legacy.hpp), from
// the exported tree descriptions. Features that cannot be renamed are imported as they are.
class PositionalFeatureNames {
 public:
  PositionalFeatureNames(const json::Value& doc, const std::vector<ImportedTree>& trees) {
    const json::Value* schema = doc.find("schema");
    const bool counter_names =
        schema && schema->is_number() && schema->number() < detail::kb::kPositionalFeaturesVersion;
    if (counter_names)
      for (const auto& t : trees) renames_[t.tree] = detail::kb::positional_names(t.description);
  }
  // `features` of a run or entry of `tree`, with counter-made vector names made positional.
  void apply(const std::string& tree, KbFeatures& features) const {
    auto it = renames_.find(tree);
    if (it == renames_.end() || !it->second) return;
    if (auto renamed = detail::kb::positional_features(features, *it->second)) features = std::move(*renamed);
  }

 private:
  std::map<std::string, std::optional<std::map<std::string, std::string>>> renames_;  // tree -> renames
};

// One exported entry; guarantees it passes the knowledge base's checks and has a plan its tree can run.
ImportedEntry read_entry(const Reader& r, const PositionalFeatureNames& names, const std::vector<ImportedTree>& trees,
                         KnowledgeBase::Impl& kb) {
  ImportedEntry imported;
  imported.file_id = r.integer("id");
  imported.file_source = r.optional_integer("source");
  KbEntry& e = imported.entry;
  e.key = r.key();
  e.features = r.features("features");
  names.apply(e.key.tree, e.features);
  e.config = r.config("config");
  e.time_ms = r.number("time_ms");
  const std::string provenance = r.text("provenance");
  if (auto p = stored_provenance(provenance)) e.provenance = *p;
  else r.fail("provenance '" + provenance + "' is none of trained, derived, balanced, manual");
  e.precision = r.number("precision");
  auto quality = r.integer("quality");
  if (quality < 0) r.fail("has a negative quality");
  e.quality = unsigned(quality);
  e.executions = r.integer("executions");
  e.strategy = detail::kb::canonical_strategy(r.text("strategy"));  // older exports: older spellings
  e.created = r.text("created");
  e.updated = r.text("updated");
  check_imported(r.path(), [&] { check_entry(e); });
  check_schedule_fits(r, e, trees, kb);
  return imported;
}

// One exported run; guarantees it passes the knowledge base's checks and has a creation time.
KbRun read_run(const Reader& r, const PositionalFeatureNames& names) {
  KbRun run;
  run.key = r.key();
  run.features = r.features("features");
  names.apply(run.key.tree, run.features);
  run.config = r.config("config");
  run.time_ms = r.number("time_ms");
  run.partition_ms = r.numbers("partition_ms");
  if (r.find("device_ms")) run.device_ms = r.numbers("device_ms");  // exports before schema 7 have none
  run.purpose = r.text("purpose");
  run.created = r.text("created");
  if (run.created.empty()) r.fail("has no creation time");
  check_imported(r.path(), [&] { check_run(run); });
  return run;
}

// One exported balancer event; guarantees it passes the checks and refers to an exported entry
// (its `entry` is still the export's id).
KbEvent read_event(const Reader& r, const std::vector<ImportedEntry>& entries) {
  KbEvent e;
  e.entry = r.integer("entry");
  e.execution = r.integer("execution");
  e.level = int(r.integer("level"));
  e.before = r.config("before");
  e.after = r.config("after");
  e.time_ms = r.number("time_ms");
  e.partition_ms = r.numbers("partition_ms");
  e.deviation = r.number("deviation");
  e.lbt = r.number("lbt");
  e.created = r.text("created");
  if (e.created.empty()) r.fail("has no creation time");
  check_imported(r.path(), [&] { check_event(e); });
  bool known = std::any_of(entries.begin(), entries.end(), [&](const ImportedEntry& imported) { return imported.file_id == e.entry; });
  if (!known) r.fail("refers to entry " + std::to_string(e.entry) + ", which is not in the file");
  return e;
}

// The whole export, read and checked: throws sinew::Error(errc::invalid_argument) naming what is
// malformed before anything is written.
ImportedDocument read_export(std::string_view text, KnowledgeBase::Impl& kb) {
  const json::Value doc = parse_export(text);
  ImportedDocument in;
  in.trees = read_trees(doc);
  const PositionalFeatureNames names(doc, in.trees);
  read_section(doc, "entries", [&](const Reader& r) { in.entries.push_back(read_entry(r, names, in.trees, kb)); });
  read_section(doc, "runs", [&](const Reader& r) { in.runs.push_back(read_run(r, names)); });
  read_section(doc, "events", [&](const Reader& r) { in.events.push_back(read_event(r, in.entries)); });
  return in;
}

// Tree descriptions are added; one stored without a label and description takes the export's.
void write_trees(Connection& db, const std::vector<ImportedTree>& trees) {
  for (const auto& tree : trees) {
    auto s = db.prepare(
        "INSERT INTO trees (tree, label, description, created) VALUES (?, ?, ?, ?) ON CONFLICT (tree) DO UPDATE "
        "SET label = excluded.label, description = excluded.description WHERE trees.label = '' AND trees.description = ''");
    s.bind_all(tree.tree, tree.label, tree.description, tree.created.empty() ? utc_now() : tree.created);
    s.run();
  }
}

// Entries: each is inserted, replaces an older one of its key and features (keeping the larger
// execution count), or leaves a newer one as it is. Then every entry written gets the id here of
// its source, where the export has the source too. Returns export id -> id here for every entry.
std::map<std::int64_t, std::int64_t> merge_entries(KnowledgeBase::Impl& kb, const std::vector<ImportedEntry>& entries,
                                                   KbCounts& counts) {
  Connection& db = kb.db;
  std::map<std::int64_t, std::int64_t> local;  // export id -> id here
  std::vector<std::size_t> written;            // entries whose source must be set
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const KbEntry& e = entries[i].entry;
    auto s = db.prepare(
        "SELECT id, updated, executions FROM entries WHERE tree = ? AND devices = ? AND library = ? AND feature_key = ?");
    s.bind_all(e.key.tree, e.key.devices, e.key.library, feature_key(e.features));
    KbEntry without_source = e;
    without_source.source.reset();
    if (!s.step()) {
      local[entries[i].file_id] = kb.insert_entry(without_source, e.created, e.updated);
      written.push_back(i);
      ++counts.entries;
      continue;
    }
    std::int64_t id = s.integer(0);
    std::string updated = s.text(1);
    std::int64_t executions = s.integer(2);
    local[entries[i].file_id] = id;
    if (e.updated > updated) {
      kb.update_entry(id, without_source, e.updated);
      auto x = db.prepare("UPDATE entries SET executions = ? WHERE id = ?");
      x.bind_all(std::max(executions, e.executions), id);
      x.run();
      written.push_back(i);
      ++counts.entries;
    }
  }
  for (std::size_t i : written) {
    const auto& imported = entries[i];
    if (!imported.file_source) continue;
    auto it = local.find(*imported.file_source);
    if (it == local.end()) continue;  // its source was not exported with it
    auto s = db.prepare("UPDATE entries SET source = ? WHERE id = ?");
    s.bind_all(it->second, local.at(imported.file_id));
    s.run();
  }
  return local;
}

// Runs not already stored (the same key, features, plan, time, purpose and creation) are added.
void add_new_runs(KnowledgeBase::Impl& kb, const std::vector<KbRun>& runs, KbCounts& counts) {
  for (const auto& r : runs) {
    auto s = kb.db.prepare(
        "SELECT 1 FROM runs WHERE tree = ? AND devices = ? AND library = ? AND feature_key = ? AND fission = ? AND "
        "overlap = ? AND shares = ? AND plan = ? AND time_ms = ? AND purpose = ? AND created = ? LIMIT 1");
    s.bind_all(r.key.tree, r.key.devices, r.key.library, feature_key(r.features), r.config.fission, r.config.overlap,
               numbers_text(r.config.shares), plan_text(r.config), r.time_ms, r.purpose, r.created);
    if (s.step()) continue;
    kb.insert_run(r);
    ++counts.runs;
  }
}

// Events not already stored (the same entry, execution, level and creation) are added, their
// entries mapped from the export's ids to the ids here (`local`).
void add_new_events(KnowledgeBase::Impl& kb, std::vector<KbEvent> events,
                    const std::map<std::int64_t, std::int64_t>& local, KbCounts& counts) {
  for (KbEvent& e : events) {
    e.entry = local.at(e.entry);
    auto s = kb.db.prepare("SELECT 1 FROM events WHERE entry = ? AND execution = ? AND level = ? AND created = ? LIMIT 1");
    s.bind_all(e.entry, e.execution, e.level, e.created);
    if (s.step()) continue;
    kb.insert_event(e);
    ++counts.events;
  }
}

}  // namespace

std::string KnowledgeBase::export_json(const std::optional<std::string>& tree) const {
  return impl_->locked("exporting", [&] {
    // One read transaction: a consistent snapshot even while other processes write.
    impl_->db.exec("BEGIN");
    struct End {
      Connection& db;
      ~End() { sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr); }
    } end{impl_->db};

    std::vector<std::string> args;
    if (tree) args.push_back(*tree);
    json::Value doc{json::Value::Object{}};
    doc.set("format", json::Value(kFormat));
    doc.set("format_version", json::Value(kFormatVersion));
    doc.set("schema", json::Value(detail::kb::kSchemaVersion));
    doc.set("library", json::Value(sinew::version));
    doc.set("exported", json::Value(utc_now()));

    json::Value::Array trees;
    {
      auto s = impl_->db.prepare(std::string("SELECT tree, label, description, created FROM trees ") +
                                 (tree ? "WHERE tree = ? " : "") + "ORDER BY tree");
      if (tree) s.bind(1, *tree);
      while (s.step()) {
        json::Value t{json::Value::Object{}};
        t.set("tree", json::Value(s.text(0)));
        t.set("label", json::Value(s.text(1)));
        t.set("description", json::Value(s.text(2)));
        t.set("created", json::Value(s.text(3)));
        trees.push_back(std::move(t));
      }
    }
    doc.set("trees", json::Value(std::move(trees)));

    json::Value::Array entries;
    for (const auto& e : impl_->select_entries(tree ? "WHERE tree = ? ORDER BY id" : "ORDER BY id", args))
      entries.push_back(entry_value(e));
    doc.set("entries", json::Value(std::move(entries)));

    json::Value::Array runs;
    for (const auto& r : impl_->select_runs(tree ? "WHERE tree = ? ORDER BY id" : "ORDER BY id", args))
      runs.push_back(run_value(r));
    doc.set("runs", json::Value(std::move(runs)));

    json::Value::Array events;
    for (const auto& e : impl_->select_events(
             tree ? "WHERE entry IN (SELECT id FROM entries WHERE tree = ?) ORDER BY id" : "ORDER BY id", args))
      events.push_back(event_value(e));
    doc.set("events", json::Value(std::move(events)));
    return json::dump(doc, 2) + "\n";
  });
}

KbCounts KnowledgeBase::import_json(std::string_view text) {
  ImportedDocument in = read_export(text, *impl_);
  return impl_->locked("importing", [&] {
    KbCounts counts;
    Transaction t(impl_->db);
    write_trees(impl_->db, in.trees);
    const auto local = merge_entries(*impl_, in.entries, counts);
    add_new_runs(*impl_, in.runs, counts);
    add_new_events(*impl_, std::move(in.events), local, counts);
    t.commit();
    return counts;
  });
}

}  // namespace sinew
