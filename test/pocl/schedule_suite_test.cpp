// The suite every registered schedule policy must pass (decompose/schedule_policy.hpp), on the
// PoCL devices this binary is given (1, 2 or 3), zero-copy and with the last device driven as a
// discrete GPU: every unit visited exactly once under plans of every kind of split, across runs
// of one plan (what a policy learns from run to run), and every shared test tree's results equal
// to its reference — or, for a tree the policy refuses, an error naming the node before any
// device work. A policy registered anywhere is in the suite by its registration: it counts once
// it passes. Here also a throwaway policy registered only in this binary (reverse static), which
// shows that a policy is new files and one registration.
#include "decompose/schedule_policy.hpp"
#include "pocl/reverse_static_schedule.hpp"
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"
#include "tree/analysis.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace sinew;
using namespace sinew::testing;

namespace {

// The one registration line a policy needs.
const bool kReverseStatic =
    (detail::register_schedule_policy(std::make_unique<ReverseStaticSchedule>()), true);

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const detail::SchedulePolicy* p : detail::schedule_policies()) names.emplace_back(p->name());
  return names;
}

// Plans of every kind of split for the suite's devices under schedule `name`: the default, uneven
// shares, a device left out; discrete runs also give the last device three queues, zero-copy ones
// split the first CPU into sub-devices where the machine offers it.
std::vector<std::string> plans(const std::string& name, bool discrete) {
  const std::string s = "schedule=" + name;
  std::vector<std::string> p = {s};
  switch (device_count()) {
    case 1: break;
    case 2: p.insert(p.end(), {"0=0.2,1=0.8," + s, "0=0,1=1," + s}); break;
    default: p.insert(p.end(), {"0=0.2,1=0.5,2=0.3," + s, "0=0.7,1=0,2=0.3," + s}); break;
  }
  if (discrete) {
    p.push_back(s + ",overlap=3");
  } else {
    const auto& fissions = runtime(false).devices().front().fission_configs;
    if (fissions.size() > 1) p.push_back(s + ",fission=" + fissions[1].name);
  }
  return p;
}

const char* kVisitKernel = R"CL(
// Counts each visit of a unit, tags it with its index, and gives the reduction a 1 to add up: a
// unit computed twice shows in `visits` (zero copy: the host's counter) and in the sum (any device).
__kernel void visit(__global int* visits, __global uint* tag, __global uint* one, uint off) {
  size_t i = get_global_id(0);
  atomic_inc(&visits[i]);
  tag[i] = off + (uint)i;
  one[i] = 1;
}
)CL";

// The report's partitions are a partition of [0, n): disjoint and adjacent once sorted.
std::string partitions_cover(const Report& r, std::size_t n) {
  std::vector<PartitionReport> parts = r.partitions;
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t at = 0;
  for (const auto& p : parts) {
    if (p.first != at) return "partition at unit " + std::to_string(p.first) + ", expected " + std::to_string(at);
    at += p.units;
  }
  return at == n ? "" : "the partitions end at " + std::to_string(at) + " of " + std::to_string(n);
}

// The visit-counting map_reduce: one object is one tree (a runtime keeps what a schedule learnt
// of a plan with the tree's prepared state).
struct Visits {
  Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
  Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
  Vector<cl_uint> O = sinew::vector<cl_uint>().name("one");
  Result<cl_uint> total = sinew::result<cl_uint>("total");
  Node tree = map_reduce(kernel_source(kVisitKernel, "visit", "visit.cl").args(inout(V), out(T), out(O), offset(T)),
                         reduce::sum(O, total));

  void run(bool discrete, const std::string& plan, std::size_t n) const {
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu), one(n, 0);
    const Report r = runtime(discrete).run(tree, {{V, visits}, {T, tag}, {O, one}}, {.plan = plan}).get();
    EXPECT_EQ(r.value(total), n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || tag[i] != i;
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(partitions_cover(r, n), "") << r.decomposition;
  }
};

class SchedulePolicies : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(SchedulePolicies, EveryUnitExactlyOnceUnderEveryKindOfSplit) {
  const auto& [name, discrete] = GetParam();
  for (const auto& plan : plans(name, discrete))
    for (std::size_t n : {1u, 7u, 1000u, 65537u, 1000003u}) {
      SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
      Visits().run(discrete, plan, n);
    }
}

TEST_P(SchedulePolicies, RunsOfOnePlanComputeEveryUnitOnce) {
  const auto& [name, discrete] = GetParam();
  const Visits visits;  // one tree for every run: what the policy learnt of the plan stays with it
  for (const auto& plan : plans(name, discrete))
    for (int run = 0; run < 4; ++run) {
      SCOPED_TRACE(plan + ", run " + std::to_string(run) + (discrete ? ", discrete" : ""));
      visits.run(discrete, plan, 100003);
    }
}

// Every shared test tree (pocl/trees.hpp) under the policy's plans equals its reference; a tree
// the policy refuses is refused before any device work, naming a node of the tree.
TEST_P(SchedulePolicies, EveryTestTreeEqualsItsReferenceOrIsRefusedBeforeDeviceWork) {
  const auto& [name, discrete] = GetParam();
  const detail::SchedulePolicy& policy = detail::schedule_policy(name);
  for (const auto& plan : plans(name, discrete))
    for (const auto& tree : case_names())
      for (std::size_t n : {3u, 1001u}) {
        SCOPED_TRACE(plan + ", tree " + tree + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
        Holder h;
        Case c = make_case(tree, n, h);
        const bool accepted = policy.accepts(detail::analyze(*c.tree.impl(), c.bindings));
        if (accepted) {
          c.report = runtime(discrete).run(c.tree, c.bindings, {.plan = plan}).get();
          EXPECT_EQ(c.check(), "") << c.report.decomposition;
          continue;
        }
        const Holder before = h;
        try {
          runtime(discrete).run(c.tree, c.bindings, {.plan = plan}).get();
          ADD_FAILURE() << "ran";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
          EXPECT_FALSE(e.node().empty()) << e.what();
          EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
        EXPECT_EQ(h.a, before.a);  // nothing ran
        EXPECT_EQ(h.b, before.b);
      }
}

INSTANTIATE_TEST_SUITE_P(Registered, SchedulePolicies,
                         ::testing::Combine(::testing::ValuesIn(policy_names()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_discrete" : "_zero_copy");
                         });

// The throwaway policy is in the registry, plans name it, and the suite above ran it.
TEST(SchedulePolicyRegistry, APolicyRegisteredInThisBinaryIsOneOfThem) {
  ASSERT_TRUE(kReverseStatic);
  const auto names = policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "reverse_static"), names.end());
  const Config c = Config::parse("schedule=reverse_static", runtime(false).devices());
  EXPECT_EQ(c.schedule, "reverse_static");
  EXPECT_EQ(&detail::schedule_policy_of(c), detail::find_schedule_policy("reverse_static"));
  // Its plans really place the last device's share first.
  if (device_count() > 1) {
    Holder h;
    Case k = make_case("kernel", 1000, h);
    const Report r = runtime(false).run(k.tree, k.bindings, {.plan = "schedule=reverse_static"}).get();
    const auto first = std::min_element(r.partitions.begin(), r.partitions.end(),
                                        [](const auto& a, const auto& b) { return a.first < b.first; });
    EXPECT_EQ(first->device, device_count() - 1) << r.decomposition;
  }
}

}  // namespace
