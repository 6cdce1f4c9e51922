// test/pocl/balance_experiment_test.cpp — bench_balance (the spec's Fig. 4 experiment) end to end
// with --quick on two PoCL devices: it exits 0 and writes one CSV row per execution with the
// expected columns, phases and load flags, an interleaved oracle run (the sweep's best split for
// the load of the moment) beside every execution, the oracle sweep, the Markdown section and the
// SVG figure; the same with --load-first (the load on from the first run). Whether
// the balancer rebalanced is not asserted: both PoCL devices share the same cores, so the load
// slows both alike.
#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using kbtest::read_file;
using kbtest::TempDir;

struct Result {
  int status = -1;
  std::string out, err;
};

Result bench_balance(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string command = "'" + std::string(SINEW_BENCH_BALANCE) + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(command.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(out), read_file(err)};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A CSV without quoted fields (bench_balance writes none) as rows of column -> value.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path, std::vector<std::string>* header) {
  std::istringstream in(read_file(path));
  std::string line;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (!l.empty() && l.back() == ',') f.push_back("");
    return f;
  };
  std::getline(in, line);
  *header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto f = split(line);
    EXPECT_EQ(f.size(), header->size()) << line;
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < f.size() && i < header->size(); ++i) r[(*header)[i]] = f[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

// --quick: 60 executions, the load on before run 20 and off before run 40; with --load-first
// (files named bench_balance_load_first*) 40 executions, the load on from the first to run 20.
struct Expected {
  std::string name = "bench_balance";
  std::size_t executions = 60, start = 20, stop = 40;
};

void check_experiment(const std::string& out, const Result& r, const Expected& x = {}) {
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> header;
  const auto rows = read_csv(out + "/" + x.name + ".csv", &header);
  ASSERT_EQ(rows.size(), x.executions) << r.err;
  for (const char* c : {"n", "phase", "load", "cpu_share", "gpu_share", "ms_cpu0", "ms_cpu1", "wall_ms", "exec_ms",
                        "deviation", "lbt", "balance_level", "cpu_share_after", "gpu_share_after", "oracle_cpu_share",
                        "oracle_ms", "share_cpu0", "share_cpu1", "fission", "overlap", "provenance"})
    EXPECT_NE(std::find(header.begin(), header.end(), c), header.end()) << "missing column " << c;
  for (std::size_t n = 0; n < rows.size(); ++n) {
    const auto& row = rows[n];
    EXPECT_EQ(row.at("n"), std::to_string(n));
    const bool load = n >= x.start && n < x.stop;
    EXPECT_EQ(row.at("load"), load ? "1" : "0") << n;
    EXPECT_EQ(row.at("phase"), n < x.start ? "before" : load ? "during" : "after") << n;
    const double cpu = std::stod(row.at("cpu_share")), gpu = std::stod(row.at("gpu_share"));
    EXPECT_GE(cpu, 0.0);
    EXPECT_GE(gpu, 0.0);
    EXPECT_NEAR(cpu + gpu, 1.0, 1e-6) << n;
    EXPECT_GT(std::stod(row.at("wall_ms")), 0.0) << n;
    const double dev = std::stod(row.at("deviation"));
    EXPECT_TRUE(dev >= 0 && dev <= 1) << n << ": " << dev;
    const std::string level = row.at("balance_level");
    EXPECT_TRUE(level == "0" || level == "1" || level == "2") << level;
    if (level == "0") EXPECT_EQ(row.at("cpu_share_after"), row.at("cpu_share")) << n;
    // The interleaved oracle run after each balanced one: timed, at a split of the sweep.
    ASSERT_FALSE(row.at("oracle_ms").empty()) << n;
    EXPECT_GT(std::stod(row.at("oracle_ms")), 0.0) << n;
    const double oracle_share = std::stod(row.at("oracle_cpu_share"));
    EXPECT_TRUE(oracle_share >= 0 && oracle_share <= 1) << n;
    if (n > 0 && (n < x.start || n >= x.stop) == (n - 1 < x.start || n - 1 >= x.stop))
      EXPECT_EQ(row.at("oracle_cpu_share"), rows[n - 1].at("oracle_cpu_share")) << "one split per load state, " << n;
  }

  std::vector<std::string> oracle_header;
  const auto oracle = read_csv(out + "/" + x.name + "_oracle.csv", &oracle_header);
  EXPECT_EQ(oracle.size(), 22u);  // 11 CPU shares, load off and on
  for (const auto& row : oracle) EXPECT_EQ(row.at("check"), "OK") << row.at("load") << " " << row.at("cpu_share");

  const std::string md = read_file(out + "/" + x.name + ".md");
  EXPECT_EQ(md.rfind("## ", 0), 0u) << md.substr(0, 200);
  auto range = [](std::size_t a, std::size_t b) { return "(" + std::to_string(a) + "-" + std::to_string(b - 1) + ")"; };
  std::vector<std::string> parts = {"Oracle", "during " + range(x.start, x.stop), "after " + range(x.stop, x.executions),
                                    "Time lost against the interleaved oracle", "| total |", "executions to the bound",
                                    "result check after the last execution: OK", "Figure: " + x.name + ".svg"};
  if (x.start > 0) parts.push_back("before " + range(0, x.start));
  for (const auto& part : parts) EXPECT_TRUE(contains(md, part)) << part;
  if (x.start == 0) EXPECT_FALSE(contains(md, "before (")) << "no phase before a load from the first run";
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0)
    EXPECT_TRUE(std::filesystem::exists(out + "/" + x.name + ".png")) << md;
  // The figure, written by the benchmark itself: both panels, the load interval shaded, a point
  // of the time line per execution.
  const std::string svg = read_file(out + "/" + x.name + ".svg");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u) << svg.substr(0, 200);
  EXPECT_TRUE(contains(svg, "</svg>"));
  for (const char* part : {"CPU load on", "execution time (ms)", "CPU share (%)", "oracle CPU share"})
    EXPECT_TRUE(contains(svg, part)) << part;
  const auto time_path = svg.find("<path d=\"M");
  ASSERT_NE(time_path, std::string::npos);
  const std::string d = svg.substr(time_path, svg.find('"', time_path + 9) - time_path);
  EXPECT_EQ(static_cast<std::size_t>(std::count(d.begin(), d.end(), 'L')) + 1, x.executions) << d.substr(0, 200);
}

