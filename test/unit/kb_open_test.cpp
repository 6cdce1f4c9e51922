// test/unit/kb_open_test.cpp — opening unusable files: corrupt (moved aside, bytes kept), locked
// (left alone), unopenable, not ours, newer; each gives an in-memory knowledge base and one
// warning. Also the default path's environment variables.
#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

namespace {

using kbtest::config;
using kbtest::entry;
using kbtest::key;
using kbtest::read_file;
using kbtest::run;
using kbtest::TempDir;
using kbtest::write_file;
using sinew::KnowledgeBase;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = char(rng());
  return out;
}

// The entries of `dir` whose name starts with `prefix`.
std::vector<std::string> starting_with(const TempDir& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& name : dir.list())
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  return out;
}

// A falling-back knowledge base still works, in memory.
void expect_usable_in_memory(KnowledgeBase& kb) {
  EXPECT_FALSE(kb.persistent());
  EXPECT_EQ(kb.path(), ":memory:");
  auto id = kb.store_entry(entry(key(), {{"n", 1}}, config({1, 0}), 1));
  EXPECT_TRUE(kb.entry(id).has_value());
}

TEST(KbOpen, RandomBytesAreMovedAsideAndKept) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  const std::string garbage = random_bytes(8192, 1);
  write_file(path, garbage);

  testing::internal::CaptureStderr();
  auto kb = KnowledgeBase::open(path);
  std::string err = testing::internal::GetCapturedStderr();

  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "corrupt")) << kb->warning();
  EXPECT_TRUE(contains(kb->warning(), path)) << kb->warning();
  EXPECT_TRUE(contains(kb->warning(), "in-memory")) << kb->warning();
  // One warning on stderr, the same text.
  EXPECT_EQ(err, "sinew: warning: " + kb->warning() + "\n");

  auto moved = starting_with(dir, "kb.sqlite.corrupt-");
  ASSERT_EQ(moved.size(), 1u) << testing::PrintToString(dir.list());
  EXPECT_TRUE(contains(kb->warning(), moved[0]));
  EXPECT_EQ(read_file(dir.file(moved[0])), garbage);  // the original bytes, untouched
  EXPECT_FALSE(std::filesystem::exists(path));

  // The next process starts afresh at the same path; a second corrupt file does not overwrite
  // the first one moved aside.
  kb.reset();
  auto fresh = KnowledgeBase::open(path, {.log = {}});
  EXPECT_TRUE(fresh->persistent()) << fresh->warning();
  fresh.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  write_file(path, random_bytes(4096, 2));
  auto again = KnowledgeBase::open(path, {.log = {}});
  EXPECT_FALSE(again->persistent());
  EXPECT_EQ(starting_with(dir, "kb.sqlite.corrupt-").size(), 2u) << testing::PrintToString(dir.list());
  EXPECT_EQ(read_file(dir.file(moved[0])), garbage);
}

TEST(KbOpen, DamagedDatabasePagesAreDetected) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  {
    auto kb = KnowledgeBase::open(path, {.log = {}});
    ASSERT_TRUE(kb->persistent());
    for (int i = 0; i < 2000; ++i) kb->record_run(run(key(), {{"n", double(i)}}, config({0.5, 0.5}), i));
  }
  // Checkpointed into the main file (the last connection closed); now scribble over its middle.
  std::string bytes = read_file(path);
  ASSERT_GT(bytes.size(), 64u * 1024);
  for (std::size_t i = 16 * 1024; i < bytes.size() - 8 * 1024; i += 4096) bytes.replace(i + 100, 2000, std::string(2000, '\x5a'));
  write_file(path, bytes);

  auto kb = KnowledgeBase::open(path, {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "corrupt")) << kb->warning();
  auto moved = starting_with(dir, "kb.sqlite.corrupt-");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(read_file(dir.file(moved[0])), bytes);
}

TEST(KbOpen, LockedFileIsLeftAloneAfterTheBusyTimeout) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  {
    auto kb = KnowledgeBase::open(path, {.log = {}});
    ASSERT_TRUE(kb->persistent());
    kb->store_entry(entry(key(), {{"n", 1}}, config({1, 0}), 1));
  }
  // Another process holds an exclusive lock (here: a second connection that never lets go).
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; "
                                 "UPDATE entries SET time_ms = 2;", nullptr, nullptr, nullptr), SQLITE_OK);
  const auto listing = dir.list();
  const auto main_bytes = read_file(path);

  auto start = std::chrono::steady_clock::now();
  auto kb = KnowledgeBase::open(path, {.busy_timeout = std::chrono::milliseconds(300), .log = {}});
  auto waited = std::chrono::steady_clock::now() - start;
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "locked")) << kb->warning();
  EXPECT_TRUE(contains(kb->warning(), path)) << kb->warning();
  EXPECT_TRUE(contains(kb->warning(), "left untouched")) << kb->warning();
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(dir.list(), listing);  // nothing moved aside or created
  EXPECT_EQ(read_file(path), main_bytes);

  ASSERT_EQ(sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(holder);
  auto later = KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(later->persistent()) << later->warning();
  EXPECT_EQ(later->find(key(), {{"n", 1}})->time_ms, 1);  // the holder's change was rolled back
}

