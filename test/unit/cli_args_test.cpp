// test/unit/cli_args_test.cpp — every count and size on the command lines (`sinew` and the sample
// programs) is read as what it is and range-checked before anything runs: a negative number, an
// empty string, an overflowing value, trailing garbage or a value out of range exits with status 2
// and a one-line message naming the flag and the value, fast, without training, preparing or
// running anything. No OpenCL device needed: nothing gets as far as making a Runtime.
#include "unit/cli_run.hpp"

#ifdef SINEW_HAVE_SAMPLES
#include "common/descriptors.hpp"
#endif

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

using clitest::contains;
using clitest::Result;
using kbtest::TempDir;

struct Misuse {
  std::string flag, value;
  std::optional<std::string> named = {};  // what the message must quote when not the value (an item of a list)
};

// A refusal: status 2, the first line of stderr names the flag and the value (quoted), nothing
// ran, and it took well under a second.
void expect_refused(const Result& r, const std::string& what, const Misuse& m) {
  const std::string line = r.first_error_line();
  const std::string value = "'" + m.named.value_or(m.value) + "'";
  EXPECT_EQ(r.status, 2) << what << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_TRUE(contains(line, m.flag)) << what << ": the message names the flag: " << r.err;
  EXPECT_TRUE(contains(line, value)) << what << ": the message quotes " << value << ": " << r.err;
  EXPECT_FALSE(contains(r.out, "time:")) << what << ": nothing runs: " << r.out;
  EXPECT_FALSE(contains(r.out, "trained")) << what << ": nothing trains: " << r.out;
  EXPECT_LT(r.seconds, 1.0) << what << ": refused before any device work";
}

std::string describe(const std::string& program, const std::vector<std::string>& args) {
  std::string s = program;
  for (const auto& a : args) s += " " + clitest::quoted(a);
  return s;
}

// Guards the memory tests: an unfixed program that allocates instead of refusing gets bad_alloc
// at 4 GiB of address space instead of pressing on the machine's memory. Not under AddressSanitizer,
// which reserves terabytes of address space for its shadow memory at start.
#if defined(__SANITIZE_ADDRESS__)
const std::string kAddressLimit;
#else
const std::string kAddressLimit = "ulimit -v 4194304;";
#endif

// ----- sinew train ---------------------------------------------------------------------------

TEST(TrainCli, BadSettingsAreRefusedBeforeTraining) {
  const std::vector<Misuse> misuses = {
      {"--quality", "-1"},          {"--quality", "0"},          {"--quality", "1001"},
      {"--quality", ""},            {"--quality", "3x"},         {"--quality", "4294967297"},
      {"--precision", "-1"},        {"--precision", "0"},        {"--precision", "1.5"},
      {"--precision", "nan"},       {"--precision", ""},         {"--precision", "0.05s"},
      {"--max-executions", "0"},    {"--max-executions", "-1"},  {"--max-executions", "100001"},
      {"--max-executions", "18446744073709551616"},
      {"--strategy", "fastest"},
      {"--size", "0"},              {"--size", ""},              {"--size", "-1"},
      {"--size", "12abc"},          {"--size", "00"},
  };
  for (const auto& m : misuses) {
    TempDir dir;
    const std::string kb = dir.file("kb.sqlite");
    std::vector<std::string> args = {"train", "saxpy", "--kb", kb, m.flag, m.value};
    if (m.flag != "--size") args.insert(args.end(), {"--size", "65536"});
    const Result r = clitest::run(dir, SINEW_CLI, args);
    expect_refused(r, describe("sinew", args), m);
    EXPECT_FALSE(std::filesystem::exists(kb)) << describe("sinew", args) << ": no knowledge base is written";
  }
}

TEST(TrainCli, UnknownSampleAndShapedSizeOfAPlainSample) {
  TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  const Result r = clitest::run(dir, SINEW_CLI, {"train", "saxpy", "--kb", kb, "--size", "1024x2"});
  expect_refused(r, "sinew train saxpy --size 1024x2", {"--size", "1024x2"});
  EXPECT_FALSE(std::filesystem::exists(kb));
}

