// kb/schema.hpp — the knowledge base schema and its migrations, embedded from kb/*.sql at build
// time (cmake/EmbedKb.cmake generates their definitions; the .sql files are the only copy).
#pragma once

#include <vector>

namespace sinew::detail::kb {

// PRAGMA user_version of a knowledge base this library writes: the number of the last file in
// kb/migrations/ (the generated source static_asserts it).
inline constexpr int kSchemaVersion = 7;
// PRAGMA application_id of a knowledge base: "SINW" (schema.sql, migrations/005).
inline constexpr int kApplicationId = 1397313111;

// kb/schema.sql: creates a fresh knowledge base at kSchemaVersion.
extern const char* const kSchema;

// kb/migrations/NNN_*.sql in the order of their numbers: each takes a file from version `to - 1`
// to `to` and sets user_version. Version 1 (kb/migrations/001_initial.sql) is never created any
// more, only migrated from, so the list starts at 2.
struct Migration {
  int to;
  const char* file;  // its name under kb/migrations/
  const char* sql;
};
const std::vector<Migration>& migrations();

}  // namespace sinew::detail::kb
