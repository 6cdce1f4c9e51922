// kb/migrate.cpp — schema creation and migration (see migrate.hpp). A migration is its .sql file
// (kb/migrations/NNN_*.sql, embedded by the build), which changes tables and sets user_version,
// then, where rows must be rewritten by rules kept in C++ (kb/legacy.hpp, which import_json shares),
// its step below, run right after the file in the same transaction:
//   003: entries.strategy to today's spelling (canonical_strategy).
#include "kb/migrate.hpp"

#include "kb/legacy.hpp"
#include "kb/schema.hpp"

#include <string>
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

// --- the list ----------------------------------------------------------------------------------

struct Step {
  int to;  // runs after kb/migrations/<to>_*.sql
  void (*run)(Connection&);
};
constexpr Step kSteps[] = {
    {3, canonical_strategies},
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
