-- Schema version 1 -> 2: the load balancer's events, per-partition times of every run, the
-- training strategy of an entry, and readable tree descriptions for `sinew kb list/show`.
ALTER TABLE entries ADD COLUMN strategy TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN partition_ms TEXT NOT NULL DEFAULT '[]';

CREATE TABLE events (
  id           INTEGER PRIMARY KEY,
  entry        INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  execution    INTEGER NOT NULL,
  level        INTEGER NOT NULL CHECK (level IN (1, 2)),
  fission_before TEXT NOT NULL,
  overlap_before INTEGER NOT NULL,
  shares_before  TEXT NOT NULL,
  fission_after  TEXT NOT NULL,
  overlap_after  INTEGER NOT NULL,
  shares_after   TEXT NOT NULL,
  time_ms      REAL NOT NULL,
  partition_ms TEXT NOT NULL,
  deviation    REAL NOT NULL,
  lbt          REAL NOT NULL,
  created      TEXT NOT NULL
);
CREATE INDEX events_by_entry ON events (entry);

CREATE TABLE trees (
  tree        TEXT PRIMARY KEY,
  label       TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  created     TEXT NOT NULL
);

PRAGMA user_version = 2;
