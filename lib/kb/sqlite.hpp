// kb/sqlite.hpp — a thin RAII layer over the SQLite C API: a connection, prepared statements
// with positional binding, and errors that carry SQLite's result code and message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sinew::detail::kb {

// A failed SQLite call: code() is the extended result code.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }
  int primary() const noexcept { return code_ & 0xff; }

 private:
  int code_;
};

class Statement;

class Connection {
 public:
  Connection() = default;
  // Throws SqliteError (the handle is closed again on failure).
  Connection(const std::string& path, int flags);
  ~Connection();
  Connection(Connection&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Connection& operator=(Connection&& o) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* get() const { return db_; }
  explicit operator bool() const { return db_ != nullptr; }

  // Runs one or more statements that return nothing of interest.
  void exec(const std::string& sql);
  Statement prepare(std::string_view sql);
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }

  [[noreturn]] void fail(int code, std::string_view doing) const;

 private:
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(const Connection& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Binding, 1-based like SQLite.
  Statement& bind(int i, std::string_view text);
  Statement& bind(int i, const std::string& text) { return bind(i, std::string_view(text)); }
  Statement& bind(int i, const char* text) { return bind(i, std::string_view(text)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, int v) { return bind(i, std::int64_t(v)); }
  Statement& bind(int i, unsigned v) { return bind(i, std::int64_t(v)); }
  Statement& bind(int i, std::nullopt_t);
  Statement& bind(int i, const std::optional<std::int64_t>& v) {
    return v ? bind(i, *v) : bind(i, std::nullopt);
  }
  // Binds each argument in order, from 1.
  template <class... A>
  Statement& bind_all(const A&... a) {
    int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  // Steps once: true while a row is available. Throws SqliteError.
  bool step();
  // Steps to completion (an INSERT/UPDATE/DELETE).
  void run() {
    while (step()) {
    }
  }
  void reset() { sqlite3_reset(stmt_); sqlite3_clear_bindings(stmt_); }

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const;
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::optional<std::int64_t> optional_integer(int col) const {
    return is_null(col) ? std::nullopt : std::optional<std::int64_t>(integer(col));
  }

 private:
  const Connection* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed uncommitted (an exception).
class Transaction {
 public:
  explicit Transaction(Connection& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    db_.exec("COMMIT");
    done_ = true;
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Connection& db_;
  bool done_ = false;
};

}  // namespace sinew::detail::kb
