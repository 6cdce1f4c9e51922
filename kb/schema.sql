-- Sinew knowledge base, schema version 7 (PRAGMA user_version), application_id "SINW" (PRAGMA
-- application_id = 1397313111: what identifies a file as one). A new file is created from this
-- text; an older file is brought here by migrations/NNN_*.sql, some followed by a C++ step that
-- rewrites rows (lib/kb/migrate.cpp; a unit test checks that both paths give the same tables,
-- columns, indexes and foreign keys). The build embeds this file and the migrations into the
-- library (cmake/EmbedKb.cmake): they are the only copy.
--
-- Identity of what is stored: (tree, devices, library) — the tree signature, the device set and
-- the Sinew version — and then the input features. `features` is a JSON object in the caller's
-- order; `feature_key` the same object sorted by name, for exact matching. Numbers in JSON are
-- written in their shortest round-trip form. Times are UTC ISO 8601 text with milliseconds.
-- Feature names: "<vector name>.size" (an unnamed vector: "v<k>.size", k its position in the
-- tree), "host.pinned", or a scalar's name given with as_feature().

-- The current plan per (tree, devices, library, features). Its history is in runs and events.
CREATE TABLE entries (
  id          INTEGER PRIMARY KEY,
  tree        TEXT NOT NULL,
  devices     TEXT NOT NULL,
  library     TEXT NOT NULL,
  features    TEXT NOT NULL,
  feature_key TEXT NOT NULL,
  fission     TEXT NOT NULL,
  overlap     INTEGER NOT NULL,
  shares      TEXT NOT NULL,     -- JSON array, one share per runtime device
  time_ms     REAL NOT NULL,
  provenance  TEXT NOT NULL CHECK (provenance IN ('trained', 'derived', 'balanced', 'manual')),
  source      INTEGER REFERENCES entries (id) ON DELETE SET NULL,  -- derived/balanced from
  precision   REAL NOT NULL DEFAULT 0,
  quality     INTEGER NOT NULL DEFAULT 0,
  executions  INTEGER NOT NULL DEFAULT 0,
  created     TEXT NOT NULL,
  updated     TEXT NOT NULL,
  strategy    TEXT NOT NULL DEFAULT '',  -- see KbEntry::strategy (include/sinew/kb.hpp)
  plan        TEXT NOT NULL DEFAULT '{}',  -- JSON object: plan items beyond the split (migrations/006)
  UNIQUE (tree, devices, library, feature_key)
);
CREATE INDEX entries_by_tree ON entries (tree);

-- Every measurement, append only. Bests are queries over it.
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
  created     TEXT NOT NULL,
  partition_ms TEXT NOT NULL DEFAULT '[]',  -- JSON array of per-partition busy times
  plan        TEXT NOT NULL DEFAULT '{}',
  device_ms   TEXT NOT NULL DEFAULT '[]'   -- JSON array of per-device busy times, in share order
);
CREATE INDEX runs_by_key ON runs (tree, devices, library, feature_key);

-- Load-balancer interventions (level 1: shares moved; level 2: partial retraining).
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
  created      TEXT NOT NULL,
  plan_before  TEXT NOT NULL DEFAULT '{}',
  plan_after   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_entry ON events (entry);

-- Readable names for tree signatures.
CREATE TABLE trees (
  tree        TEXT PRIMARY KEY,
  label       TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  created     TEXT NOT NULL
);

PRAGMA application_id = 1397313111;
PRAGMA user_version = 7;
