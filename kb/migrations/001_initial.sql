-- Sinew knowledge base, schema version 1 (the first release). Kept as written so that the
-- migration path can be tested: a fresh knowledge base is created from ../schema.sql instead.
CREATE TABLE entries (
  id          INTEGER PRIMARY KEY,
  tree        TEXT NOT NULL,
  devices     TEXT NOT NULL,
  library     TEXT NOT NULL,
  features    TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  fission     TEXT NOT NULL,
  overlap     INTEGER NOT NULL,
  shares      TEXT NOT NULL,
  time_ms     REAL NOT NULL,
  provenance  TEXT NOT NULL CHECK (provenance IN ('trained', 'derived', 'balanced', 'manual')),
  source      INTEGER REFERENCES entries (id) ON DELETE SET NULL,
  precision   REAL NOT NULL DEFAULT 0,
  quality     INTEGER NOT NULL DEFAULT 0,
  executions  INTEGER NOT NULL DEFAULT 0,
  created     TEXT NOT NULL,
  updated     TEXT NOT NULL,
  UNIQUE (tree, devices, library, feature_key)
);
CREATE INDEX entries_by_tree ON entries (tree);

CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  tree        TEXT NOT NULL,
  devices     TEXT NOT NULL,
  library     TEXT NOT NULL,
  features    TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  fission     TEXT NOT NULL,
  overlap     INTEGER NOT NULL,
  shares      TEXT NOT NULL,
  time_ms     REAL NOT NULL,
  purpose     TEXT NOT NULL CHECK (purpose IN ('training', 'balancing', 'execution')),
  created     TEXT NOT NULL
);
CREATE INDEX runs_by_key ON runs (tree, devices, library, feature_key);

PRAGMA user_version = 1;