TEST(TrainCli, SizeBeyondPhysicalMemoryIsRefusedBeforeAllocating) {
  // saxpy keeps x, y and a pristine copy of y: 12 bytes per element.
  const std::uint64_t needs = 12ull * 4294967295ull;
  if (clitest::physical_memory() >= needs) GTEST_SKIP() << "this machine could hold saxpy --size 4294967295";
  TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  const Result r =
      clitest::run(dir, SINEW_CLI, {"train", "saxpy", "--kb", kb, "--size", "4294967295"}, kAddressLimit);
  expect_refused(r, "sinew train saxpy --size 4294967295", {"--size", "4294967295"});
  EXPECT_TRUE(contains(r.first_error_line(), std::to_string(needs))) << "names the bytes it needs: " << r.err;
  EXPECT_TRUE(contains(r.first_error_line(), "physical memory")) << r.err;
  EXPECT_FALSE(contains(r.err, "bad_alloc")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(kb));
}

// ----- sinew load, smoke, kb show ------------------------------------------------------------

TEST(ToolCli, BadCountsAreRefused) {
  struct Case {
    std::vector<std::string> command;
    Misuse misuse;
  };
  const std::vector<Case> cases = {
      {{"load", "--seconds", "1"}, {"--threads", "-1"}},
      {{"load", "--seconds", "1"}, {"--threads", "4097"}},
      {{"load", "--seconds", "1"}, {"--threads", "4294967297"}},
      {{"load", "--seconds", "1"}, {"--threads", ""}},
      {{"load", "--seconds", "1"}, {"--threads", "2x"}},
      {{"load", "--threads", "1"}, {"--seconds", "-1"}},
      {{"load", "--threads", "1"}, {"--seconds", "nan"}},
      {{"load", "--threads", "1"}, {"--seconds", "inf"}},
      {{"load", "--threads", "1"}, {"--seconds", ""}},
      {{"load", "--threads", "1"}, {"--seconds", "1e400"}},
      {{"smoke"}, {"--elements", "-1024"}},
      {{"smoke"}, {"--elements", "0"}},
      {{"smoke"}, {"--elements", ""}},
      {{"smoke"}, {"--elements", "1000"}},
      {{"smoke"}, {"--elements", "2.5"}},
      {{"smoke"}, {"--elements", "18446744073709550592"}},  // a multiple of 1024 that fits no memory
      {{"kb", "show", "abc"}, {"--runs", "-1"}},
      {{"kb", "show", "abc"}, {"--runs", ""}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    std::vector<std::string> args = c.command;
    args.insert(args.end(), {c.misuse.flag, c.misuse.value});
    if (args.front() == "kb") args.insert(args.end(), {"--kb", dir.file("kb.sqlite")});
    const Result r = clitest::run(dir, SINEW_CLI, args, kAddressLimit);
    expect_refused(r, describe("sinew", args), c.misuse);
  }
}

// ----- the sample programs -------------------------------------------------------------------

#ifdef SINEW_SAMPLE_DIR
std::string sample(const std::string& name) { return std::string(SINEW_SAMPLE_DIR) + "/" + name; }

TEST(SampleCli, BadCommonFlagsAreRefusedBeforeTheRuntime) {
  const std::vector<Misuse> misuses = {
      {"--size", ""},
      {"--size", "0"},
      {"--size", "00"},
      {"--size", "-1"},
      {"--size", "12abc"},
      {"--size", "1024x2"},
      {"--repeat", "0"},
      {"--repeat", "-1"},
      {"--repeat", ""},
      {"--repeat", "x"},
      {"--repeat", "18446744073709551616"},
      {"--overlap", "4294967297"},
      {"--overlap", "0"},
      {"--overlap", "17"},
      {"--overlap", "-1"},
      {"--overlap", ""},
      {"--shares", "0.5,x", "x"},
      {"--shares", "1.5,-0.5", "1.5"},
      {"--shares", "0.5,,0.5", ""},
      {"--shares", "0.5,0.5,", ""},
      {"--shares", ""},
      {"--shares", "0.5,0.4"},  // does not add up to 1
      {"--shares", "nan,1", "nan"},
      {"--device", ""},
      {"--device", "99999999999999999999999"},
  };
  for (const auto& m : misuses) {
    TempDir dir;
    const std::vector<std::string> args = {m.flag, m.value};
    const Result r = clitest::run(dir, sample("saxpy"), args, kAddressLimit);
    expect_refused(r, describe("saxpy", args), m);
  }
}

// Switches take no value: "--dump=no" once dumped the tree. Unknown, abbreviated, repeated flags
// and stray words are refused the same way, each message naming what it refuses.
TEST(SampleCli, AValueOnASwitchAndOtherMisspellingsAreRefused) {
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"--dump=no"}, "--dump"},           {{"--no-check=1"}, "--no-check"},
      {{"--profile=false"}, "--profile"},  {{"--dev", "0"}, "--dev"},
      {{"--bogus"}, "--bogus"},            {{"--size", "1024", "--size", "2048"}, "--size"},
      {{"stray"}, "'stray'"},              {{"--size"}, "--size"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const Result r = clitest::run(dir, sample("saxpy"), c.args, kAddressLimit);
    EXPECT_EQ(r.status, 2) << describe("saxpy", c.args) << "\nstdout: " << r.out << "\nstderr: " << r.err;
    EXPECT_TRUE(contains(r.first_error_line(), c.named)) << describe("saxpy", c.args) << ": " << r.err;
    EXPECT_FALSE(contains(r.out, "time:")) << describe("saxpy", c.args) << ": nothing runs: " << r.out;
  }
}

