// test/unit/kb_migrate_test.cpp — migrations 003 and 004 and what they share with import_json:
// old strategy spellings become today's, counter-named vector features ("v17.size") become
// positional ones ("v0.size") from the tree's stored dump; version-2 files built by hand are
// opened and checked row by row, as are older exports.
#include <sinew/kb.hpp>
#include <sinew/sinew.hpp>

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

// Features as an entry carries them, sorted by name (entries and runs give them in stored order).
KbFeatures sorted(KbFeatures f) {
  std::sort(f.begin(), f.end());
  return f;
}

// The dump of a real tree whose two vectors are named `first` and `second` (as a process's
// counter named unnamed vectors), in that order of first appearance, with a scalar feature.
std::string two_vector_dump(const std::string& first, const std::string& second) {
  const char* src =
      "__kernel void scale(__global const float* a, __global float* b, float f) {}\n"
      "__kernel void add(__global float* b, uint n) {}\n";
  auto a = sinew::vector<cl_float>().name(first);
  auto b = sinew::vector<cl_float>().name(second);
  auto scale = sinew::kernel_source(src, "scale", "k.cl")
                   .args(sinew::in(a), sinew::out(b), sinew::scalar(2.0f).as_feature("alpha"));
  auto add = sinew::kernel_source(src, "add", "k.cl").args(sinew::inout(b), sinew::size(a));
  return sinew::pipeline(scale, add).dump();
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

// Every row of the knowledge base's tables, for before/after comparisons.
std::vector<std::string> everything(const std::string& path) {
  Raw db(path);
  std::vector<std::string> out;
  for (const char* table : {"entries", "runs", "events", "trees"})
    for (auto& row : db.rows(std::string("SELECT * FROM ") + table + " ORDER BY rowid"))
      out.push_back(std::string(table) + ": " + row);
  return out;
}

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

TEST(KbMigrate, DumpGivesVectorsInTheSignaturesOrder) {
  const char* src =
      "__kernel void k1(__global const float* b, __global const float* x, float alpha, uint n) {}\n"
      "__kernel void k2(__global const float* a, __global float* p, uint off, uint cnt, uint it,\n"
      "                 __local float* tmp, __global float* c) {}\n"
      "__kernel void k3(__global float* d) {}\n";
  // Made in another order than they appear in the tree, so counter names and positions differ.
  auto a = sinew::vector<cl_float>(1000);
  auto b = sinew::vector<cl_float>();
  auto c = sinew::vector<cl_float>();
  auto d = sinew::vector<cl_float>();
  auto partial = sinew::vector<cl_float>();
  auto x = sinew::vector<cl_float>().name("x");
  auto r = sinew::result<cl_float>();
  auto k1 = sinew::kernel_source(src, "k1", "k.cl")
                .args(sinew::in(b), sinew::whole(x), sinew::scalar(2.0f).as_feature("alpha"), sinew::size(a));
  auto k2 = sinew::kernel_source(src, "k2", "k.cl")
                .args(sinew::in(a), sinew::out(partial), sinew::offset(b), sinew::count(a), sinew::iteration(),
                      sinew::local<cl_float>(16), sinew::out(c));
  auto k3 = sinew::kernel_source(src, "k3", "k.cl").args(sinew::inout(d));
  auto tree = sinew::pipeline(k1, sinew::map_reduce(k2, sinew::reduce::sum(partial, r)), sinew::loop(k3).times(2));
  const std::string dump = tree.dump();

  // Node::signature(): k1's arguments (b, x, a), the map_reduce's reducer input (partial), then its
  // body's (a, partial, b, a, c: only c is new), then the loop's body (d).
  auto order = kb::dump_vectors(dump);
  ASSERT_TRUE(order.has_value()) << dump;
  EXPECT_EQ(*order, (std::vector<std::string>{b.name(), "x", a.name(), partial.name(), c.name(), d.name()})) << dump;

  auto names = kb::positional_names(dump);
  ASSERT_TRUE(names.has_value());
  const std::map<std::string, std::string> expected = {
      {b.name(), "v0"}, {a.name(), "v2"}, {partial.name(), "v3"}, {c.name(), "v4"}, {d.name(), "v5"}};
  EXPECT_EQ(*names, expected);  // the named x counts (position 1) but keeps its name
}

TEST(KbMigrate, UnreadableDumpsGiveNothing) {
  const std::string good = two_vector_dump("v17", "v9");
  ASSERT_TRUE(kb::dump_vectors(good).has_value()) << good;
  EXPECT_EQ(*kb::dump_vectors(good), (std::vector<std::string>{"v17", "v9"}));

  const std::vector<std::string> bad_dumps = {
      "",
      "(empty)\n",
      "a tree\n",
      "  " + good,                                         // an indented root
      good + good,                                         // two roots
      good + "\n",                                         // a blank line
      "pipeline\n    0: in ?\n",                           // an argument without its vector
      "pipeline\n    1: in 'v1'  v1 [float, unit 1]\n",    // argument 0 missing
      "pipeline\n    0: in 'v1'  v2 [float, unit 1]\n",    // the description names another vector
      "pipeline\n      kernel 'k' (k.cl) entry=k\n",       // a child too far in
      "map_reduce reduce=sum(?) -> r1\n",                  // a reducer without its input
  };
  for (const auto& bad : bad_dumps) {
    EXPECT_FALSE(kb::dump_vectors(bad).has_value()) << bad;
    EXPECT_FALSE(kb::positional_names(bad).has_value()) << bad;
  }
}

TEST(KbMigrate, FeaturesAreRenamedAllAtOnce) {
  // v1 first, v0 second: the old v1 becomes v0 while the old v0 becomes v1.
  auto names = kb::positional_names(two_vector_dump("v1", "v0"));
  ASSERT_TRUE(names.has_value());
  auto renamed = kb::positional_features({{"v0.size", 5}, {"alpha", 2}, {"v1.size", 7}, {"host.pinned", 1}}, *names);
  ASSERT_TRUE(renamed.has_value());
  EXPECT_EQ(*renamed, (KbFeatures{{"v1.size", 5}, {"alpha", 2}, {"v0.size", 7}, {"host.pinned", 1}}));

  // A named vector's feature is kept; a counter name the dump lacks leaves the row as it is, and so
  // does a rename onto a feature the row already has.
  names = kb::positional_names(two_vector_dump("v17", "x"));
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(kb::positional_features({{"v17.size", 5}, {"x.size", 6}}, *names),
            (KbFeatures{{"v0.size", 5}, {"x.size", 6}}));
  EXPECT_FALSE(kb::positional_features({{"v17.size", 5}, {"v3.size", 6}}, *names).has_value());
  EXPECT_FALSE(kb::positional_features({{"v17.size", 5}, {"v0.size", 6}}, *names).has_value());
  EXPECT_EQ(kb::positional_features({}, *names), KbFeatures{});
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

TEST(KbMigrate, VersionTwoFileGetsPositionalFeaturesAndTodaysStrategies) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  const auto k = kbtest::key("aaaa000011112222");
  const auto undescribed = kbtest::key("bbbb000011112222");
  struct Old {
    double n;
    std::string strategy, expected;
  };
  const std::vector<Old> olds = {
      {1000, "even", "even_split"},
      {2000, "cpu-assisted", "cpu_assisted"},
      {3000, "50/50", "even_split"},
      {4000, "assisted", "cpu_assisted"},
      {5000, "nearest-neighbour+screen", "nearest+screen"},
      {6000, "inverse-distance", "inverse_distance"},
      {7000, "balancer", "balancer"},
      {8000, "", ""},
  };
  auto old_features = [](double n) { return KbFeatures{{"v17.size", n}, {"v9.size", n / 2}, {"alpha", 2}}; };
  auto new_features = [](double n) { return KbFeatures{{"v0.size", n}, {"v1.size", n / 2}, {"alpha", 2}}; };
  std::int64_t first = 0;
  {
    VersionTwoFile v2(path);
    v2.describe(k.tree, two_vector_dump("v17", "v9"));
    for (const auto& o : olds) {
      auto id = v2.entry(k, old_features(o.n), o.strategy, "2024-01-02T00:00:00.000Z",
                         first ? "derived" : "trained", first, 3);
      if (!first) first = id;
      v2.run(k, old_features(o.n), o.n / 100);
    }
    v2.run(k, old_features(1000), 11, "execution");
    v2.event(first);
    // An undescribed tree: strategies are rewritten (migration 003 needs no tree), features not.
    v2.entry(undescribed, {{"v3.size", 10}}, "even");
    v2.run(undescribed, {{"v3.size", 10}}, 1);
  }

  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();

  auto entries = kb->entries(k);
  ASSERT_EQ(entries.size(), olds.size());
  for (std::size_t i = 0; i < olds.size(); ++i) {
    const auto& e = entries[i];
    EXPECT_EQ(sorted(e.features), sorted(new_features(olds[i].n)));
    EXPECT_EQ(e.strategy, olds[i].expected);
    EXPECT_EQ(e.executions, 3);
    EXPECT_EQ(e.updated, "2024-01-02T00:00:00.000Z");
    if (i) EXPECT_EQ(e.source, first);
    auto hit = kb->find(k, new_features(olds[i].n));
    ASSERT_TRUE(hit.has_value()) << olds[i].n;
    EXPECT_EQ(hit->id, e.id);
    EXPECT_FALSE(kb->find(k, old_features(olds[i].n)).has_value());
    EXPECT_EQ(kb->runs(e.id).size(), i == 0 ? 2u : 1u);  // runs found by the same new features
  }
  EXPECT_EQ(kb->runs(k, new_features(1000)).size(), 2u);
  EXPECT_EQ(kb->events(first).size(), 1u);
  for (const auto& r : kb->runs_for_tree(k.tree)) {
    EXPECT_EQ(r.features.size(), 3u);
    EXPECT_NE(std::find_if(r.features.begin(), r.features.end(), [](auto& f) { return f.first == "v0.size"; }),
              r.features.end());
  }

  auto other = kb->entries(undescribed);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].features, (KbFeatures{{"v3.size", 10}}));
  EXPECT_EQ(other[0].strategy, "even_split");
  ASSERT_EQ(kb->runs_for_tree(undescribed.tree).size(), 1u);
  EXPECT_EQ(kb->runs_for_tree(undescribed.tree)[0].features, (KbFeatures{{"v3.size", 10}}));
  kb.reset();

  // Nothing lost; every feature_key is the one this library computes from the features.
  {
    Raw check(path);
    EXPECT_EQ(check.value("PRAGMA user_version"), std::to_string(kb::kSchemaVersion));
    EXPECT_EQ(check.value("SELECT count(*) FROM entries"), std::to_string(olds.size() + 1));
    EXPECT_EQ(check.value("SELECT count(*) FROM runs"), std::to_string(olds.size() + 2));
    EXPECT_EQ(check.value("SELECT count(*) FROM events"), "1");
    EXPECT_EQ(check.value("SELECT count(*) FROM runs WHERE features LIKE '%v17%' OR features LIKE '%v9.%'"), "0");
    for (const char* table : {"entries", "runs"})
      for (const auto& row : check.rows(std::string("SELECT features, feature_key FROM ") + table)) {
        auto bar = row.find('|');
        auto features = kb::parse_features(row.substr(0, bar));
        ASSERT_TRUE(features.has_value()) << row;
        EXPECT_EQ(row.substr(bar + 1), kb::feature_key(*features)) << table << ": " << row;
      }
  }

  // A second open changes nothing.
  const auto before = everything(path);
  {
    auto again = sinew::KnowledgeBase::open(path, {.log = {}});
    ASSERT_TRUE(again->persistent()) << again->warning();
    ASSERT_TRUE(again->find(k, new_features(1000)).has_value());

    // An export carries the new names, and an import of it keeps them.
    const std::string exported = again->export_json();
    EXPECT_EQ(exported.find("v17.size"), std::string::npos);  // (the tree's description still shows v17)
    auto copy = sinew::KnowledgeBase::memory();
    auto counts = copy->import_json(exported);
    EXPECT_EQ(counts.entries, std::int64_t(olds.size() + 1));
    EXPECT_EQ(counts.runs, std::int64_t(olds.size() + 2));
    EXPECT_EQ(counts.events, 1);
    for (const auto& o : olds) {
      auto hit = copy->find(k, new_features(o.n));
      ASSERT_TRUE(hit.has_value()) << o.n;
      EXPECT_EQ(hit->strategy, o.expected);
      EXPECT_EQ(copy->runs(hit->id).size(), o.n == 1000 ? 2u : 1u);
    }
    EXPECT_TRUE(copy->find(undescribed, {{"v3.size", 10}}).has_value());
  }
  EXPECT_EQ(everything(path), before);
}