TEST(KbOpen, UnopenablePathsFallBackToMemory) {
  TempDir dir;
  write_file(dir.file("plain-file"), "x");
  // A parent that is a file.
  auto kb = KnowledgeBase::open(dir.file("plain-file/kb.sqlite"), {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "cannot be used")) << kb->warning();
  // A directory where the file should be.
  std::filesystem::create_directory(dir.file("a-directory"));
  kb = KnowledgeBase::open(dir.file("a-directory"), {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "cannot be used")) << kb->warning();
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("a-directory")));
  EXPECT_EQ(read_file(dir.file("plain-file")), "x");
}

TEST(KbOpen, ReadOnlyFileIsLeftAlone) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes read-only files";
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  KnowledgeBase::open(path, {.log = {}}).reset();
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  auto bytes = read_file(path);
  auto kb = KnowledgeBase::open(path, {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "read-only")) << kb->warning();
  EXPECT_EQ(read_file(path), bytes);
}

TEST(KbOpen, OtherDatabasesAndNewerVersionsAreLeftAlone) {
  TempDir dir;
  auto make = [&](const std::string& name, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open(dir.file(name).c_str(), &db);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    return read_file(dir.file(name));
  };
  auto other = make("other.sqlite", "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');");
  auto kb = KnowledgeBase::open(dir.file("other.sqlite"), {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "something else")) << kb->warning();
  EXPECT_EQ(read_file(dir.file("other.sqlite")), other);

  auto newer = make("newer.sqlite",
                    "CREATE TABLE entries (id INTEGER); PRAGMA application_id = 1397313111; PRAGMA user_version = 99;");
  kb = KnowledgeBase::open(dir.file("newer.sqlite"), {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "newer Sinew")) << kb->warning();
  EXPECT_EQ(read_file(dir.file("newer.sqlite")), newer);
  EXPECT_TRUE(starting_with(dir, "other.sqlite.corrupt").empty());
  EXPECT_TRUE(starting_with(dir, "newer.sqlite.corrupt").empty());
}

