// kb/open.cpp — opening a knowledge base: a file checked to be one of ours (integrity, schema
// version) and brought up to date (kb/migrate.cpp), or memory instead when the file cannot be used,
// with a corrupt file moved aside for the next process to start afresh.
#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include "kb/migrate.hpp"
#include "kb/schema.hpp"
#include "kb/sqlite.hpp"
#include "kb/store.hpp"
#include "kb/utc.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

namespace fs = std::filesystem;

namespace sinew {

using namespace detail::kb;  // this module's internals (kb/*.hpp)

namespace {

// Why a file cannot be used, and what open() did about it.
struct Unusable {
  enum Kind { unopenable, locked, corrupt, foreign } kind;
  std::string detail;
};

Unusable classify(const SqliteError& e) {
  switch (e.primary()) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return {Unusable::locked, e.what()};
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return {Unusable::corrupt, e.what()};
    default: return {Unusable::unopenable, e.what()};
  }
}

// Runs `attempt` until it returns, retrying what another process's work in progress explains,
// until `options.busy_timeout` has passed: "busy" (SQLite answers it at once where waiting could
// deadlock: two processes switching a new file to WAL together, a reader upgrading to a writer),
// and, for at most a second, a file that reads as corrupt. A file is identified through a read
// that takes no lock (open_read_only), so it can meet another process writing the file's pages
// (creating its schema, or checkpointing its WAL at close: a few megabytes at most) and see them
// half written; a corrupt file stays corrupt however often it is read. Then the last error is
// thrown.
template <class F>
auto retrying(const KbOptions& options, F attempt) -> decltype(attempt()) {
  const auto start = std::chrono::steady_clock::now();
  const auto busy_end = start + options.busy_timeout;
  const auto torn_end = start + std::min<std::chrono::milliseconds>(options.busy_timeout, std::chrono::seconds(1));
  for (unsigned n = 0;; ++n) {
    try {
      return attempt();
    } catch (const SqliteError& e) {
      const Unusable::Kind kind = classify(e).kind;
      const auto end = kind == Unusable::corrupt ? torn_end : busy_end;
      if (kind == Unusable::unopenable || std::chrono::steady_clock::now() >= end) throw;
    } catch (const Unusable& u) {
      if (u.kind != Unusable::corrupt || std::chrono::steady_clock::now() >= torn_end) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + (n * 7 + ::getpid()) % 20));
  }
}

// Renames `from` to `to` unless `to` exists (atomically where the file system can).
bool rename_no_replace(const std::string& from, const std::string& to, std::string& error) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EINVAL || errno == ENOSYS) {  // file system without RENAME_NOREPLACE
    std::error_code ec;
    if (!fs::exists(to, ec) && ::rename(from.c_str(), to.c_str()) == 0) return true;
    if (errno == 0) errno = EEXIST;
  }
  error = std::strerror(errno);
  return false;
}

// Moves a corrupt file (and its -wal / -shm companions) aside. Returns the new name, or "" with
// `error` set.
std::string move_aside(const std::string& path, std::string& error) {
  std::string base = path + ".corrupt-" + utc_now(true);
  std::string target = base;
  for (int i = 2; i < 100; ++i) {
    std::error_code ec;
    if (!fs::exists(target, ec) && !fs::exists(target + "-wal", ec)) break;
    target = base + "-" + std::to_string(i);
  }
  if (!rename_no_replace(path, target, error)) return {};
  for (const char* suffix : {"-wal", "-shm"}) {
    std::error_code ec;
    if (fs::exists(path + suffix, ec)) {
      std::string ignored;
      rename_no_replace(path + suffix, target + suffix, ignored);
    }
  }
  return target;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", double(ms.count()) / 1000.0);
  return buf;
}

void configure(Connection& db) {
  db.exec("PRAGMA foreign_keys = ON");
}

}  // namespace

KnowledgeBase::KnowledgeBase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KnowledgeBase::~KnowledgeBase() = default;