TEST(KbMigrate, RowsOfUndescribedOrUnreadableTreesAreLeftAsTheyAre) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  const auto bare = kbtest::key("cccc000011112222");
  const auto unreadable = kbtest::key("dddd000011112222");
  const auto other_process = kbtest::key("eeee000011112222");
  {
    VersionTwoFile v2(path);
    v2.describe(unreadable.tree, "written by a version whose dumps looked otherwise\n");
    // Described by a process whose vectors were v17 and v9; this row's process had v4 and v5.
    v2.describe(other_process.tree, two_vector_dump("v17", "v9"));
    for (const auto& k : {bare, unreadable, other_process}) {
      auto id = v2.entry(k, {{"v4.size", 100}, {"v5.size", 50}}, "even_split");
      v2.entry(k, {{"v5.size", 100}, {"v4.size", 50}, {"alpha", 1}}, "cpu_assisted", "2024-01-03T00:00:00.000Z",
               "balanced", id);
      v2.run(k, {{"v4.size", 100}, {"v5.size", 50}}, 3);
    }
  }
  auto rows = [&] {
    Raw db(path);
    return std::pair{db.rows("SELECT * FROM entries ORDER BY id"), db.rows("SELECT * FROM runs ORDER BY id")};
  };
  const auto before = rows();
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  for (const auto& k : {bare, unreadable, other_process})
    EXPECT_TRUE(kb->find(k, {{"v4.size", 100}, {"v5.size", 50}}).has_value());
  kb.reset();
  // Every row as it was, with the plan column of schema 6 added (a plan of the split alone) and
  // a run's device times of schema 7 (none kept).
  auto expected = before;
  for (auto& r : expected.first) r += "|{}";
  for (auto& r : expected.second) r += "|{}|[]";
  EXPECT_EQ(rows(), expected);
}