// A file is a knowledge base when its application_id says so, or — written before Sinew set one —
// when it has Sinew's tables; decided read-only, so another program's database stays byte for byte
// as it was (no WAL switch: a foreign file of user_version 1 used to be converted).
TEST(KbOpen, ForeignDatabasesAreRecognisedBeforeAnythingIsWritten) {
  TempDir dir;
  auto make = [&](const std::string& name, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open(dir.file(name).c_str(), &db);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
    return read_file(dir.file(name));
  };
  const std::vector<std::pair<std::string, std::string>> foreign = {
      {"v1.sqlite", "CREATE TABLE songs (title TEXT); PRAGMA user_version = 1;"},
      {"v2.sqlite", "CREATE TABLE entries (id INTEGER, tree TEXT); CREATE TABLE runs (id INTEGER); PRAGMA user_version = 2;"},
      {"app.sqlite", "CREATE TABLE t (x); PRAGMA application_id = 42; PRAGMA user_version = 3;"},
  };
  for (const auto& [name, sql] : foreign) {
    const std::string before = make(name, sql);
    auto kb = KnowledgeBase::open(dir.file(name), {.log = {}});
    expect_usable_in_memory(*kb);
    EXPECT_FALSE(kb->warning().empty()) << name;
    kb.reset();
    EXPECT_EQ(read_file(dir.file(name)), before) << name << " was changed";
    std::error_code ec;
    EXPECT_FALSE(std::filesystem::exists(dir.file(name) + "-wal", ec)) << name;
  }

  // A Sinew knowledge base whose tables were dropped is not taken for one either.
  {
    auto kb = KnowledgeBase::open(dir.file("dropped.sqlite"), {.log = {}});
    ASSERT_TRUE(kb->persistent());
  }
  {
    sqlite3* db = nullptr;
    sqlite3_open(dir.file("dropped.sqlite").c_str(), &db);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE runs", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string dropped = read_file(dir.file("dropped.sqlite"));
  auto kb = KnowledgeBase::open(dir.file("dropped.sqlite"), {.log = {}});
  expect_usable_in_memory(*kb);
  EXPECT_TRUE(contains(kb->warning(), "tables are missing")) << kb->warning();
  kb.reset();
  EXPECT_EQ(read_file(dir.file("dropped.sqlite")), dropped);
}

// Commands that only read (`sinew kb list/show/export`) open with KbOptions::read_only: a file
// that cannot be read is reported, not moved aside or replaced; an older schema is migrated in
// memory; nothing is created beside the file, and writes fail.
TEST(KbOpen, ReadingOnlyChangesNoFile) {
  TempDir dir;
  auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  // Corrupt: an error, and the file stays where it is, as it is.
  write_file(dir.file("bad.sqlite"), std::string(4096, 'x'));
  try {
    KnowledgeBase::open(dir.file("bad.sqlite"), {.log = {}, .read_only = true});
    FAIL() << "a corrupt file was opened";
  } catch (const sinew::Error& e) {
    EXPECT_EQ(e.code(), make_error_code(sinew::errc::knowledge_base));
    EXPECT_TRUE(contains(e.what(), "left as it is")) << e.what();
  }
  EXPECT_EQ(files(), (std::vector<std::string>{"bad.sqlite"}));
  EXPECT_EQ(read_file(dir.file("bad.sqlite")), std::string(4096, 'x'));
  // Missing: an error, nothing created.
  EXPECT_THROW(KnowledgeBase::open(dir.file("none.sqlite"), {.log = {}, .read_only = true}), sinew::Error);
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.sqlite")));

  // A current file in WAL mode: read where it is, no -wal or -shm left beside it.
  {
    auto kb = KnowledgeBase::open(dir.file("kb.sqlite"), {.log = {}});
    kb->store_entry(kbtest::entry(kbtest::key(), {{"n", 1}}, kbtest::config({0.5, 0.5}), 2));
  }
  const std::string stored = read_file(dir.file("kb.sqlite"));
  {
    auto kb = KnowledgeBase::open(dir.file("kb.sqlite"), {.log = {}, .read_only = true});
    EXPECT_EQ(kb->entries(kbtest::key()).size(), 1u);
    EXPECT_THROW(kb->store_entry(kbtest::entry(kbtest::key(), {{"n", 2}}, kbtest::config({0.5, 0.5}), 2)),
                 sinew::Error);
  }
  EXPECT_EQ(read_file(dir.file("kb.sqlite")), stored);
  EXPECT_EQ(files(), (std::vector<std::string>{"bad.sqlite", "kb.sqlite"}));
}

TEST(KbOpen, EmptyFileIsANewKnowledgeBase) {
  TempDir dir;
  write_file(dir.file("kb.sqlite"), "");
  auto kb = KnowledgeBase::open(dir.file("kb.sqlite"), {.log = {}});
  EXPECT_TRUE(kb->persistent()) << kb->warning();
}

// A 0-byte file (a knowledge base another process has just created, or `touch kb.sqlite`) read
// for reading only is an empty knowledge base: every read answers nothing, and the file stays
// 0 bytes with nothing beside it (it used to fail with "no such table: trees").
TEST(KbOpen, EmptyFileReadsAsAnEmptyKnowledgeBase) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  write_file(path, "");
  auto kb = KnowledgeBase::open(path, {.log = {}, .read_only = true});
  EXPECT_TRUE(kb->trees().empty());
  EXPECT_TRUE(kb->match_trees("").empty());
  EXPECT_TRUE(kb->entries(key()).empty());
  EXPECT_TRUE(kb->entries_for_tree(key().tree).empty());
  EXPECT_TRUE(kb->runs_for_tree(key().tree).empty());
  EXPECT_FALSE(kb->find(key(), {{"n", 1}}));
  const std::string json = kb->export_json();
  EXPECT_TRUE(contains(json, "\"entries\": []") || contains(json, "\"entries\":[]")) << json;
  EXPECT_THROW(kb->store_entry(entry(key(), {{"n", 1}}, config({1, 0}), 1)), sinew::Error);  // still read-only
  kb.reset();
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"kb.sqlite"}));
}

// Sets environment variables for one scope.
class Env {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~Env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The file a Runtime uses (RuntimeOptions::kb_path, read with the other options).
TEST(KbOpen, DefaultPathFollowsTheEnvironment) {
  auto default_path = [] { return *sinew::RuntimeOptions{}.effective().kb_path; };
  Env env;
  env.set("SINEW_KB", "/some/where/kb.db");
  env.set("XDG_DATA_HOME", "/xdg");
  env.set("HOME", "/home/u");
  EXPECT_EQ(default_path(), "/some/where/kb.db");
  env.set("SINEW_KB", "");
  EXPECT_EQ(default_path(), "/xdg/sinew/kb.sqlite");
  env.set("XDG_DATA_HOME", nullptr);
  EXPECT_EQ(default_path(), "/home/u/.local/share/sinew/kb.sqlite");
  env.set("XDG_DATA_HOME", "relative/ignored");  // XDG: relative paths are invalid
  EXPECT_EQ(default_path(), "/home/u/.local/share/sinew/kb.sqlite");

  TempDir dir;
  env.set("SINEW_KB", dir.file("deep/er/kb.sqlite").c_str());
  auto kb = KnowledgeBase::open(default_path(), {.log = {}});
  EXPECT_TRUE(kb->persistent()) << kb->warning();
  EXPECT_TRUE(std::filesystem::exists(dir.file("deep/er/kb.sqlite")));

  env.set("SINEW_KB", ":memory:");
  EXPECT_FALSE(KnowledgeBase::open(default_path())->persistent());
  EXPECT_EQ(KnowledgeBase::open(default_path())->warning(), "");
}

}  // namespace
