-- Schema version 6 -> 7: each run's per-device busy times, in the order of the plan's shares (a
-- device given no work: 0), as the host measured them; '[]' where they were not kept, which is
-- every run stored before this version. Derivation fits a device's cost from these where the
-- device never ran alone (training measures slow devices on a small share first).
ALTER TABLE runs ADD COLUMN device_ms TEXT NOT NULL DEFAULT '[]';
PRAGMA user_version = 7;
