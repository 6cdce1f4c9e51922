// test/unit/kb_process_test.cpp — several processes on one file: concurrent writers (and
// concurrent creation of a new file) lose nothing; kill -9 in the middle of recording leaves every
// committed measurement and a valid file.
#include <sinew/kb.hpp>

#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

namespace {

using kbtest::config;
using kbtest::entry;
using kbtest::key;
using kbtest::run;
using kbtest::TempDir;
using sinew::KnowledgeBase;

// Forks a child that runs `body` and exits with its result (1 on any exception).
pid_t spawn(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 1;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", int(::getpid()), e.what());
    }
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(KbProcesses, ConcurrentWritersLoseNothing) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");  // does not exist yet: they race to create it
  constexpr int kProcesses = 4;
  constexpr int kRuns = 150;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);

  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    children.push_back(spawn([&, p] {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 0) return 3;  // wait for the start (the pipe closing)
      auto kb = KnowledgeBase::open(path, {});
      if (!kb->persistent()) return 2;
      auto k = key();
      for (int i = 0; i < kRuns; ++i) {
        kb->record_run(run(k, {{"process", double(p)}}, config({0.5, 0.5}), i));
        // Every process also updates the same entry and counts executions on it.
        auto id = kb->store_entry(entry(k, {{"shared", 1}}, config({double(i) / kRuns, 1 - double(i) / kRuns}), i));
        kb->add_executions(id);
        kb->store_entry(entry(k, {{"process", double(p)}}, config({0.5, 0.5}), i));
      }
      return 0;
    }));
  }
  ::close(go[0]);
  ::close(go[1]);  // everyone starts now
  for (pid_t c : children) EXPECT_EQ(wait_for(c), 0);

  auto kb = KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  auto k = key();
  for (int p = 0; p < kProcesses; ++p) {
    auto runs = kb->runs(k, {{"process", double(p)}});
    ASSERT_EQ(runs.size(), std::size_t(kRuns)) << "process " << p;
    for (int i = 0; i < kRuns; ++i) EXPECT_EQ(runs[i].time_ms, i);  // in each process's order
  }
  auto shared = kb->find(k, {{"shared", 1}});
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->executions, kProcesses * kRuns);
  EXPECT_EQ(kb->entries(k).size(), std::size_t(kProcesses) + 1);
}

// Processes that open the knowledge base, record a run and close it, again and again, all at once:
// each open identifies the file through a read that takes no lock while another process may be
// checkpointing its WAL into it at close. A half-written page read then is not corruption: no
// process loses its knowledge base to an in-memory one, no file is moved aside, no run is lost.
TEST(KbProcesses, OpeningWhileOthersCheckpointNeverMovesTheFileAside) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  constexpr int kProcesses = 6, kOpens = 25;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(spawn([&, p] {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 0) return 3;
      for (int i = 0; i < kOpens; ++i) {
        auto kb = KnowledgeBase::open(path, {});
        if (!kb->persistent()) return 2;
        kb->record_run(run(key(), {{"process", double(p)}}, config({0.5, 0.5}), i));
      }
      return 0;
    }));
  ::close(go[0]);
  ::close(go[1]);  // everyone starts now
  for (pid_t c : children) EXPECT_EQ(wait_for(c), 0) << "a process got an in-memory knowledge base";
  for (const auto& f : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(f.path().filename().string().find(".corrupt-"), std::string::npos) << f.path();
  auto kb = KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();
  for (int p = 0; p < kProcesses; ++p)
    EXPECT_EQ(kb->runs(key(), {{"process", double(p)}}).size(), std::size_t(kOpens)) << "process " << p;
}

