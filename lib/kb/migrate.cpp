// kb/migrate.cpp — schema creation and migration (see migrate.hpp). A migration is its .sql file
// (kb/migrations/NNN_*.sql, embedded by the build), which changes tables and sets user_version,
// then, where rows must be rewritten by rules kept in C++ (kb/legacy.hpp, which import_json shares),
// its step below, run right after the file in the same transaction:
//   003: entries.strategy to today's spelling (canonical_strategy);
//   004: features of counter-named vectors ("v17.size") to positional names ("v0.size") in
//        entries and runs, per tree, from the tree's stored dump (positional_names).
#include "kb/migrate.hpp"

#include "kb/features.hpp"
#include "kb/legacy.hpp"
#include "kb/schema.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace sinew::detail::kb {

namespace {

// --- 003 ---------------------------------------------------------------------------------------

void canonical_strategies(Connection& db) {
  std::vector<std::string> spellings;
  {
    auto s = db.prepare("SELECT DISTINCT strategy FROM entries");
    while (s.step()) spellings.push_back(s.text(0));
  }
  auto update = db.prepare("UPDATE entries SET strategy = ? WHERE strategy = ?");
  for (const auto& old : spellings) {
    std::string canonical = canonical_strategy(old);
    if (canonical == old) continue;
    update.reset();
    update.bind_all(canonical, old);
    update.run();
  }
}

// --- 004 ---------------------------------------------------------------------------------------

// The rows of one table and tree whose features change: id -> (features, feature_key).
using Renames = std::map<std::int64_t, std::pair<std::string, std::string>>;

// Reads `table`'s rows of `tree` and works out their new features. A row whose features cannot be
// read, or name a counter-made vector the dump lacks, is left as it is.
Renames renames(Connection& db, const char* table, const std::string& tree,
                const std::map<std::string, std::string>& names) {
  Renames out;
  std::map<std::string, std::optional<std::pair<std::string, std::string>>> done;  // features -> new
  auto s = db.prepare(std::string("SELECT id, features FROM ") + table + " WHERE tree = ?");
  s.bind(1, tree);
  while (s.step()) {
    std::string text = s.text(1);
    auto it = done.find(text);
    if (it == done.end()) {
      std::optional<std::pair<std::string, std::string>> result;
      if (auto features = parse_features(text))
        if (auto renamed = positional_features(*features, names))
          if (*renamed != *features) result.emplace(features_text(*renamed), feature_key(*renamed));
      it = done.emplace(text, std::move(result)).first;
    }
    if (it->second) out.emplace(s.integer(0), *it->second);
  }
  return out;
}

void rename_runs(Connection& db, const std::string& tree, const std::map<std::string, std::string>& names) {
  auto update = db.prepare("UPDATE runs SET features = ?, feature_key = ? WHERE id = ?");
  for (const auto& [id, features] : renames(db, "runs", tree, names)) {
    update.reset();
    update.bind_all(features.first, features.second, id);
    update.run();
  }
}

// Entries are unique per (tree, devices, library, feature_key): where renamed entries meet another
// entry of the same key, the more recently updated one stays (on a tie, the later one) and the
// others are removed with their balancer events; entries derived from a removed one then name the
// one that stayed as their source.
void rename_entries(Connection& db, const std::string& tree, const std::map<std::string, std::string>& names) {
  Renames changed = renames(db, "entries", tree, names);
  if (changed.empty()) return;

  struct Row {
    std::int64_t id;
    std::string updated;
  };
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Row>> by_key;  // devices, library, key
  {
    auto s = db.prepare("SELECT id, devices, library, feature_key, updated FROM entries WHERE tree = ?");
    s.bind(1, tree);
    while (s.step()) {
      std::int64_t id = s.integer(0);
      auto it = changed.find(id);
      std::string key = it != changed.end() ? it->second.second : s.text(3);
      by_key[{s.text(1), s.text(2), key}].push_back({id, s.text(4)});
    }
  }
  auto redirect = db.prepare("UPDATE entries SET source = ? WHERE source = ? AND id <> ?");
  auto remove = db.prepare("DELETE FROM entries WHERE id = ?");
  for (auto& [key, rows] : by_key) {
    if (rows.size() < 2) continue;
    auto kept = std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.updated, a.id) < std::tie(b.updated, b.id);
    });
    for (const auto& row : rows) {
      if (row.id == kept->id) continue;
      redirect.reset();
      redirect.bind_all(kept->id, row.id, kept->id);
      redirect.run();
      remove.reset();
      remove.bind(1, row.id);
      remove.run();
      changed.erase(row.id);
    }
  }
  // Two passes: renames may swap keys between entries (an old v1 becoming v0 while an old v0
  // becomes v1), and the unique key is checked row by row.
  auto park = db.prepare("UPDATE entries SET feature_key = ? WHERE id = ?");
  for (const auto& [id, features] : changed) {
    park.reset();
    park.bind_all("migrating " + std::to_string(id), id);  // no feature key (a JSON object) looks like it
    park.run();
  }
  auto update = db.prepare("UPDATE entries SET features = ?, feature_key = ? WHERE id = ?");
  for (const auto& [id, features] : changed) {
    update.reset();
    update.bind_all(features.first, features.second, id);
    update.run();
  }
}

void positional_vector_features(Connection& db) {
  std::vector<std::pair<std::string, std::string>> trees;  // tree, description
  {
    auto s = db.prepare("SELECT tree, description FROM trees WHERE description <> '' ORDER BY tree");
    while (s.step()) trees.emplace_back(s.text(0), s.text(1));
  }
  for (const auto& [tree, description] : trees) {
    auto names = positional_names(description);
    if (!names) continue;  // not a dump this library can read: the tree's rows stay as they are
    rename_runs(db, tree, *names);
    rename_entries(db, tree, *names);
  }
}

// --- the list ----------------------------------------------------------------------------------

struct Step {
  int to;  // runs after kb/migrations/<to>_*.sql
  void (*run)(Connection&);
};
constexpr Step kSteps[] = {
    {3, canonical_strategies},
    {4, positional_vector_features},
};

}  // namespace

int user_version(Connection& db) {
  auto s = db.prepare("PRAGMA user_version");
  s.step();
  return int(s.integer(0));
}

void migrate(Connection& db) {
  if (user_version(db) == kSchemaVersion) return;
  Transaction t(db);
  int version = user_version(db);  // again, under the write lock: another process may have done it
  if (version == 0) {
    db.exec(kSchema);
  } else {
    for (const auto& m : migrations()) {
      if (m.to <= version) continue;
      db.exec(m.sql);
      for (const auto& step : kSteps)
        if (step.to == m.to) step.run(db);
    }
  }
  if (user_version(db) != kSchemaVersion)
    throw SqliteError(SQLITE_ERROR, "the schema migrations end at version " + std::to_string(user_version(db)));
  t.commit();
}

}  // namespace sinew::detail::kb
