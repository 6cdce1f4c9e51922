// kb/migrate.hpp — creating the schema in a new knowledge base and bringing an older one up to
// date: kb/schema.sql, or each newer kb/migrations/NNN_*.sql followed by its C++ step, if any.
#pragma once

#include "kb/sqlite.hpp"

namespace sinew::detail::kb {

int user_version(Connection& db);

// Creates the schema in an empty database, or migrates an older one, in one transaction (all or
// nothing); a no-op at kSchemaVersion. Throws SqliteError.
void migrate(Connection& db);

}  // namespace sinew::detail::kb