TEST(KbMigrate, SwappedNamesKeepEveryEntry) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  const auto k = kbtest::key();
  {
    VersionTwoFile v2(path);
    v2.describe(k.tree, two_vector_dump("v1", "v0"));
    // Each entry's new feature key is the other's old one: renamed one at a time, the unique key
    // (tree, devices, library, feature_key) would refuse the first rename.
    v2.entry(k, {{"v1.size", 10}, {"v0.size", 20}}, "even_split");
    v2.entry(k, {{"v1.size", 20}, {"v0.size", 10}}, "cpu_assisted");
  }
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  auto a = kb->find(k, {{"v0.size", 10}, {"v1.size", 20}});
  auto b = kb->find(k, {{"v0.size", 20}, {"v1.size", 10}});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->strategy, "even_split");
  EXPECT_EQ(b->strategy, "cpu_assisted");
  EXPECT_EQ(kb->entries(k).size(), 2u);
}

TEST(KbMigrate, CollidingEntriesKeepTheMoreRecentlyUpdatedOne) {
  TempDir dir;
  const std::string path = dir.file("v2.sqlite");
  const auto k = kbtest::key();
  const KbFeatures positional_small{{"v0.size", 1000}, {"v1.size", 500}};
  const KbFeatures positional_large{{"v0.size", 2000}, {"v1.size", 1000}};
  std::int64_t renamed_older = 0, kept_newer = 0, renamed_newer = 0, removed_older = 0, derived = 0;
  {
    VersionTwoFile v2(path);
    v2.describe(k.tree, two_vector_dump("v17", "v9"));
    // Already under the positional names (as if written so) and newer: it stays; the renamed one goes.
    renamed_older = v2.entry(k, {{"v17.size", 1000}, {"v9.size", 500}}, "even", "2024-01-02T00:00:00.000Z");
    kept_newer = v2.entry(k, positional_small, "balancer", "2024-01-05T00:00:00.000Z", "balanced");
    v2.event(renamed_older);
    v2.event(kept_newer);
    derived = v2.entry(k, {{"v17.size", 1500}, {"v9.size", 750}}, "nearest-neighbour", "2024-01-06T00:00:00.000Z",
                       "derived", renamed_older);
    v2.run(k, {{"v17.size", 1000}, {"v9.size", 500}}, 7);
    // The other way round: the renamed one is newer and stays.
    renamed_newer = v2.entry(k, {{"v17.size", 2000}, {"v9.size", 1000}}, "cpu-assisted", "2024-01-07T00:00:00.000Z");
    removed_older = v2.entry(k, positional_large, "even_split", "2024-01-01T00:00:00.000Z");
  }
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  EXPECT_EQ(kb->entries(k).size(), 3u);

  auto small = kb->find(k, positional_small);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->id, kept_newer);
  EXPECT_EQ(small->strategy, "balancer");
  EXPECT_FALSE(kb->entry(renamed_older).has_value());
  EXPECT_EQ(kb->events(kept_newer).size(), 1u);
  EXPECT_EQ(kb->events(renamed_older).size(), 0u);  // removed with its entry
  EXPECT_EQ(kb->runs(kept_newer).size(), 1u);        // the removed entry's run, renamed, stays
  auto d = kb->entry(derived);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source, kept_newer);  // its source was removed: it names the entry that stayed
  EXPECT_EQ(sorted(d->features), sorted({{"v0.size", 1500}, {"v1.size", 750}}));

  auto large = kb->find(k, positional_large);
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(large->id, renamed_newer);
  EXPECT_EQ(large->strategy, "cpu_assisted");
  EXPECT_FALSE(kb->entry(removed_older).has_value());
}

