// test/unit/kb_migrate_test.cpp — migration 003 and what it shares with import_json: old strategy
// spellings become today's; version-2 files built by hand are opened and checked row by row, as
// are older exports.
#include <sinew/kb.hpp>

#include "kb/features.hpp"
#include "kb/kb_raw.hpp"
#include "kb/kb_test_util.hpp"
#include "kb/legacy.hpp"
#include "kb/schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace kb = sinew::detail::kb;
using kbtest::Raw;
using kbtest::TempDir;
using sinew::KbFeatures;

const fs::path kSource = SINEW_SOURCE_DIR;

// An SQL string literal.
std::string q(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A knowledge base as version 2 wrote it (kb/migrations/001 and 002), filled row by row.
class VersionTwoFile {
 public:
  explicit VersionTwoFile(const std::string& path) : db(path) {
    db.exec(kbtest::read_file((kSource / "kb/migrations/001_initial.sql").string()));
    db.exec(kbtest::read_file((kSource / "kb/migrations/002_balancing.sql").string()));
  }
  void describe(const std::string& tree, const std::string& description) {
    db.exec("INSERT INTO trees (tree, label, description, created) VALUES (" + q(tree) + ", 'test', " +
            q(description) + ", '2024-01-01T00:00:00.000Z')");
  }
  std::int64_t entry(const sinew::KbKey& k, const KbFeatures& f, const std::string& strategy,
                     const std::string& updated = "2024-01-02T00:00:00.000Z", const std::string& provenance = "trained",
                     std::int64_t source = 0, std::int64_t executions = 0) {
    db.exec("INSERT INTO entries (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
            "provenance, source, precision, quality, executions, created, updated, strategy) VALUES (" +
            q(k.tree) + ", " + q(k.devices) + ", " + q(k.library) + ", " + q(kb::features_text(f)) + ", " +
            q(kb::feature_key(f)) + ", 'none', 1, '[0.25, 0.75]', 12.5, " + q(provenance) + ", " +
            (source ? std::to_string(source) : "NULL") + ", 0.05, 3, " + std::to_string(executions) +
            ", '2024-01-01T00:00:00.000Z', " + q(updated) + ", " + q(strategy) + ")");
    return std::stoll(db.value("SELECT last_insert_rowid()"));
  }
  void run(const sinew::KbKey& k, const KbFeatures& f, double time_ms, const std::string& purpose = "training") {
    db.exec("INSERT INTO runs (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
            "purpose, created, partition_ms) VALUES (" +
            q(k.tree) + ", " + q(k.devices) + ", " + q(k.library) + ", " + q(kb::features_text(f)) + ", " +
            q(kb::feature_key(f)) + ", 'none', 1, '[0.25, 0.75]', " + std::to_string(time_ms) + ", " + q(purpose) +
            ", '2024-01-01T00:00:00.000Z', '[1, 2]')");
  }
  void event(std::int64_t entry) {
    db.exec("INSERT INTO events (entry, execution, level, fission_before, overlap_before, shares_before, "
            "fission_after, overlap_after, shares_after, time_ms, partition_ms, deviation, lbt, created) VALUES (" +
            std::to_string(entry) +
            ", 4, 1, 'none', 1, '[0.25, 0.75]', 'none', 1, '[0.3, 0.7]', 12, '[10, 12]', 0.1, 0.05, "
            "'2024-01-03T00:00:00.000Z')");
  }

  Raw db;
};

// --- The rules (kb/legacy.hpp) ---------------------------------------------------------------------

TEST(KbMigrate, OldStrategySpellingsMapToTodays) {
  const std::string even(sinew::to_string(sinew::Strategy::even_split));
  const std::string assisted(sinew::to_string(sinew::Strategy::cpu_assisted));
  const std::string nearest(sinew::to_string(sinew::Interpolation::nearest));
  const std::string inverse(sinew::to_string(sinew::Interpolation::inverse_distance));
  EXPECT_EQ(even, "even_split");
  EXPECT_EQ(assisted, "cpu_assisted");
  EXPECT_EQ(nearest, "nearest");
  EXPECT_EQ(inverse, "inverse_distance");

  const std::map<std::string, std::string> expected = {
      {"even", even},
      {"50/50", even},
      {"cpu-assisted", assisted},
      {"assisted", assisted},
      {"nearest-neighbour", nearest},
      {"inverse-distance", inverse},
      {"nearest-neighbour+screen", nearest + "+screen"},
      {"inverse-distance+screen", inverse + "+screen"},
      {"even+screen", even + "+screen"},
      // Today's spellings and anything unknown are kept.
      {even, even},
      {assisted, assisted},
      {nearest + "+screen", nearest + "+screen"},
      {inverse, inverse},
      {"balancer", "balancer"},
      {"", ""},
      {"+screen", "+screen"},
      {"something else", "something else"},
      {"Even", "Even"},
  };
  for (const auto& [old, today] : expected) EXPECT_EQ(kb::canonical_strategy(old), today) << old;
}

// --- Version-2 files opened by this library ------------------------------------------------------

TEST(KbMigrate, VersionTwoFileGetsTodaysStrategies) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  const auto k = kbtest::key();
  const std::vector<std::pair<std::string, std::string>> spellings = {
      {"even", "even_split"},
      {"50/50", "even_split"},
      {"cpu-assisted", "cpu_assisted"},
      {"assisted", "cpu_assisted"},
      {"nearest-neighbour", "nearest"},
      {"nearest-neighbour+screen", "nearest+screen"},
      {"inverse-distance", "inverse_distance"},
      {"inverse-distance+screen", "inverse_distance+screen"},
      {"even_split", "even_split"},
      {"balancer", "balancer"},
      {"", ""},
      {"something else", "something else"},
  };
  {
    VersionTwoFile v2(path);
    double n = 0;
    for (const auto& [old, today] : spellings) v2.entry(k, {{"n", ++n}}, old);
  }
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  double n = 0;
  for (const auto& [old, today] : spellings) {
    auto e = kb->find(k, {{"n", ++n}});
    ASSERT_TRUE(e.has_value()) << old;
    EXPECT_EQ(e->strategy, today) << old;
    EXPECT_EQ(e->updated, "2024-01-02T00:00:00.000Z");  // a rewrite of its spelling, not an update
  }
  EXPECT_EQ(kb->entries(k).size(), spellings.size());
  kb.reset();
  Raw check(path);
  EXPECT_EQ(check.value("PRAGMA user_version"), std::to_string(kb::kSchemaVersion));
}

TEST(KbMigrate, OlderExportsAreImportedWithTodaysStrategies) {
  auto source = sinew::KnowledgeBase::memory();
  auto e = kbtest::entry(kbtest::key(), {{"n", 1}}, kbtest::config({0.5, 0.5}), 3, sinew::Provenance::derived);
  e.strategy = "nearest-neighbour+screen";  // as an older version wrote it
  source->store_entry(e);
  auto kb = sinew::KnowledgeBase::memory();
  EXPECT_EQ(kb->import_json(source->export_json()).entries, 1);
  auto imported = kb->find(kbtest::key(), {{"n", 1}});
  ASSERT_TRUE(imported.has_value());
  EXPECT_EQ(imported->strategy, "nearest+screen");
}

}  // namespace
