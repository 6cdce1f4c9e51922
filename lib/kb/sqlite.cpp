// kb/sqlite.cpp — the RAII layer over SQLite (see sqlite.hpp).
#include "kb/sqlite.hpp"

namespace sinew::detail::kb {

Connection::Connection(const std::string& path, int flags) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    int code = db_ ? sqlite3_extended_errcode(db_) : rc;
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(code, message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    sqlite3_close_v2(db_);
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

void Connection::fail(int code, std::string_view doing) const {
  std::string message(doing);
  message += ": ";
  message += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  throw SqliteError(db_ ? sqlite3_extended_errcode(db_) : code, message);
}

void Connection::exec(const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    auto first_line = sql.substr(0, sql.find('\n'));
    throw SqliteError(sqlite3_extended_errcode(db_), first_line + ": " + message);
  }
}

Statement Connection::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), int(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) fail(rc, "preparing '" + std::string(sql.substr(0, 60)) + "'");
  return Statement(*this, stmt);
}

Statement& Statement::bind(int i, std::string_view text) {
  int rc = sqlite3_bind_text(stmt_, i, text.data(), int(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(i));
  return *this;
}

Statement& Statement::bind(int i, double v) {
  int rc = sqlite3_bind_double(stmt_, i, v);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(i));
  return *this;
}

Statement& Statement::bind(int i, std::int64_t v) {
  int rc = sqlite3_bind_int64(stmt_, i, v);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(i));
  return *this;
}

Statement& Statement::bind(int i, std::nullopt_t) {
  int rc = sqlite3_bind_null(stmt_, i);
  if (rc != SQLITE_OK) db_->fail(rc, "binding parameter " + std::to_string(i));
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, std::string("running '") + std::string(sqlite3_sql(stmt_)).substr(0, 60) + "'");
}

std::string Statement::text(int col) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  return p ? std::string(p, std::size_t(sqlite3_column_bytes(stmt_, col))) : std::string();
}

}  // namespace sinew::detail::kb