TEST(BalanceExperiment, QuickWithTheKnowledgeBasePlan) {
  TempDir dir;
  const std::string out = dir.file("out");
  const Result r = bench_balance(dir, "--quick --out '" + out + "'");
  check_experiment(out, r);
  EXPECT_TRUE(std::filesystem::exists(out + "/bench_balance_kb.sqlite"));
  EXPECT_TRUE(contains(read_file(out + "/bench_balance.md"), "starting plan: the knowledge base"));
}

TEST(BalanceExperiment, QuickWithTheLoadFirst) {
  TempDir dir;
  const std::string out = dir.file("out");
  const Result r = bench_balance(dir, "--quick --load-first --out '" + out + "'");
  check_experiment(out, r, {.name = "bench_balance_load_first", .executions = 40, .start = 0, .stop = 20});
  EXPECT_TRUE(contains(read_file(out + "/bench_balance_load_first.md"), "load first")) << "its own title";
  // --load-start is the other experiment's.
  const Result both = bench_balance(dir, "--quick --load-first --load-start 5 --out '" + out + "'");
  EXPECT_EQ(both.status, 2);
  EXPECT_TRUE(contains(both.err, "--load-start")) << both.err;
}

TEST(BalanceExperiment, QuickWithAGivenPlan) {
  TempDir dir;
  const std::string out = dir.file("out");
  const Result r = bench_balance(dir, "--quick --plan cpu:0=0.5 --out '" + out + "'");
  check_experiment(out, r);
  std::vector<std::string> header;
  const auto rows = read_csv(out + "/bench_balance.csv", &header);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].at("cpu_share"), "0.5");  // the given plan is where it starts
}

TEST(BalanceExperiment, BadFlagsNameTheFlag) {
  TempDir dir;
  const Result stop = bench_balance(dir, "--quick --load-stop 100 --out '" + dir.file("out") + "'");
  EXPECT_EQ(stop.status, 2);
  EXPECT_TRUE(contains(stop.err, "--load-stop")) << stop.err;
  const Result threads = bench_balance(dir, "--threads many");
  EXPECT_EQ(threads.status, 2);
  EXPECT_TRUE(contains(threads.err, "--threads")) << threads.err;
  const Result plan = bench_balance(dir, "--quick --plan warp=0.5 --out '" + dir.file("out") + "'");
  EXPECT_EQ(plan.status, 2);
  EXPECT_TRUE(contains(plan.err, "--plan")) << plan.err;
}

}  // namespace
