// test/kb/kb_raw.hpp — a raw SQLite connection for the knowledge-base tests that build and inspect
// files behind the library's back (older schema versions). Header only: include it only in tests
// that link SQLite::SQLite3.
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace kbtest {

// A raw connection for building and inspecting files behind the library's back.
class Raw {
 public:
  explicit Raw(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_));
  }
  ~Raw() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string e = error ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(e);
    }
  }
  // Every row of a query, columns joined by '|'.
  std::vector<std::string> rows(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_));
    std::vector<std::string> out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        if (c) row += '|';
        auto t = sqlite3_column_text(s, c);
        row += t ? reinterpret_cast<const char*>(t) : "NULL";
      }
      out.push_back(row);
    }
    sqlite3_finalize(s);
    return out;
  }
  std::string value(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() ? "" : r.front();
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace kbtest
