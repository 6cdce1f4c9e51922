-- Schema version 2 -> 3: one spelling per strategy. entries.strategy now holds
-- sinew::to_string(Strategy) for trained entries ("even_split", "cpu_assisted"), the interpolator's
-- name for derived ones ("nearest", "inverse_distance", followed by "+screen" when runs checked
-- the plan), "balancer", or "". Older versions wrote "even", "50/50", "cpu-assisted", "assisted",
-- "nearest-neighbour" and "inverse-distance" (each possibly followed by "+screen").
--
-- No table changes. The rewrite is a C++ step that lib/kb/migrate.cpp runs right after this file,
-- in the same transaction: canonical_strategy() in lib/kb/legacy.cpp, the one list of old
-- spellings, which KnowledgeBase::import_json applies to older exports too. Other values are kept.
PRAGMA user_version = 3;
