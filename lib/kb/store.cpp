// kb/store.cpp — entries, runs and events: KnowledgeBase::Impl's row operations (see store.hpp)
// and the public methods that store, find, count, read and clear them.
#include "kb/store.hpp"

#include "kb/check.hpp"
#include "kb/features.hpp"
#include "kb/rows.hpp"
#include "kb/utc.hpp"

namespace sinew {

using namespace detail::kb;  // this module's internals (kb/*.hpp)

// ---------------------------------------------------------------------------------------------
// Rows.

std::optional<std::int64_t> KnowledgeBase::Impl::find_id(const KbKey& key, const std::string& fkey) const {
  auto s = db.prepare("SELECT id FROM entries WHERE tree = ? AND devices = ? AND library = ? AND feature_key = ?");
  s.bind_all(key.tree, key.devices, key.library, fkey);
  if (s.step()) return s.integer(0);
  return std::nullopt;
}

template <class Row>
std::vector<Row> KnowledgeBase::Impl::select(const char* columns, const char* table, Row (*from)(const Statement&),
                                             const std::string& where, const std::vector<std::string>& args) const {
  auto s = db.prepare(std::string("SELECT ") + columns + " FROM " + table + " " + where);
  for (std::size_t i = 0; i < args.size(); ++i) s.bind(int(i + 1), args[i]);
  std::vector<Row> out;
  while (s.step()) out.push_back(from(s));
  return out;
}

std::vector<KbEntry> KnowledgeBase::Impl::select_entries(const std::string& where,
                                                         const std::vector<std::string>& args) const {
  return select(kEntryColumns, "entries", entry_from, where, args);
}

std::vector<KbRun> KnowledgeBase::Impl::select_runs(const std::string& where, const std::vector<std::string>& args) const {
  return select(kRunColumns, "runs", run_from, where, args);
}

std::vector<KbEvent> KnowledgeBase::Impl::select_events(const std::string& where,
                                                        const std::vector<std::string>& args) const {
  return select(kEventColumns, "events", event_from, where, args);
}

Statement KnowledgeBase::Impl::prepare_insert_run() const {
  return db.prepare(
      "INSERT INTO runs (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
      "purpose, created, partition_ms, plan, device_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
}

Statement KnowledgeBase::Impl::prepare_add_executions() const {
  return db.prepare("UPDATE entries SET executions = executions + ? WHERE id = ?");
}

bool KnowledgeBase::Impl::add_executions(Statement& s, std::int64_t entry, std::int64_t n) {
  s.reset();
  s.bind_all(n, entry);
  s.run();
  return db.changes() > 0;
}

std::int64_t KnowledgeBase::Impl::insert_run(const KbRun& r) {
  auto s = prepare_insert_run();
  return insert_run(s, r);
}

std::int64_t KnowledgeBase::Impl::insert_run(Statement& s, const KbRun& r) {
  s.reset();
  s.bind_all(r.key.tree, r.key.devices, r.key.library, features_text(r.features), feature_key(r.features),
             r.config.fission, r.config.overlap, numbers_text(r.config.shares), r.time_ms, r.purpose,
             r.created.empty() ? utc_now() : r.created, numbers_text(r.partition_ms), plan_text(r.config), numbers_text(r.device_ms));
  s.run();
  return db.last_insert_id();
}

std::int64_t KnowledgeBase::Impl::insert_event(const KbEvent& e) {
  auto s = db.prepare(
      "INSERT INTO events (entry, execution, level, fission_before, overlap_before, shares_before, "
      "fission_after, overlap_after, shares_after, time_ms, partition_ms, deviation, lbt, created, plan_before, "
      "plan_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(e.entry, e.execution, e.level, e.before.fission, e.before.overlap, numbers_text(e.before.shares),
             e.after.fission, e.after.overlap, numbers_text(e.after.shares), e.time_ms,
             numbers_text(e.partition_ms), e.deviation, e.lbt, e.created.empty() ? utc_now() : e.created,
             plan_text(e.before), plan_text(e.after));
  s.run();
  return db.last_insert_id();
}

std::int64_t KnowledgeBase::Impl::insert_entry(const KbEntry& e, const std::string& created, const std::string& updated) {
  auto s = db.prepare(
      "INSERT INTO entries (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
      "provenance, source, precision, quality, executions, strategy, created, updated, plan) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind_all(e.key.tree, e.key.devices, e.key.library, features_text(e.features), feature_key(e.features),
             e.config.fission, e.config.overlap, numbers_text(e.config.shares), e.time_ms,
             std::string(to_string(e.provenance)), e.source, e.precision, e.quality, e.executions, e.strategy, created,
             updated, plan_text(e.config));
  s.run();
  return db.last_insert_id();
}

void KnowledgeBase::Impl::update_entry(std::int64_t id, const KbEntry& e, const std::string& updated) {
  auto s = db.prepare(
      "UPDATE entries SET features = ?, fission = ?, overlap = ?, shares = ?, time_ms = ?, provenance = ?, "
      "source = ?, precision = ?, quality = ?, strategy = ?, updated = ?, plan = ? WHERE id = ?");
  s.bind_all(features_text(e.features), e.config.fission, e.config.overlap, numbers_text(e.config.shares), e.time_ms,
             std::string(to_string(e.provenance)), e.source, e.precision, e.quality, e.strategy, updated,
             plan_text(e.config), id);
  s.run();
}

// ---------------------------------------------------------------------------------------------
// Runs.

std::int64_t KnowledgeBase::record_run(const KbRun& run) {
  check_run(run);
  return impl_->locked("recording a run", [&] { return impl_->insert_run(run); });
}

void KnowledgeBase::record_runs(const std::vector<KbRun>& runs,
                                const std::vector<std::pair<std::int64_t, std::int64_t>>& executions) {
  for (const auto& run : runs) check_run(run);
  if (runs.empty() && executions.empty()) return;
  impl_->locked("recording runs", [&] {
    Transaction t(impl_->db);
    auto insert = impl_->prepare_insert_run();
    for (const auto& run : runs) impl_->insert_run(insert, run);
    auto count = impl_->prepare_add_executions();
    for (const auto& [entry, n] : executions) impl_->add_executions(count, entry, n);
    t.commit();
  });
}

std::vector<KbRun> KnowledgeBase::runs(std::int64_t entry) const {
  return impl_->locked("reading runs", [&] {
    return impl_->select_runs(
        "WHERE (tree, devices, library, feature_key) = "
        "(SELECT tree, devices, library, feature_key FROM entries WHERE id = ?) ORDER BY id",
        {std::to_string(entry)});
  });
}

std::vector<KbRun> KnowledgeBase::runs(const KbKey& key, const KbFeatures& features) const {
  return impl_->locked("reading runs", [&] {
    return impl_->select_runs("WHERE tree = ? AND devices = ? AND library = ? AND feature_key = ? ORDER BY id",
                              {key.tree, key.devices, key.library, feature_key(features)});
  });
}

std::vector<KbRun> KnowledgeBase::runs_for_tree(const std::string& tree) const {
  return impl_->locked("reading runs", [&] { return impl_->select_runs("WHERE tree = ? ORDER BY id", {tree}); });
}

// ---------------------------------------------------------------------------------------------
// Entries.

std::int64_t KnowledgeBase::store_entry(const KbEntry& entry) {
  check_entry(entry);
  return impl_->locked("storing an entry", [&] {
    Transaction t(impl_->db);
    std::string now = utc_now();
    std::int64_t id;
    if (auto existing = impl_->find_id(entry.key, feature_key(entry.features))) {
      id = *existing;
      impl_->update_entry(id, entry, now);
    } else {
      id = impl_->insert_entry(entry, now, now);
    }
    t.commit();
    return id;
  });
}

std::optional<KbEntry> KnowledgeBase::entry(std::int64_t id) const {
  auto found = impl_->locked("reading an entry", [&] { return impl_->select_entries("WHERE id = ?", {std::to_string(id)}); });
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::optional<KbEntry> KnowledgeBase::find(const KbKey& key, const KbFeatures& features) const {
  auto found = impl_->locked("looking up an entry", [&] {
    return impl_->select_entries("WHERE tree = ? AND devices = ? AND library = ? AND feature_key = ?",
                                 {key.tree, key.devices, key.library, feature_key(features)});
  });
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<KbEntry> KnowledgeBase::entries(const KbKey& key) const {
  return impl_->locked("reading entries", [&] {
    return impl_->select_entries("WHERE tree = ? AND devices = ? AND library = ? ORDER BY id",
                                 {key.tree, key.devices, key.library});
  });
}

std::vector<KbEntry> KnowledgeBase::entries_for_tree(const std::string& tree) const {
  return impl_->locked("reading entries", [&] { return impl_->select_entries("WHERE tree = ? ORDER BY id", {tree}); });
}

bool KnowledgeBase::add_executions(std::int64_t entry, std::int64_t n) {
  return impl_->locked("counting executions", [&] {
    auto s = impl_->prepare_add_executions();
    return impl_->add_executions(s, entry, n);
  });
}

// ---------------------------------------------------------------------------------------------
// Events.

std::int64_t KnowledgeBase::record_event(const KbEvent& event) {
  check_event(event);
  return impl_->locked("recording a balancer event", [&] { return impl_->insert_event(event); });
}

std::vector<KbEvent> KnowledgeBase::events(std::int64_t entry) const {
  return impl_->locked("reading events",
                       [&] { return impl_->select_events("WHERE entry = ? ORDER BY id", {std::to_string(entry)}); });
}

// ---------------------------------------------------------------------------------------------
// Clearing.

KbCounts KnowledgeBase::clear(const std::optional<std::string>& tree) {
  return impl_->locked("clearing", [&] {
    KbCounts counts;
    Transaction t(impl_->db);
    Connection& db = impl_->db;
    auto remove = [&](const std::string& sql) {
      auto s = db.prepare(sql);
      if (tree) s.bind(1, *tree);
      s.run();
      return std::int64_t(db.changes());
    };
    if (tree) {
      counts.events = remove("DELETE FROM events WHERE entry IN (SELECT id FROM entries WHERE tree = ?)");
      counts.entries = remove("DELETE FROM entries WHERE tree = ?");
      counts.runs = remove("DELETE FROM runs WHERE tree = ?");
      remove("DELETE FROM trees WHERE tree = ?");
    } else {
      counts.events = remove("DELETE FROM events");
      counts.entries = remove("DELETE FROM entries");
      counts.runs = remove("DELETE FROM runs");
      remove("DELETE FROM trees");
    }
    t.commit();
    return counts;
  });
}

}  // namespace sinew
