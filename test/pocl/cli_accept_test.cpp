// test/pocl/cli_accept_test.cpp — the command lines' checked numbers still take every good value:
// `sinew train` with each training flag set, `sinew smoke`, and the sample programs with sizes
// (plain and shaped), --repeat, --device, --shares with --overlap and their own flags, on PoCL.
#include "unit/cli_run.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using clitest::contains;
using clitest::Result;
using kbtest::TempDir;

std::string sample(const std::string& name) { return std::string(SINEW_SAMPLE_DIR) + "/" + name; }

TEST(CliAccepts, TrainWithEveryTrainingFlag) {
  TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  const Result r = clitest::run(dir, SINEW_CLI,
                                {"train", "saxpy", "--kb", kb, "--size", "65536", "--quality", "1", "--precision",
                                 "0.2", "--max-executions", "4", "--strategy", "cpu_assisted"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "saxpy size 65536 (elements): trained")) << r.out;
  EXPECT_TRUE(contains(r.out, "result: OK")) << r.out;
  EXPECT_TRUE(std::filesystem::exists(kb));

  const Result shaped = clitest::run(
      dir, SINEW_CLI, {"train", "filter_pipeline", "--kb", kb, "--size", "64x32", "--quality", "1", "--max-executions", "3"});
  EXPECT_EQ(shaped.status, 0) << shaped.out << shaped.err;
  EXPECT_TRUE(contains(shaped.out, "filter_pipeline size 64x32")) << shaped.out;
}

TEST(CliAccepts, TrainRefusesABadVariableBeforeTraining) {
  TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  const Result r = clitest::run(dir, SINEW_CLI, {"train", "saxpy", "--kb", kb, "--size", "65536"}, "env SINEW_QUALITY=0");
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // the environment, not the command line: a failure
  EXPECT_TRUE(contains(r.err, "SINEW_QUALITY")) << r.err;
  EXPECT_FALSE(contains(r.out, "trained")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(kb));
}

// Training's progress: plain lines where stderr is no terminal, one line rewritten in place on a
// pseudo-terminal (script(1)), the plan trained after it either way.
TEST(CliAccepts, TrainingProgressIsOneLineOnATerminalAndPlainLinesElsewhere) {
  TempDir dir;
  const std::vector<std::string> train = {"train", "saxpy", "--size", "65536", "--quality", "1", "--max-executions", "6"};
  auto with_kb = [&](const std::string& kb) {
    std::vector<std::string> args = train;
    args.insert(args.end(), {"--kb", dir.file(kb)});
    return args;
  };
  auto lines_with = [](const std::string& text, const std::string& part) {
    std::size_t n = 0, at = 0;
    while (at < text.size()) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      n += text.substr(at, end - at).find(part) != std::string::npos;
      at = end + 1;
    }
    return n;
  };
  const Result plain = clitest::run(dir, SINEW_CLI, with_kb("plain.sqlite"), "env SINEW_QUIET=0 SINEW_TRAINING_TIME=60");
  ASSERT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_FALSE(contains(plain.err, "\r")) << plain.err;
  EXPECT_FALSE(contains(plain.err, "\033[K")) << plain.err;
  EXPECT_GE(lines_with(plain.err, "executions]"), 2u) << plain.err;
  EXPECT_EQ(lines_with(plain.err, "trained '"), 1u) << plain.err;
  EXPECT_EQ(lines_with(plain.err, "time budget 60.0 s"), 1u) << plain.err;  // on the "trained" line

  std::string command = "env SINEW_QUIET=0 SINEW_TRAINING_TIME=60 TERM=xterm " + clitest::quoted(SINEW_CLI);
  for (const auto& a : with_kb("terminal.sqlite")) command += " " + clitest::quoted(a);
  const Result terminal = clitest::run(dir, "script", {"-qec", command, "/dev/null"});
  ASSERT_EQ(terminal.status, 0) << terminal.out << terminal.err;
  // Every progress line on one terminal line, each erasing the one before; the plan trained
  // replaces the last.
  EXPECT_EQ(lines_with(terminal.out, "executions]"), 1u) << terminal.out;
  EXPECT_GE(lines_with(terminal.out, "\r\033[Ksinew:"), 1u) << terminal.out;
  EXPECT_TRUE(contains(terminal.out, "\r\033[Ksinew: trained '")) << terminal.out;
  EXPECT_TRUE(contains(terminal.out, "result: OK")) << terminal.out;
}

TEST(CliAccepts, Smoke) {
  TempDir dir;
  const Result r = clitest::run(dir, SINEW_CLI, {"smoke", "--elements", "2048"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "over 2048 floats")) << r.out;
}

TEST(CliAccepts, SampleProgramsTakeGoodValues) {
  sinew::Runtime rt;
  const std::size_t devices = rt.devices().size();
  std::string shares = "1";
  for (std::size_t i = 1; i < devices; ++i) shares += ",0";
  struct Case {
    std::string program;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"saxpy", {"--size", "65536", "--repeat", "2", "--device", "0", "--a", "-1.5"}},
      {"saxpy", {"--size", "65536", "--shares", shares, "--overlap", "2"}},
      {"filter_pipeline", {"--size", "64x32", "--threshold", "256", "--factor", "0", "--seed", "4294967295"}},
      {"segmentation", {"--size", "65536", "--lo", "0", "--hi", "255"}},
      {"nbody", {"--size", "256", "--steps", "2", "--dt", "0.02"}},
      {"fft", {"--size", "2", "--length", "1024"}},
      {"prefix_sum", {"--size", "4099", "--exclusive", "--shares", shares}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const Result r = clitest::run(dir, sample(c.program), c.args);
    std::string what = c.program;
    for (const auto& a : c.args) what += " " + a;
    EXPECT_EQ(r.status, 0) << what << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "result: OK")) << what << "\n" << r.out;
  }
}

}  // namespace
