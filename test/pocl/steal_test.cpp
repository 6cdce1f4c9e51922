// The work-stealing schedule (Config::schedule = steal) end to end on the PoCL devices this suite
// is given (1, 2 or 3), zero-copy and with the last device driven as a discrete GPU: with the
// first device given most units, and costly ones, the others run out and steal from it; every unit
// runs exactly once, and the Report says who stole what from whom (Report::steals, the
// decomposition's "taken:" line), each stolen range begun on its thief's device.
#include <sinew/sinew.hpp>

#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

using namespace sinew;

namespace {

using sinew::testing::device_count;
using sinew::testing::runtime;

// Each visit counted and tagged, after work on the units below `heavy` (the first device's
// range): it takes long enough that the others run out of their cheap units while it has units
// left to steal.
const char* kVisit = R"CL(
__kernel void visit(__global int* visits, __global uint* tag, uint off, uint heavy) {
  size_t i = get_global_id(0);
  uint x = off + (uint)i;
  const int rounds = off + (uint)i < heavy ? 4096 : 1;
  for (int k = 0; k < rounds; ++k) x = x * 1664525u + 1013904223u;
  atomic_inc(&visits[i]);
  tag[i] = (x == 7u) ? 0u : off + (uint)i;  // (x is almost never 7: the loop is not optimised away)
}
)CL";

// The first device most units, the others the rest evenly.
std::string skewed_plan() {
  const double others = 0.1 * static_cast<double>(device_count() - 1);
  std::string plan = "0=" + std::to_string(1.0 - others);
  for (std::size_t d = 1; d < device_count(); ++d) plan += "," + std::to_string(d) + "=0.1";
  return plan + ",schedule=steal";
}

class StealRuns : public ::testing::TestWithParam<bool> {};

TEST_P(StealRuns, IdleDevicesStealAndTheReportSaysWhoStoleWhatFromWhom) {
  const bool discrete = GetParam();
  const std::string plan = device_count() > 1 ? skewed_plan() : "schedule=steal";
  std::size_t steals = 0;
  for (std::size_t n : {1u, 1000u, 200003u, 200003u, 200003u}) {
    SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
    // A tree of its own each time: no run starts where an earlier one's work ended.
    Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
    Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
    // (One device: nothing to steal from another device; its units are cheap.)
    const auto heavy = device_count() < 2 ? cl_uint(0)
                       : static_cast<cl_uint>(static_cast<double>(n) * (1.0 - 0.1 * static_cast<double>(device_count() - 1)));
    const Node tree = kernel_source(kVisit, "visit", "steal_test.cl").args(inout(V), out(T), offset(T), scalar(heavy));
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu);
    const Report r = runtime(discrete).run(tree, {{V, visits}, {T, tag}}, {.plan = plan}).get();
    ASSERT_EQ(r.config.schedule, "steal");
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || (tag[i] != i && tag[i] != 0);
    EXPECT_EQ(wrong, 0u);
    EXPECT_NE(r.decomposition.find("taken:"), std::string::npos) << r.decomposition;
    steals += r.steals.size();
    if (!r.steals.empty()) EXPECT_NE(r.decomposition.find(" stole "), std::string::npos) << r.decomposition;
    for (const sinew::Steal& s : r.steals) {
      EXPECT_LT(s.thief, device_count());
      EXPECT_LT(s.victim, device_count());
      EXPECT_GT(s.units, 0u);
      EXPECT_LE(s.first + s.units, n);
      // The thief began its stolen range: a partition of its device starts at the range's first unit.
      bool begun = false;
      for (const auto& p : r.partitions) begun = begun || (p.first == s.first && p.device == s.thief);
      EXPECT_TRUE(begun) << "stolen [" << s.first << ", " << s.first + s.units << ") by device " << s.thief;
    }
  }
  if (device_count() > 1) EXPECT_GT(steals, 0u);  // the others ran out of cheap units and stole
}

// The runs of one plan try leaving out the device that ran the least part (docs/decisions/182):
// the fourth run of a tree leaves it out (its queues take no unit and steal nothing), every unit
// still runs once, and the decomposition's "taken:" line says so. The part setting at 0.9 makes
// every plan's least device the one tried, whatever stealing left it; the last device driven as
// discrete or not.
TEST_P(StealRuns, AFourthRunLeavesOutTheDeviceThatRanTheLeast) {
  if (device_count() < 2) GTEST_SKIP() << "one device: nothing to leave out";
  const bool discrete = GetParam();
  RuntimeOptions o;
  if (discrete) o.discrete = std::to_string(device_count() - 1);
  ScheduleTuning tuning;
  tuning.steal.leave_out_part = 0.9;
  o.schedule_tuning = tuning;
  Runtime rt(o);
  Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
  Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
  const Node tree = kernel_source(kVisit, "visit", "steal_test.cl").args(inout(V), out(T), offset(T), scalar(cl_uint(0)));
  const std::size_t n = 200003;
  std::vector<double> ran(device_count(), 0);  // the third run's units per device
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu);
    const Report r = rt.run(tree, {{V, visits}, {T, tag}}, {.plan = skewed_plan()}).get();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || tag[i] != i;
    ASSERT_EQ(wrong, 0u);
    std::vector<double> units(device_count(), 0);
    for (const auto& p : r.partitions) units.at(p.device) += static_cast<double>(p.units);
    if (run == 2) ran = units;
    if (run < 3) {
      EXPECT_EQ(r.decomposition.find("left out"), std::string::npos) << r.decomposition;
      continue;
    }
    std::size_t least = 0;  // the device that ran the least part of the run before, among those that ran
    for (std::size_t d = 0; d < ran.size(); ++d)
      if (ran[d] > 0 && (ran[least] == 0 || ran[d] < ran[least])) least = d;
    EXPECT_EQ(units[least], 0.0) << r.str();
    EXPECT_NE(r.decomposition.find(rt.devices().at(least).id() + " left out, to measure the runs without it"),
              std::string::npos)
        << r.decomposition;
    for (const sinew::Steal& s : r.steals) EXPECT_NE(s.thief, least);
  }
}

