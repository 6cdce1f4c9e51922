-- Schema version 5 -> 6: plan items beyond the shares, fission and overlap (a schedule's or a
-- skeleton's own knobs, lib/platform/plan_items.hpp), as a JSON object of item name -> value text.
-- '{}' is a plan of the split alone, which every plan stored before this version is.
ALTER TABLE entries ADD COLUMN plan TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN plan TEXT NOT NULL DEFAULT '{}';
ALTER TABLE events ADD COLUMN plan_before TEXT NOT NULL DEFAULT '{}';
ALTER TABLE events ADD COLUMN plan_after TEXT NOT NULL DEFAULT '{}';
PRAGMA user_version = 6;
