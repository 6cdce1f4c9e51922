// kb/store.hpp — KnowledgeBase::Impl: the connection behind its lock, and the row operations on
// entries, runs and events that the public methods of every kb/ file share (defined in store.cpp).
#pragma once

#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include "kb/sqlite.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sinew {

class KnowledgeBase::Impl {
 public:
  mutable detail::kb::Connection db;  // guarded by mutex
  std::string path = ":memory:";
  bool persistent = false;
  std::string warning;
  mutable std::mutex mutex;

  // Runs `f` under the lock, turning SQLite failures into sinew::Error.
  template <class F>
  auto locked(const char* doing, F&& f) const {
    std::lock_guard lock(mutex);
    try {
      return f();
    } catch (const detail::kb::SqliteError& e) {
      std::string fix;
      if (e.primary() == SQLITE_BUSY || e.primary() == SQLITE_LOCKED)
        fix = "another process held the knowledge base longer than the busy timeout; try again";
      else if (e.primary() == SQLITE_FULL)
        fix = "free some disk space";
      else if (e.primary() == SQLITE_CORRUPT || e.primary() == SQLITE_NOTADB)
        fix = "the file is damaged: a new process moves it aside and starts a fresh one";
      throw Error(sinew::errc::knowledge_base,
                  std::string("knowledge base ") + path + ": " + doing + ": SQLite: " + e.what(), {.fix = fix});
    }
  }

  std::optional<std::int64_t> find_id(const KbKey& key, const std::string& fkey) const;

  // The rows of a table after `where` (an SQL tail: conditions, order), `args` bound to its ?s.
  std::vector<KbEntry> select_entries(const std::string& where, const std::vector<std::string>& args) const;
  std::vector<KbRun> select_runs(const std::string& where, const std::vector<std::string>& args) const;
  std::vector<KbEvent> select_events(const std::string& where, const std::vector<std::string>& args) const;

  detail::kb::Statement prepare_insert_run() const;
  detail::kb::Statement prepare_add_executions() const;

  // With a statement from prepare_add_executions(); false when the entry does not exist.
  bool add_executions(detail::kb::Statement& s, std::int64_t entry, std::int64_t n);

  std::int64_t insert_run(const KbRun& r);
  // With a statement from prepare_insert_run(), reused over a batch.
  std::int64_t insert_run(detail::kb::Statement& s, const KbRun& r);

  std::int64_t insert_event(const KbEvent& e);
  std::int64_t insert_entry(const KbEntry& e, const std::string& created, const std::string& updated);
  // Replaces the plan of entry `id` (not its identity, executions or created).
  void update_entry(std::int64_t id, const KbEntry& e, const std::string& updated);

 private:
  // SELECT `columns` FROM `table` `where`, each row read by `from`.
  template <class Row>
  std::vector<Row> select(const char* columns, const char* table, Row (*from)(const detail::kb::Statement&),
                          const std::string& where, const std::vector<std::string>& args) const;
};

}  // namespace sinew