// A discrete device's staged copies are split over the host's threads also while a CPU device
// computes beside it (docs/decisions/172): the Report's copy threads are the host's hardware
// threads shared among the staging queues, at most kMaxWaysBesideCpuWork (4).
TEST(StealRuns, StagedCopiesUseHelpersBesideACpuDevice) {
  if (device_count() < 2) GTEST_SKIP() << "needs a CPU device beside the discrete one";
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  if (hardware < 2) GTEST_SKIP() << "one hardware thread: nothing to share";
  const std::size_t n = 4u << 20;  // 16 MB a vector: staged chunks of two pieces or more
  for (const std::string schedule : {"static", "steal"}) {
    SCOPED_TRACE(schedule);
    Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
    Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
    const Node tree = kernel_source(kVisit, "visit", "steal_test.cl").args(inout(V), out(T), offset(T), scalar(cl_uint(0)));
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu);
    const std::string last = std::to_string(device_count() - 1);
    // The default rule whatever $SINEW_COPY_THREADS says (0: the host's threads shared).
    Runtime rt(RuntimeOptions{.discrete = last, .copy_threads = 0});
    const Report r = rt.run(tree, {{V, visits}, {T, tag}}, {.plan = "0=0.5," + last + "=0.5,schedule=" + schedule}).get();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || tag[i] != i;
    EXPECT_EQ(wrong, 0u);
    bool cpu_worked = false;
    for (const auto& p : r.partitions) cpu_worked = cpu_worked || (p.device == 0 && p.units > 0);
    ASSERT_TRUE(cpu_worked) << r.str();
    EXPECT_EQ(r.copy_threads, std::min(hardware, 4u)) << r.str();  // one staging queue: every thread, at most 4
  }
}

// A run in which one discrete device works (the others too slow to help by the plan) is cut
// before it starts, and a queue with two pieces enqueues the second one's kernel before the
// first one's results are copied out (docs/decisions/187): every piece's results reach the host,
// in runs after runs of one plan (the results ring reused), and the kept-out devices run nothing.
TEST(StealRuns, ADiscreteDeviceWorkingAloneBringsBackEveryPieceItsQueuesRanBackToBack) {
  const std::size_t last = device_count() - 1;
  Runtime rt(RuntimeOptions{.discrete = std::to_string(last)});
  std::string plan;
  for (std::size_t d = 0; d < last; ++d) plan += std::to_string(d) + "=0.0005,";
  plan += std::to_string(last) + "=" + std::to_string(1.0 - 0.0005 * static_cast<double>(last)) +
          ",overlap=2,schedule=steal";
  Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
  Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
  const Node tree = kernel_source(kVisit, "visit", "steal_test.cl").args(inout(V), out(T), offset(T), scalar(cl_uint(0)));
  const std::size_t n = (4u << 20) + 3;  // 16 MB a vector: downloads of several ring pieces
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(plan + ", run " + std::to_string(run));
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu);
    const Report r = rt.run(tree, {{V, visits}, {T, tag}}, {.plan = plan}).get();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || tag[i] != i;
    EXPECT_EQ(wrong, 0u);
    std::size_t pieces = 0;
    for (const auto& p : r.partitions) {
      if (p.device != last) EXPECT_EQ(p.units, 0u) << r.str();
      pieces += p.device == last && p.units > 0;
    }
    // The first queue's range in two (its first piece cut: decision 184), the second's whole.
    EXPECT_EQ(pieces, 3u) << r.str();
    if (last > 0) EXPECT_NE(r.decomposition.find("kept out (too slow to help"), std::string::npos) << r.decomposition;
    EXPECT_TRUE(r.steals.empty()) << r.str();
  }
}

// Training measures the steal schedule's plan beside the static and dynamic ones for a tree it
// runs, where its budget leaves the runs (its progress lines name each point measured).
TEST(StealTraining, MeasuresTheStealPlanBesideStaticAndDynamic) {
  if (device_count() < 2) GTEST_SKIP() << "one device: no plan to balance";
  std::vector<std::string> lines;
  RuntimeOptions o;
  o.kb_path = ":memory:";
  // Room beyond the search for every policy's own plan: the default budget keeps one point's runs
  // for them after the search, which on three devices the dynamic schedule's takes.
  o.training.max_executions = 200;
  o.quiet = false;
  o.log = [&](LogLevel, const std::string& line) { lines.push_back(line); };
  Runtime rt(o);
  Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
  Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
  const Node tree = kernel_source(kVisit, "visit", "steal_test.cl").args(inout(V), out(T), offset(T), scalar(cl_uint(0)));
  std::vector<cl_int> visits(100003, 0);
  std::vector<cl_uint> tag(visits.size(), 0);
  rt.run(tree, {{V, visits}, {T, tag}}, {.train = true}).get();
  std::string all;
  bool steal = false, dynamic = false;
  for (const auto& l : lines) {
    all += l + "\n";
    steal = steal || l.find("schedule=steal") != std::string::npos;
    dynamic = dynamic || l.find("schedule=dynamic") != std::string::npos;
  }
  EXPECT_TRUE(steal) << all;
  EXPECT_TRUE(dynamic) << all;
}

INSTANTIATE_TEST_SUITE_P(ZeroCopyAndDiscrete, StealRuns, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });

}  // namespace