TEST(SampleCli, SizeBeyondPhysicalMemoryIsRefusedBeforeAllocating) {
  const std::uint64_t needs = 12ull * 4294967295ull;
  if (clitest::physical_memory() >= needs) GTEST_SKIP() << "this machine could hold saxpy --size 4294967295";
  TempDir dir;
  const Result r = clitest::run(dir, sample("saxpy"), {"--size", "4294967295"}, kAddressLimit);
  expect_refused(r, "saxpy --size 4294967295", {"--size", "4294967295"});
  EXPECT_TRUE(contains(r.first_error_line(), std::to_string(needs))) << "names the bytes it needs: " << r.err;
  EXPECT_TRUE(contains(r.first_error_line(), "physical memory")) << r.err;
  EXPECT_FALSE(contains(r.err, "bad_alloc")) << r.err;
}

TEST(SampleCli, SizesEachSampleCannotTakeAreRefusedBeforeTheRuntime) {
  struct Case {
    std::string program;
    Misuse misuse;
  };
  const std::vector<Case> cases = {
      {"filter_pipeline", {"--size", "0x64"}},
      {"filter_pipeline", {"--size", "70000x2"}},
      {"filter_pipeline", {"--size", "63"}},
      {"nbody", {"--size", "1"}},
      {"nbody", {"--size", "1073741824"}},  // 2^30 bodies: 96 GiB of data
      {"segmentation", {"--size", "1000"}},
      {"fft", {"--size", "18446744073709551615"}},
      {"saxpy", {"--size", "4294967296"}},
      {"prefix_sum", {"--size", "2147483648"}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const std::vector<std::string> args = {c.misuse.flag, c.misuse.value};
    const Result r = clitest::run(dir, sample(c.program), args, kAddressLimit);
    expect_refused(r, describe(c.program, args), c.misuse);
  }
}

TEST(SampleCli, BadOwnFlagsAreRefused) {
  struct Case {
    std::string program;
    Misuse misuse;
  };
  const std::vector<Case> cases = {
      {"saxpy", {"--a", "nan"}},
      {"saxpy", {"--a", ""}},
      {"nbody", {"--steps", "-1"}},
      {"nbody", {"--steps", "0"}},
      {"nbody", {"--dt", "inf"}},
      {"filter_pipeline", {"--threshold", "4294967297"}},
      {"filter_pipeline", {"--factor", "-1"}},
      {"filter_pipeline", {"--seed", "4294967296"}},
      {"segmentation", {"--lo", "300"}},
      {"segmentation", {"--width", "-4"}},
      {"fft", {"--length", ""}},
      // The bitonic leaf sorts a power of two of keys: any other leaf sorted wrongly.
      {"mergesort", {"--leaf", "3"}},
      {"mergesort", {"--leaf", "6"}},
      {"mergesort", {"--leaf", "100"}},
      {"mergesort", {"--leaf", "1000"}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    const std::vector<std::string> args = {c.misuse.flag, c.misuse.value};
    const Result r = clitest::run(dir, sample(c.program), args, kAddressLimit);
    expect_refused(r, describe(c.program, args), c.misuse);
  }
}
#endif

#ifdef SINEW_HAVE_SAMPLES
// ----- Sample::host_bytes and check_size_argument, the checks behind both command lines --------

namespace samples = sinew::samples;

TEST(SampleHostBytes, WorkedOutWithoutPreparing) {
  // What each descriptor keeps per size: saxpy x, y, y0 (floats); nbody four float4 arrays and the
  // reference's two; fft the input and the signal (float2); filter_pipeline the input, the image
  // and the reference (uchar4); segmentation the volume, the classes and the reference (bytes);
  // prefix_sum x and y (floats) and the reference's sums and magnitudes (doubles).
  const std::vector<std::pair<std::string, std::uint64_t>> expected = {
      {"saxpy", 12ull * 65536},  {"nbody", 96ull * 256},           {"fft", 2ull * 4 * 65536 * 8},
      {"filter_pipeline", 3ull * 64 * 64 * 4}, {"segmentation", 3ull * 64 * 64 * 16},
      {"prefix_sum", 24ull * 100003},
  };
  for (const auto& [name, bytes] : expected) {
    auto s = samples::find(name);
    ASSERT_TRUE(s) << name;
    const std::size_t small = s->sizes().small;
    EXPECT_EQ(s->host_bytes(small), bytes) << name;
    EXPECT_EQ(s->host_bytes(std::to_string(small)), bytes) << name;
    EXPECT_TRUE(s->tree().empty()) << name << ": nothing was prepared";
    EXPECT_EQ(s->size(), 0u) << name;
  }
  samples::FilterPipeline filter;
  EXPECT_EQ(filter.host_bytes(std::string("64x32")), 3ull * 64 * 32 * 4);
  samples::Fft forward_only(samples::FftParams{.transforms = 4, .length = 1024, .roundtrip = false});
  EXPECT_EQ(forward_only.host_bytes(std::size_t{0}), 3ull * 4 * 1024 * 8);  // and the reference
  // Far beyond 2^64 bytes: saturated, not wrapped.
  samples::Fft fft;
  EXPECT_EQ(fft.host_bytes(std::numeric_limits<std::size_t>::max()), std::numeric_limits<std::uint64_t>::max());
}

TEST(SampleHostBytes, RefusesWhatPrepareRefusesAndLeavesTheParameters) {
  auto refused = [](samples::Sample& s, const std::string& size) {
    try {
      s.host_bytes(size);
      return std::string("accepted");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
  samples::Saxpy saxpy;
  EXPECT_TRUE(contains(refused(saxpy, "4294967296"), "2^32-1")) << refused(saxpy, "4294967296");
  EXPECT_TRUE(contains(refused(saxpy, "-1"), "'-1'"));
  EXPECT_TRUE(contains(refused(saxpy, "12abc"), "'12abc'"));
  samples::FilterPipeline filter;
  EXPECT_TRUE(contains(refused(filter, "63x64"), "even"));
  EXPECT_TRUE(contains(refused(filter, "0x64"), "'0x64'"));
  samples::Nbody nbody;
  EXPECT_TRUE(contains(refused(nbody, "1"), "2^30"));
  samples::Segmentation segmentation;
  EXPECT_TRUE(contains(refused(segmentation, "1000"), "whole slices"));
  samples::Mergesort mergesort(samples::MergesortParams{.leaf_size = 3});
  EXPECT_TRUE(contains(refused(mergesort, "4096"), "power of two")) << refused(mergesort, "4096");
  EXPECT_THROW(mergesort.prepare(std::size_t{4096}), std::invalid_argument);
  // prepare() checks before it changes anything: a refused size leaves the parameters as they were.
  EXPECT_THROW(saxpy.prepare(std::size_t{4294967296ull}), std::invalid_argument);
  EXPECT_EQ(saxpy.params.elements, samples::SaxpyParams{}.elements);
  EXPECT_THROW(nbody.prepare(std::size_t{1}), std::invalid_argument);
  EXPECT_EQ(nbody.params.bodies, samples::NbodyParams{}.bodies);
}

TEST(CheckSizeArgument, RefusesEmptyZeroAndWhatDoesNotFit) {
  auto message = [](const samples::Sample& s, const std::optional<std::string>& size) {
    try {
      samples::check_size_argument(s, "--size", size);
      return std::string();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
  for (const auto& name : samples::names()) {
    auto s = samples::find(name);
    EXPECT_EQ(message(*s, std::nullopt), "") << name << ": the standard size fits";
    EXPECT_EQ(message(*s, std::to_string(s->sizes().small)), "") << name;
    for (const std::string bad : {"", "0", "000"}) {
      const std::string m = message(*s, bad);
      EXPECT_TRUE(contains(m, "--size = '" + bad + "'")) << name << ": " << m;
      EXPECT_TRUE(contains(m, "leave --size out")) << name << ": " << m;
    }
  }
  samples::Saxpy saxpy;
  const std::uint64_t needs = 12ull * 4294967295ull;
  const std::string m = message(saxpy, "4294967295");
  if (clitest::physical_memory() < needs) {
    EXPECT_TRUE(contains(m, "--size = '4294967295'")) << m;
    EXPECT_TRUE(contains(m, std::to_string(needs) + " bytes")) << m;
    EXPECT_TRUE(contains(m, std::to_string(samples::physical_memory()) + " bytes")) << m;
  }
  EXPECT_EQ(samples::physical_memory(), clitest::physical_memory());
  // A parameter the program set, not the size, is what the message blames.
  samples::Fft fft;
  fft.params.length = 1;
  const std::string length = message(fft, "4");
  EXPECT_TRUE(contains(length, "clFFT")) << length;
  EXPECT_FALSE(contains(length, "--size")) << length;
}
#endif

}  // namespace

// `sinew cache clear`, the documented remedy for a driver that misbehaves on a cached program:
// every cached binary and marker goes, the lock files stay (another process may hold one).
TEST(CacheCli, ClearRemovesTheBinariesAndKeepsTheLocks) {
  kbtest::TempDir dir;
  const std::string cache = dir.file("xdg") + "/sinew";
  std::filesystem::create_directories(cache);
  for (const char* name : {"a1.bin", "a1.bin.lock", "a1.bin.loading", "b2.bin", "b2.bin.tmp.12.34", "b2.bin.lock"})
    kbtest::write_file(cache + "/" + name, "x");
  const std::string env = "env XDG_CACHE_HOME=" + clitest::quoted(dir.file("xdg"));
  auto path = clitest::run(dir, SINEW_CLI, {"cache", "path"}, env);
  EXPECT_EQ(path.status, 0) << path.err;
  EXPECT_EQ(path.out, cache + "\n");
  auto clear = clitest::run(dir, SINEW_CLI, {"cache", "clear"}, env);
  EXPECT_EQ(clear.status, 0) << clear.err;
  EXPECT_TRUE(clitest::contains(clear.out, "removed 4 file(s)")) << clear.out;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(cache)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"a1.bin.lock", "b2.bin.lock"}));
  auto bad = clitest::run(dir, SINEW_CLI, {"cache", "wipe"}, env);
  EXPECT_EQ(bad.status, 2);
}
