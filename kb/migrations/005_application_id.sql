-- Schema version 4 -> 5: the file says it is a Sinew knowledge base (PRAGMA application_id,
-- 1397313111 = "SINW"), something no other program writes. Opening checks it, read-only, before
-- touching anything: another program's database is left byte for byte as it was. Files of
-- versions 1 to 4 carry no application_id; they are recognised by their tables (entries and runs
-- with Sinew's columns) and get it here.
PRAGMA application_id = 1397313111;
PRAGMA user_version = 5;
