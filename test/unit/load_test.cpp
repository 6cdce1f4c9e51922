// test/unit/load_test.cpp — the CPU load generator (tools/load.hpp) and `sinew load`: the solver
// solves, the threads start, count and stop, and the command line runs for its time, stops on
// SIGINT and names a bad flag (no OpenCL device needed).
#include "load.hpp"

#include "kb/kb_test_util.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using kbtest::read_file;
using kbtest::TempDir;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(SolveDense, SolvesAKnownSystem) {
  // x = (1, -2, 3, 0.5); a random-looking, non-symmetric matrix whose first pivot is not on the
  // diagonal (so row exchanges happen).
  const std::size_t n = 4;
  const std::vector<double> a0 = {0.1, 2, -1, 4,  //
                                  3, -1, 0.5, 2,  //
                                  -2, 1, 4, 1,    //
                                  1, 1, 1, -3};
  const std::vector<double> x = {1, -2, 3, 0.5};
  std::vector<double> b(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) b[i] += a0[i * n + j] * x[j];
  std::vector<double> a = a0;
  ASSERT_TRUE(sinew_tools::solve_dense(a, b, n));
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(b[i], x[i], 1e-12) << i;
}

TEST(SolveDense, ReportsASingularMatrix) {
  std::vector<double> a = {1, 2, 2, 4}, b = {1, 2};
  EXPECT_FALSE(sinew_tools::solve_dense(a, b, 2));
}

TEST(LoadGenerator, StartsCountsAndStops) {
  sinew_tools::LoadGenerator load;
  EXPECT_FALSE(load.running());
  EXPECT_EQ(load.stop(), 0u);  // stopping what does not run is harmless
  EXPECT_EQ(load.start(2), 2u);
  EXPECT_TRUE(load.running());
  EXPECT_EQ(load.threads(), 2u);
  EXPECT_THROW(load.start(1), std::logic_error);
  // Wait for work rather than for a fixed time: the machine may be busy.
  const auto t0 = Clock::now();
  while (load.solved() < 10 && seconds_since(t0) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(load.solved(), 10u);
  const auto t1 = Clock::now();
  const std::uint64_t solved = load.stop();
  // One problem is well under a millisecond of work; a generous bound only catches a hang.
  EXPECT_LT(seconds_since(t1), 2.0);
  EXPECT_GE(solved, 10u);
  EXPECT_FALSE(load.running());
  EXPECT_EQ(load.threads(), 0u);
  EXPECT_EQ(load.solved(), solved);  // kept after stop()
  // And again: a stopped generator starts afresh.
  EXPECT_EQ(load.start(1), 1u);
  EXPECT_TRUE(load.running());
  load.stop();
}

TEST(LoadGenerator, ZeroThreadsMeansOnePerHardwareThread) {
  sinew_tools::LoadGenerator load;
  EXPECT_EQ(load.start(0), sinew_tools::LoadGenerator::hardware_threads());
  EXPECT_GE(load.threads(), 1u);
}  // the destructor stops and joins them

TEST(LoadGenerator, StartAndStopFromSeveralThreads) {
  sinew_tools::LoadGenerator load;
  std::vector<std::thread> callers;
  std::atomic<int> started{0};
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      try {
        load.start(1);
        ++started;
      } catch (const std::logic_error&) {
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(started.load(), 1);  // exactly one start wins; the others are told it runs
  EXPECT_EQ(load.threads(), 1u);
  callers.clear();
  for (int i = 0; i < 4; ++i) callers.emplace_back([&] { load.stop(); });
  for (auto& t : callers) t.join();
  EXPECT_FALSE(load.running());
}

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs `sinew <args>` capturing both streams.
Result sinew_cli(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout"), err = dir.file("stderr");
  const std::string command = "'" + std::string(SINEW_CLI) + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(command.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(out), read_file(err)};
}

TEST(LoadCli, RunsForItsTime) {
  TempDir dir;
  const auto t0 = Clock::now();
  auto r = sinew_cli(dir, "load --threads 2 --seconds 1");
  const double took = seconds_since(t0);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(took, 5.0);
  EXPECT_GE(took, 0.9);
  EXPECT_TRUE(contains(r.out, "2 thread(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "solved")) << r.out;
}

TEST(LoadCli, BadFlagsNameTheFlag) {
  TempDir dir;
  auto threads = sinew_cli(dir, "load --threads x");
  EXPECT_EQ(threads.status, 2);
  EXPECT_TRUE(contains(threads.err, "--threads")) << threads.err;
  auto negative = sinew_cli(dir, "load --threads -1 --seconds 1");
  EXPECT_EQ(negative.status, 2);
  EXPECT_TRUE(contains(negative.err, "--threads")) << negative.err;
  auto seconds = sinew_cli(dir, "load --seconds soon");
  EXPECT_EQ(seconds.status, 2);
  EXPECT_TRUE(contains(seconds.err, "--seconds")) << seconds.err;
  auto help = sinew_cli(dir, "load --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.out, "--threads")) << help.out;
}

TEST(LoadCli, StopsCleanlyOnSigint) {
  TempDir dir;
  const std::string out = dir.file("stdout");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string cli = SINEW_CLI;
  char* argv[] = {const_cast<char*>(cli.c_str()), const_cast<char*>("load"), const_cast<char*>("--threads"),
                  const_cast<char*>("1"), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, cli.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Until the first line is out, the handler may not be installed yet.
  const auto t0 = Clock::now();
  while (!contains(read_file(out), "until interrupted") && seconds_since(t0) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  const auto t1 = Clock::now();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (seconds_since(t1) > 10) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "sinew load did not stop within 10 s of SIGINT";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string text = read_file(out);
  EXPECT_TRUE(contains(text, "interrupted; solved")) << text;
}

}  // namespace
