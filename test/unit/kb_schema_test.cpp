// test/unit/kb_schema_test.cpp — the schema: every kb/migrations file is embedded in order, a
// fresh file and a migrated version-1 file have the same structure, and a real version-1
// knowledge base opens with its contents intact.
#include <sinew/kb.hpp>

#include "kb/kb_raw.hpp"
#include "kb/kb_test_util.hpp"
#include "kb/schema.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <regex>

namespace {

namespace fs = std::filesystem;
using kbtest::Raw;
using kbtest::TempDir;

const fs::path kSource = SINEW_SOURCE_DIR;

// Tables, columns (name, type, not null, default, primary key), indexes and foreign keys.
std::map<std::string, std::vector<std::string>> structure(Raw& db) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& table : db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    auto& rows = out[table];
    for (const auto& c : db.rows("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('" + table + "')"))
      rows.push_back("column " + c);
    for (const auto& i : db.rows("SELECT name, \"unique\", origin FROM pragma_index_list('" + table + "') ORDER BY name")) {
      std::string name = i.substr(0, i.find('|'));
      std::string columns;
      for (const auto& c : db.rows("SELECT name FROM pragma_index_info('" + name + "') ORDER BY seqno")) columns += c + ",";
      // Automatic index names depend on creation order; their columns do not.
      rows.push_back("index " + (name.rfind("sqlite_autoindex", 0) == 0 ? "auto" : i) + " on " + columns);
    }
    for (const auto& f : db.rows("SELECT \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list('" + table + "')"))
      rows.push_back("foreign key " + f);
    std::sort(rows.begin(), rows.end());
  }
  for (const auto& v : db.rows("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")) out["view " + v];
  return out;
}

// The build embeds the files (cmake/EmbedKb.cmake), so their text cannot differ; what is checked
// is that the generated list holds every migration after 001, in the order of its number.
TEST(KbSchema, EveryMigrationFileIsEmbeddedInOrder) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kSource / "kb/migrations"))
    if (e.path().extension() == ".sql") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files.front().filename(), "001_initial.sql");
  const auto& embedded = sinew::detail::kb::migrations();
  ASSERT_EQ(embedded.size() + 1, files.size()) << "every kb/migrations file after 001 must be embedded";
  for (std::size_t i = 0; i < embedded.size(); ++i) {
    EXPECT_EQ(files[i + 1].filename(), embedded[i].file);
    EXPECT_EQ(embedded[i].to, int(i) + 2);
  }
  EXPECT_EQ(embedded.back().to, sinew::detail::kb::kSchemaVersion);
  EXPECT_NE(std::string(sinew::detail::kb::kSchema).find("PRAGMA user_version = " +
                                                         std::to_string(sinew::detail::kb::kSchemaVersion)),
            std::string::npos);
}

TEST(KbSchema, FreshAndMigratedFilesHaveTheSameStructure) {
  TempDir dir;
  Raw fresh(dir.file("fresh.sqlite"));
  fresh.exec(sinew::detail::kb::kSchema);
  Raw migrated(dir.file("migrated.sqlite"));
  migrated.exec(kbtest::read_file((kSource / "kb/migrations/001_initial.sql").string()));
  EXPECT_EQ(migrated.value("PRAGMA user_version"), "1");
  for (const auto& m : sinew::detail::kb::migrations()) migrated.exec(m.sql);

  EXPECT_EQ(fresh.value("PRAGMA user_version"), std::to_string(sinew::detail::kb::kSchemaVersion));
  EXPECT_EQ(migrated.value("PRAGMA user_version"), std::to_string(sinew::detail::kb::kSchemaVersion));
  auto a = structure(fresh);
  auto b = structure(migrated);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.count("entries") && a.count("runs") && a.count("events") && a.count("trees"));
}

TEST(KbSchema, VersionOneFileIsMigratedWithItsContents) {
  TempDir dir;
  const std::string path = dir.file("v1.sqlite");
  auto k = kbtest::key();
  {
    // A knowledge base as the first release wrote it, rollback journal and all.
    Raw v1(path);
    v1.exec(kbtest::read_file((kSource / "kb/migrations/001_initial.sql").string()));
    v1.exec("INSERT INTO entries (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
            "provenance, source, precision, quality, executions, created, updated) VALUES ('" + k.tree + "', '" +
            k.devices + "', '" + k.library + "', '{\"n\": 1024}', '{\"n\": 1024}', 'L2', 2, '[0.25, 0.75]', 12.5, "
            "'trained', NULL, 0.05, 3, 7, '2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z')");
    v1.exec("INSERT INTO runs (tree, devices, library, features, feature_key, fission, overlap, shares, time_ms, "
            "purpose, created) VALUES ('" + k.tree + "', '" + k.devices + "', '" + k.library +
            "', '{\"n\": 1024}', '{\"n\": 1024}', 'L2', 2, '[0.25, 0.75]', 13, 'training', '2024-01-01T00:00:00.000Z')");
  }

  // Read only first: migrated in memory, the file itself unchanged.
  const std::string before = kbtest::read_file(path);
  {
    auto reader = sinew::KnowledgeBase::open(path, {.log = {}, .read_only = true});
    auto seen = reader->find(k, {{"n", 1024}});
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(seen->executions, 7);
  }
  EXPECT_EQ(kbtest::read_file(path), before);

  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  EXPECT_EQ(kb->warning(), "");
  EXPECT_EQ(Raw(path).value("PRAGMA application_id"), std::to_string(sinew::detail::kb::kApplicationId));

  auto e = kb->find(k, {{"n", 1024}});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->config, kbtest::config({0.25, 0.75}, "L2", 2));
  EXPECT_EQ(e->time_ms, 12.5);
  EXPECT_EQ(e->executions, 7);
  EXPECT_EQ(e->strategy, "");  // added by migration 2, with its default
  EXPECT_EQ(e->updated, "2024-01-02T00:00:00.000Z");
  auto runs = kb->runs(e->id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].time_ms, 13);
  EXPECT_TRUE(runs[0].partition_ms.empty());

  // What version 2 brought works on the migrated file.
  sinew::KbEvent ev;
  ev.entry = e->id;
  ev.execution = 8;
  ev.before = e->config;
  ev.after = kbtest::config({0.3, 0.7}, "L2", 2);
  ev.time_ms = 14;
  ev.partition_ms = {10, 14};
  EXPECT_GT(kb->record_event(ev), 0);
  EXPECT_EQ(kb->events(e->id).size(), 1u);
  kb.reset();

  Raw check(path);
  EXPECT_EQ(check.value("PRAGMA user_version"), std::to_string(sinew::detail::kb::kSchemaVersion));
  EXPECT_EQ(check.value("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(check.value("PRAGMA quick_check"), "ok");
}

TEST(KbSchema, NewFileIsCreatedAtTheCurrentVersionInWalMode) {
  TempDir dir;
  const std::string path = dir.file("sub/dir/kb.sqlite");  // parents are created
  {
    auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
    ASSERT_TRUE(kb->persistent()) << kb->warning();
    EXPECT_EQ(kb->path(), path);
  }
  Raw check(path);
  EXPECT_EQ(check.value("PRAGMA user_version"), std::to_string(sinew::detail::kb::kSchemaVersion));
  EXPECT_EQ(check.value("PRAGMA journal_mode"), "wal");
}

}  // namespace