std::unique_ptr<KnowledgeBase> KnowledgeBase::memory() {
  auto impl = std::make_unique<Impl>();
  try {
    impl->db = Connection(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    configure(impl->db);
    migrate(impl->db);
  } catch (const SqliteError& e) {  // out of memory, or SQLite built without what we need
    throw Error(sinew::errc::knowledge_base, std::string("cannot create an in-memory knowledge base: ") + e.what());
  }
  return std::unique_ptr<KnowledgeBase>(new KnowledgeBase(std::move(impl)));
}

namespace {

// A read-only connection that creates no file: with no -wal beside the database (no writer has it
// open), SQLite would still create -wal and -shm files to read a WAL-mode file, so it is opened
// immutable; with one, the writer's -wal and -shm are read as they are.
Connection open_read_only(const std::string& path, const KbOptions& options) {
  std::error_code ec;
  const bool writer = fs::exists(path + "-wal", ec);
  std::string uri = "file:";
  for (char c : fs::absolute(path, ec).string()) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  if (!writer) uri += "?immutable=1";
  Connection db(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
  sqlite3_busy_timeout(db.get(), int(options.busy_timeout.count()));
  return db;
}

// Whether the file `db` reads (a read-only connection, open_read_only) is a Sinew knowledge base,
// decided before anything is written: its application_id says so (schema version 5 on); a file of
// versions 1 to 4, which had none, has Sinew's tables. An empty database becomes one. Returns the
// schema version; throws Unusable (corrupt, foreign) or SqliteError.
int identify(Connection& db) {
  {
    auto check = db.prepare("PRAGMA quick_check");
    std::string first = check.step() ? check.text(0) : "no result";
    if (first != "ok") throw Unusable{Unusable::corrupt, "integrity check failed: " + first};
  }
  // One snapshot: another process may be creating the schema right now.
  auto state = db.prepare(
      "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
      "(SELECT count(*) FROM sqlite_master), "
      "(SELECT count(*) FROM pragma_table_info('entries') WHERE name IN "
      "('tree', 'devices', 'library', 'features', 'feature_key', 'shares', 'provenance')), "
      "(SELECT count(*) FROM pragma_table_info('runs') WHERE name IN "
      "('tree', 'devices', 'library', 'features', 'feature_key', 'shares', 'purpose'))");
  state.step();
  const std::int64_t application = state.integer(0);
  const int version = int(state.integer(1));
  const std::int64_t objects = state.integer(2);
  const bool sinew_tables = state.integer(3) == 7 && state.integer(4) == 7;
  if (application == 0 && version == 0 && objects == 0) return 0;  // an empty database
  if (application != 0 && application != kApplicationId)
    throw Unusable{Unusable::foreign,
                   "it is another program's SQLite database (application_id " + std::to_string(application) + ")"};
  if (application == 0 && (version < 1 || version > 4 || !sinew_tables))
    throw Unusable{Unusable::foreign, "it is an SQLite database of something else (not Sinew's tables)"};
  if (version > kSchemaVersion)
    throw Unusable{Unusable::foreign, "it was written by a newer Sinew (schema version " + std::to_string(version) +
                                          "; this one knows up to " + std::to_string(kSchemaVersion) + ")"};
  if (!sinew_tables)
    throw Unusable{Unusable::foreign, "it is a Sinew knowledge base whose tables are missing or changed"};
  return version;
}

// One attempt at opening `path` as a knowledge base: identified first (read-only, so that a file
// that is not ours is never written), then WAL mode and the schema. Throws SqliteError or Unusable.
Connection open_checked(const std::string& path, const KbOptions& options) {
  if (std::error_code ec; fs::exists(path, ec)) {  // a file that does not exist becomes one
    Connection probe = open_read_only(path, options);
    identify(probe);
  }
  Connection db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  sqlite3_busy_timeout(db.get(), int(options.busy_timeout.count()));
  configure(db);
  if (sqlite3_db_readonly(db.get(), "main") == 1) throw Unusable{Unusable::unopenable, "the file is read-only"};
  {
    auto mode = db.prepare("PRAGMA journal_mode = WAL");
    mode.run();
  }
  db.exec("PRAGMA synchronous = NORMAL");
  migrate(db);
  return db;
}

std::unique_ptr<KnowledgeBase::Impl> read_file(const std::string& path, const KbOptions& options);

// A knowledge base for reading only (KbOptions::read_only): identified like any, then read where
// it is — or, written by an older Sinew or empty (being created), copied into memory and migrated
// there, the file unchanged. Nothing is created, moved or written. Throws
// sinew::Error(errc::knowledge_base).
std::unique_ptr<KnowledgeBase::Impl> open_for_reading(const std::string& path, const KbOptions& options) {
  auto refuse = [&](const std::string& why) -> std::unique_ptr<KnowledgeBase::Impl> {
    throw Error(sinew::errc::knowledge_base, "knowledge base " + path + " cannot be read: " + why);
  };
  std::error_code ec;
  if (!fs::exists(path, ec)) return refuse("there is no such file");
  // Why the file cannot be read, said once for both kinds of failure.
  auto reason = [](const Unusable& u) {
    return (u.kind == Unusable::corrupt ? "it is corrupt (" + u.detail + ")" : u.detail) + "; the file is left as it is";
  };
  try {
    return retrying(options, [&] { return read_file(path, options); });
  } catch (const SqliteError& e) {
    return refuse(reason(classify(e)));
  } catch (const Unusable& u) {
    return refuse(reason(u));
  }
}

// One attempt at open_for_reading's work. Throws SqliteError or Unusable.
std::unique_ptr<KnowledgeBase::Impl> read_file(const std::string& path, const KbOptions& options) {
  Connection file = open_read_only(path, options);
  const int version = identify(file);
  auto impl = std::make_unique<KnowledgeBase::Impl>();
  impl->path = path;
  impl->persistent = true;
  if (version == kSchemaVersion) {
    configure(file);
    impl->db = std::move(file);
  } else {
    impl->db = Connection(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    sqlite3_backup* copy = sqlite3_backup_init(impl->db.get(), "main", file.get(), "main");
    const int step = copy ? sqlite3_backup_step(copy, -1) : SQLITE_ERROR;
    sqlite3_backup_finish(copy);
    if (step != SQLITE_DONE) {
      const bool torn = (step & 0xff) == SQLITE_CORRUPT || (step & 0xff) == SQLITE_NOTADB;
      throw Unusable{torn ? Unusable::corrupt : Unusable::unopenable, sqlite3_errstr(step)};
    }
    configure(impl->db);
    // Version 0 is an empty database (a 0-byte file, or one whose creator has not written the
    // schema yet): the copy gets today's empty schema and reads as an empty knowledge base.
    migrate(impl->db);
  }
  impl->db.exec("PRAGMA query_only = ON");  // every write fails, as on the file itself
  return impl;
}

}  // namespace

std::unique_ptr<KnowledgeBase> KnowledgeBase::open(const std::string& path, KbOptions options) {
  if (path.empty() || path == ":memory:") return memory();
  if (options.read_only) return std::unique_ptr<KnowledgeBase>(new KnowledgeBase(open_for_reading(path, options)));

  std::optional<Unusable> problem;
  Connection db;
  try {
    auto parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      fs::create_directories(parent, ec);
      if (ec) throw Unusable{Unusable::unopenable, "cannot create directory " + parent.string() + ": " + ec.message()};
    }
    db = retrying(options, [&] { return open_checked(path, options); });
  } catch (const SqliteError& e) {
    problem = classify(e);
  } catch (const Unusable& u) {
    problem = u;
  } catch (const std::exception& e) {  // std::filesystem, std::bad_alloc
    problem = Unusable{Unusable::unopenable, e.what()};
  }

  if (!problem) {
    auto impl = std::make_unique<Impl>();
    impl->db = std::move(db);
    impl->path = path;
    impl->persistent = true;
    return std::unique_ptr<KnowledgeBase>(new KnowledgeBase(std::move(impl)));
  }

  db = Connection();  // close before moving the file
  std::string what = "knowledge base " + path;
  const std::string memory_note = "; continuing with an in-memory knowledge base (what this process learns is not kept)";
  switch (problem->kind) {
    case Unusable::locked:
      what += " is locked by another process (still busy after " + seconds_text(options.busy_timeout) + ": " +
              problem->detail + ")" + memory_note + "; the file is left untouched";
      break;
    case Unusable::unopenable:
      what += " cannot be used (" + problem->detail + ")" + memory_note + "; the file is left untouched";
      break;
    case Unusable::foreign:
      what += " cannot be used: " + problem->detail + memory_note + "; the file is left untouched";
      break;
    case Unusable::corrupt: {
      std::string error;
      std::string moved = move_aside(path, error);
      what += " is corrupt (" + problem->detail + ")";
      if (!moved.empty())
        what += "; moved it aside to " + moved + memory_note + "; the next process starts a new file";
      else
        what += "; could not move it aside (" + error + "), so it is left in place" + memory_note;
      break;
    }
  }
  auto kb = memory();
  kb->impl_->warning = what;
  if (options.log) options.log(LogLevel::warning, what);
  return kb;
}

bool KnowledgeBase::persistent() const { return impl_->persistent; }
const std::string& KnowledgeBase::path() const { return impl_->path; }
const std::string& KnowledgeBase::warning() const { return impl_->warning; }

}  // namespace sinew