// --- Older exports ---------------------------------------------------------------------------------

TEST(KbMigrate, OlderExportsAreImportedWithTodaysNames) {
  const auto k = kbtest::key();
  const std::string dump = two_vector_dump("v17", "v9");
  auto doc = [&](int schema) {
    auto json_string = [](const std::string& s) {
      std::string out = "\"";
      for (char c : s) out += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
      return out + "\"";
    };
    const std::string key = "\"tree\": " + json_string(k.tree) + ", \"devices\": " + json_string(k.devices) +
                            ", \"library\": " + json_string(k.library);
    const std::string config = "\"config\": {\"fission\": \"none\", \"overlap\": 1, \"shares\": [0.25, 0.75]}";
    return "{\"format\": \"sinew-knowledge-base\", \"format_version\": 1, \"schema\": " + std::to_string(schema) +
           ", \"trees\": [{\"tree\": " + json_string(k.tree) + ", \"label\": \"t\", \"description\": " +
           json_string(dump) + ", \"created\": \"2024-01-01T00:00:00.000Z\"}]" +
           ", \"entries\": [{\"id\": 4, " + key + ", \"features\": {\"v17.size\": 1000, \"v9.size\": 500}, " + config +
           ", \"time_ms\": 12.5, \"provenance\": \"derived\", \"source\": null, \"precision\": 0.05, \"quality\": 3, "
           "\"executions\": 2, \"strategy\": \"inverse-distance+screen\", \"created\": \"2024-01-01T00:00:00.000Z\", "
           "\"updated\": \"2024-01-02T00:00:00.000Z\"}]" +
           ", \"runs\": [{" + key + ", \"features\": {\"v9.size\": 500, \"v17.size\": 1000}, " + config +
           ", \"time_ms\": 13, \"partition_ms\": [], \"purpose\": \"training\", \"created\": "
           "\"2024-01-01T00:00:00.000Z\"}], \"events\": []}";
  };

  auto kb = sinew::KnowledgeBase::memory();
  auto counts = kb->import_json(doc(2));
  EXPECT_EQ(counts.entries, 1);
  EXPECT_EQ(counts.runs, 1);
  auto e = kb->find(k, {{"v0.size", 1000}, {"v1.size", 500}});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->strategy, "inverse_distance+screen");
  ASSERT_EQ(kb->runs(e->id).size(), 1u);
  EXPECT_EQ(kb->runs(e->id)[0].features, (KbFeatures{{"v1.size", 500}, {"v0.size", 1000}}));

  // An export of today's schema is taken at its word: its names are already positional.
  auto today = sinew::KnowledgeBase::memory();
  today->import_json(doc(kb::kSchemaVersion));
  EXPECT_TRUE(today->find(k, {{"v17.size", 1000}, {"v9.size", 500}}).has_value());
  EXPECT_EQ(today->find(k, {{"v17.size", 1000}, {"v9.size", 500}})->strategy, "inverse_distance+screen");
}

}  // namespace