// Processes creating a new knowledge base together while another reads it (what `sinew kb list`
// does while runs start): the reader sees no file, an empty knowledge base or the entries written
// so far, and never fails (it used to fail with "no such table: trees" on a file whose schema was
// not written yet). Each round starts the creators and the reader at once on a new path; the
// reader reads as fast as it can until every creator is done.
TEST(KbProcesses, ReadingWhileOthersCreateTheFileSeesAnEmptyKnowledgeBase) {
  constexpr int kRounds = 12, kCreators = 8;
  int reads_before_schema = 0;  // reads of a file whose schema was not there yet, over all rounds
  for (int round = 0; round < kRounds; ++round) {
    TempDir dir;
    const std::string path = dir.file("kb.sqlite");
    const std::string done = dir.file("done");
    int go[2], seen[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe(seen), 0);
    std::vector<pid_t> creators;
    for (int p = 0; p < kCreators; ++p)
      creators.push_back(spawn([&, p] {
        ::close(go[1]);
        char c;
        if (::read(go[0], &c, 1) != 0) return 3;
        auto kb = KnowledgeBase::open(path, {});
        if (!kb->persistent()) return 2;
        kb->describe_tree(key().tree, "tree", "kernel 'k'");
        kb->store_entry(entry(key(), {{"process", double(p)}}, config({0.5, 0.5}), p));
        return 0;
      }));
    pid_t reader = spawn([&] {
      ::close(go[1]);
      ::close(seen[0]);
      char c;
      if (::read(go[0], &c, 1) != 0) return 3;
      int empty_reads = 0;
      for (;;) {
        const bool last = std::filesystem::exists(done);  // one more read after the creators
        if (std::filesystem::exists(path)) {
          auto kb = KnowledgeBase::open(path, {.log = {}, .read_only = true});
          const auto trees = kb->trees();
          (void)kb->export_json();
          if (trees.empty()) ++empty_reads;
          if (last && (trees.size() != 1 || kb->entries(key()).size() != std::size_t(kCreators))) return 4;
        }
        if (last) break;
      }
      if (::write(seen[1], &empty_reads, sizeof empty_reads) != sizeof empty_reads) return 5;
      return 0;
    });
    ::close(go[0]);
    ::close(seen[1]);
    ::close(go[1]);  // everyone starts now
    for (pid_t c : creators) EXPECT_EQ(wait_for(c), 0) << "round " << round;
    kbtest::write_file(done, "");
    int empty_reads = 0;
    EXPECT_EQ(::read(seen[0], &empty_reads, sizeof empty_reads), ssize_t(sizeof empty_reads)) << "round " << round;
    ::close(seen[0]);
    EXPECT_EQ(wait_for(reader), 0) << "round " << round << ": the reader failed (see its line above)";
    reads_before_schema += empty_reads;
  }
  // Not asserted (it depends on the timing), for whoever reads the log: how often the race was met.
  std::printf("reads of a knowledge base with no trees yet: %d over %d rounds\n", reads_before_schema, kRounds);
}

TEST(KbProcesses, KillNineLosesOnlyTheMeasurementInFlight) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  int acks[2];
  ASSERT_EQ(::pipe(acks), 0);
  pid_t child = spawn([&] {
    ::close(acks[0]);
    auto kb = KnowledgeBase::open(path, {});
    if (!kb->persistent()) return 2;
    auto k = key();
    for (int i = 0;; ++i) {
      kb->record_run(run(k, {{"n", 4096}}, config({0.25, 0.75}), i));
      kb->store_entry(entry(k, {{"n", 4096}}, config({0.25, 0.75}), i));
      // Acknowledged only after both commits returned.
      if (::write(acks[1], &i, sizeof i) != sizeof i) return 3;
    }
  });
  ::close(acks[1]);
  int last = -1;
  while (last < 300) {
    int i;
    ASSERT_EQ(::read(acks[0], &i, sizeof i), ssize_t(sizeof i));
    last = i;
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  EXPECT_EQ(wait_for(child), 128 + SIGKILL);
  // Drain what the child acknowledged before it died.
  for (int i; ::read(acks[0], &i, sizeof i) == ssize_t(sizeof i);) last = i;
  ::close(acks[0]);

  auto kb = KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent()) << kb->warning();  // valid: no corruption, nothing moved aside
  EXPECT_EQ(kb->warning(), "");
  auto runs = kb->runs(key(), {{"n", 4096}});
  ASSERT_GE(runs.size(), std::size_t(last) + 1);
  ASSERT_LE(runs.size(), std::size_t(last) + 2);  // at most the one in flight beyond the last ack
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].time_ms, double(i));
  auto e = kb->find(key(), {{"n", 4096}});
  ASSERT_TRUE(e.has_value());
  EXPECT_GE(e->time_ms, last);
  for (const auto& name : dir.list()) EXPECT_EQ(name.find("corrupt"), std::string::npos) << name;

  // And it takes new measurements.
  kb->record_run(run(key(), {{"n", 4096}}, config({0.25, 0.75}), 1e6));
  EXPECT_EQ(kb->runs(key(), {{"n", 4096}}).back().time_ms, 1e6);
}

}  // namespace
