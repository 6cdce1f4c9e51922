// test/unit/trace_test.cpp — the Chrome trace keeps every digit of its times: two kernels 3.5 µs
// apart at 2.35 s after the request's start have different timestamps (six significant digits
// once gave both 2.35e+06).
#include "exec/trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

std::string written_trace(const std::vector<sinew::detail::TraceRecord>& records) {
  const auto path = std::filesystem::temp_directory_path() / ("sinew-trace-test-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  sinew::detail::write_chrome_trace(path.string(), records, {});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

TEST(ChromeTrace, TimestampsKeepEveryDigit) {
  const std::string trace = written_trace({{"first", "kernel", "cpu:0", "partition 0", 2350000.0, 1.25},
                                           {"second", "kernel", "cpu:0", "partition 0", 2350003.5, 0.125}});
  EXPECT_NE(trace.find("\"ts\":2350000,\"dur\":1.25,"), std::string::npos) << trace;
  EXPECT_NE(trace.find("\"ts\":2350003.5,\"dur\":0.125,"), std::string::npos) << trace;
}

TEST(ChromeTrace, ATimeJsonCannotHoldIsNull) {
  const std::string trace = written_trace({{"odd", "host", "host", "thread", 1e300 * 1e300, 0.0}});
  EXPECT_NE(trace.find("\"ts\":null,\"dur\":0,"), std::string::npos) << trace;
}

}  // namespace
