// sinew::divide_and_conquer against plain C++: mergesort (samples/kernels/mergesort.cl) of uint and
// float keys equals std::sort for sizes that are and are not powers of two (and not multiples of
// the leaf), all-equal keys, sorted and reversed input, fan-outs 2, 3 and 4, on the PoCL devices
// this suite is given (1, 2 or 3), zero-copy and with the last device driven as a discrete GPU,
// at every crossover level with each device as the crossover device; a k-way max reduction
// (every subproblem's maximum at its first element) against std::max_element; Report::levels;
// the bad inputs refused before device work.
#include "common/kernels.hpp"

#include <sinew/sinew.hpp>

#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

#include "unit/expect_error.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace sinew;

namespace {

using sinew::testing::device_count;
using sinew::testing::runtime;

// Shares for the suite's devices: each device alone, uneven splits, a device with share 0.
std::vector<std::string> shares() {
  switch (device_count()) {
    case 1: return {"0=1"};
    case 2: return {"0=1,1=0", "0=0,1=1", "0=0.3,1=0.7"};
    default: return {"0=1,1=1,2=1", "0=0.2,1=0,2=0.8", "2=1"};
  }
}

template <class T>
std::vector<T> keys_of(std::size_t n, std::uint64_t seed = 1) {
  std::vector<T> v(n);
  std::uint64_t s = 0x9e3779b97f4a7c15ULL * seed;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(static_cast<std::int64_t>(s >> 40) - (1 << 23)) / T(977);
    else x = static_cast<T>(s >> 32);
  }
  return v;
}

template <class T>
Node mergesort(const Vector<T>& v, std::size_t fanout, std::size_t leaf) {
  const std::string max = std::is_floating_point_v<T> ? "INFINITY" : "UINT_MAX";
  return divide_and_conquer(v, samples::kernel("mergesort.cl", "sort_leaf").build_options("-DSINEW_KEY_MAX=" + max),
                            samples::kernel("mergesort.cl", "merge_runs"), {.fanout = fanout, .leaf_size = leaf});
}

std::size_t levels(std::size_t n, std::size_t fanout, std::size_t leaf) {
  std::size_t l = 1;
  for (std::size_t s = leaf; s < n; s *= fanout) ++l;
  return l;
}

// Sorts `data` with `plan` and compares with std::sort; "" when equal.
template <class T>
std::string sort_check(bool discrete, const std::string& plan, std::vector<T> data, std::size_t fanout,
                       std::size_t leaf) {
  std::vector<T> want = data;
  std::sort(want.begin(), want.end());
  auto v = sinew::vector<T>().name("keys");
  Report r = runtime(discrete).run(mergesort(v, fanout, leaf), {{v, data}}, {.plan = plan}).get();
  for (std::size_t i = 0; i < data.size(); ++i)
    if (data[i] != want[i])
      return "element " + std::to_string(i) + " of " + std::to_string(data.size()) + ": got " +
             std::to_string(data[i]) + ", want " + std::to_string(want[i]) + "\n" + r.str();
  return "";
}

// Every share plan x every crossover level (0 .. levels) x every crossover device, both modes.
template <class T>
void every_plan(const std::vector<T>& data, std::size_t fanout, std::size_t leaf) {
  const std::size_t l = levels(data.size(), fanout, leaf);
  for (const bool discrete : {false, true})
    for (const auto& s : shares())
      for (std::size_t c = 0; c <= l; ++c)
        for (std::size_t u = 0; u < device_count(); ++u) {
          const std::string plan = s + ",crossover=" + std::to_string(c) + ",upper=" + std::to_string(u);
          EXPECT_EQ(sort_check(discrete, plan, data, fanout, leaf), "")
              << (discrete ? "discrete " : "zero-copy ") << plan << " n=" << data.size() << " k=" << fanout;
        }
}

}  // namespace

TEST(DivideAndConquer, MergesortOfUintKeysAtEveryCrossover) {
  every_plan(keys_of<cl_uint>(1 << 14), 2, 256);  // a power of two
  every_plan(keys_of<cl_uint>(3 * 256 * 5 + 17), 2, 256);  // not one, nor a multiple of the leaf
}

TEST(DivideAndConquer, MergesortOfFloatKeysWithOtherFanouts) {
  every_plan(keys_of<cl_float>(10007), 3, 128);
  every_plan(keys_of<cl_float>(1 << 13), 4, 64);
}

TEST(DivideAndConquer, SmallAndDegenerateInputs) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{255}, std::size_t{256}, std::size_t{257}})
    every_plan(keys_of<cl_uint>(n, n), 2, 256);
  every_plan(std::vector<cl_uint>(5000, 42u), 2, 256);  // all equal
  std::vector<cl_uint> sorted = keys_of<cl_uint>(6000);
  std::sort(sorted.begin(), sorted.end());
  every_plan(sorted, 2, 256);
  std::vector<cl_uint> reversed(sorted.rbegin(), sorted.rend());
  every_plan(reversed, 4, 256);
  std::vector<cl_uint> extremes = {std::numeric_limits<cl_uint>::max(), 0u, 7u, std::numeric_limits<cl_uint>::max(), 1u};
  every_plan(extremes, 2, 4);  // keys equal to the padding sentinel
}

TEST(DivideAndConquer, ReportListsEveryLevel) {
  const std::size_t n = 4096 * 3, leaf = 256;
  for (const bool discrete : {false, true}) {
    auto data = keys_of<cl_uint>(n);
    auto v = sinew::vector<cl_uint>().name("keys");
    const std::string plan = shares().back() + ",crossover=2,upper=0";
    Report r = runtime(discrete).run(mergesort(v, 2, leaf), {{v, data}}, {.plan = plan}).get();
    EXPECT_TRUE(std::is_sorted(data.begin(), data.end()));
    ASSERT_EQ(r.levels.size(), levels(n, 2, leaf)) << r.str();
    std::vector<std::size_t> split_devices;
    std::uint64_t elsewhere = 0;  // keys of parts not in the crossover device's (host) memory
    for (const auto& p : r.partitions) {
      if (p.units == 0) continue;
      if (std::find(split_devices.begin(), split_devices.end(), p.device) == split_devices.end())
        split_devices.push_back(p.device);
      if (discrete && p.device == device_count() - 1) elsewhere += p.units * sizeof(cl_uint);
    }
    std::sort(split_devices.begin(), split_devices.end());
    const bool crossing = split_devices != std::vector<std::size_t>{0};
    for (std::size_t l = 0; l < r.levels.size(); ++l) {
      const auto& level = r.levels[l];
      EXPECT_EQ(level.level, l);
      EXPECT_EQ(level.subproblem, std::min(leaf << l, n));
      EXPECT_EQ(level.subproblems, (n + (leaf << l) - 1) / (leaf << l));
      EXPECT_GE(level.ms, 0);
      EXPECT_EQ(level.devices, l < 2 || !crossing ? split_devices : std::vector<std::size_t>{0}) << r.str();
      // The crossover device (a zero-copy CPU) works in the user's memory: every part comes from
      // its scratch buffer there before level 2 (one combine level since the leaves), and only
      // the discrete device's part goes back after the top level.
      std::uint64_t want = 0;
      if (crossing && l == 2) want += n * sizeof(cl_uint);
      if (crossing && l + 1 == r.levels.size()) want += elsewhere;
      EXPECT_EQ(level.bytes, want) << "level " << l << "\n" << r.str();
    }
    EXPECT_NE(r.str().find("level 0"), std::string::npos) << r.str();
  }
}

// A discrete crossover device takes its own part by a device copy and gives it back the same way:
// only the other devices' parts cross the host. The others are zero-copy CPUs: at level 2 their
// parts come from their scratch buffers (one combine level since the leaves) through the host to
// the crossover device, and after the top level the result goes straight into the user's memory
// that their slices are.
TEST(DivideAndConquer, ADiscreteCrossoverDeviceMovesOnlyTheOtherDevicesParts) {
  if (device_count() < 2) GTEST_SKIP() << "needs a device beside the crossover device";
  const std::size_t n = 4096 * 3, leaf = 256;
  auto data = keys_of<cl_uint>(n);
  auto expected = data;
  std::sort(expected.begin(), expected.end());
  auto v = sinew::vector<cl_uint>().name("keys");
  const std::size_t upper = device_count() - 1;  // the discrete one
  const std::string split = device_count() == 2 ? "0=0.3,1=0.7" : "0=0.2,1=0.3,2=0.5";
  const std::string plan = split + ",crossover=2,upper=" + std::to_string(upper);
  Report r = runtime(true).run(mergesort(v, 2, leaf), {{v, data}}, {.plan = plan}).get();
  EXPECT_EQ(data, expected);
  std::uint64_t others = 0;  // keys of parts on devices other than the crossover device
  for (const auto& p : r.partitions)
    if (p.units && p.device != upper) others += p.units * sizeof(cl_uint);
  ASSERT_GT(others, 0u) << r.str();
  ASSERT_EQ(r.levels.size(), levels(n, 2, leaf)) << r.str();
  EXPECT_EQ(r.levels[2].bytes, 2 * others) << r.str();
  EXPECT_EQ(r.levels.back().bytes, others) << r.str();
}

// A second divide-and-conquer computation: each subproblem's maximum at its first element. The
// leaf folds its elements serially; a combine keeps the first element of each group of `fanout`
// runs as the max of theirs (the other elements copied as they are).
TEST(DivideAndConquer, KWayMaximum) {
  const char* src = R"CL(
__kernel void leaf_max(__global SINEW_T* d, uint n, uint leaf) {
  if (get_local_id(0) != 0) return;
  const uint first = get_group_id(0) * leaf, end = min(first + leaf, n);
  SINEW_T m = d[first];
  for (uint i = first + 1; i < end; ++i) m = max(m, d[i]);
  d[first] = m;
}
__kernel void combine_max(__global const SINEW_T* src, __global SINEW_T* dst, uint n, uint run, uint k) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const ulong group = (ulong)run * k;
  if (i % group != 0) { dst[i] = src[i]; return; }
  SINEW_T m = src[i];
  for (ulong a = i + (ulong)run; a < n && a < i + group; a += run) m = max(m, src[a]);
  dst[i] = m;
}
)CL";
  for (const bool discrete : {false, true})
    for (const auto& s : shares())
      for (std::size_t c : {0, 1, 2, 4}) {
        auto data = keys_of<cl_int>(50000, c + 3);
        const cl_int want = *std::max_element(data.begin(), data.end());
        auto v = sinew::vector<cl_int>().name("x");
        const std::string plan = s + ",crossover=" + std::to_string(c);
        runtime(discrete)
            .run(divide_and_conquer(v, kernel_source(src, "leaf_max"), kernel_source(src, "combine_max"),
                                    {.fanout = 5, .leaf_size = 100}),
                 {{v, data}}, {.plan = plan})
            .get();
        EXPECT_EQ(data[0], want) << plan;
      }
}

TEST(DivideAndConquer, BadInputsAreRefusedBeforeDeviceWork) {
  using sinew::testing::expect_error;
  auto v = sinew::vector<cl_uint>().name("keys");
  std::vector<cl_uint> data = {3, 2, 1};
  const std::vector<cl_uint> before = data;
  auto run = [&](const Node& tree) { runtime(false).run(tree, {{v, data}}, {.plan = shares().front()}).get(); };
  auto leaf = [] { return samples::kernel("mergesort.cl", "sort_leaf"); };
  auto merge = [] { return samples::kernel("mergesort.cl", "merge_runs"); };
  expect_error([&] { run(divide_and_conquer(v, leaf(), merge(), {.fanout = 1, .leaf_size = 2})); },
               {"divide_and_conquer", "fanout", "fan-out of 1"});
  expect_error([&] { run(divide_and_conquer(v, leaf(), merge(), {.fanout = 2, .leaf_size = 0})); },
               {"divide_and_conquer", "leaf_size", "a leaf of 0 elements"});
  // A combine kernel with the leaf's parameters, and one whose output is const.
  expect_error([&] { run(divide_and_conquer(v, leaf(), leaf(), {.fanout = 2, .leaf_size = 2})); },
               {"combine", "parameters", "has 4 parameters, not the skeleton's 5"});
  const char* const_out = R"CL(
__kernel void c(__global const uint* s, __global const uint* d, uint n, uint r, uint k) {}
__kernel void f(__global uint* s, __global uint* d, uint n, uint r, uint k) {}
__kernel void l(__global uint* d, float n, uint leaf) {}
)CL";
  expect_error([&] { run(divide_and_conquer(v, leaf(), kernel_source(const_out, "c"), {.fanout = 2, .leaf_size = 2})); },
               {"combine", "argument 1", "read-only"});
  expect_error([&] { run(divide_and_conquer(v, kernel_source(const_out, "l"), merge(), {.fanout = 2, .leaf_size = 2})); },
               {"leaf", "argument 1", "uint but the kernel parameter is float"});
  // Keys of another type than the kernel's pointer.
  auto fv = sinew::vector<cl_float>().name("f");
  std::vector<cl_float> fdata = {1.f};
  expect_error(
      [&] {
        runtime(false)
            .run(divide_and_conquer(fv, leaf(), kernel_source(const_out, "f"), {.fanout = 2, .leaf_size = 2}),
                 {{fv, fdata}}, {.plan = shares().front()})
            .get();
      },
      {"combine", "argument 0", "holds float but the kernel parameter is uint*"});
  // Arguments given to a kernel the skeleton calls itself.
  expect_error([&] { run(divide_and_conquer(v, leaf().args(inout(v)), merge(), {.fanout = 2, .leaf_size = 2})); },
               {"leaf", "arguments", "passes them itself"});
  // A leaf too large for the device's local memory (the leaf kernel takes __local scratch).
  expect_error([&] { run(divide_and_conquer(v, leaf(), merge(), {.fanout = 2, .leaf_size = std::size_t{1} << 28})); },
               {"divide_and_conquer", "leaf_size", "local scratch"});
  // Plan items a plan may not hold.
  expect_error([&] { (void)Config::parse("crossover=41", runtime(false).devices()); },
               {"", "config item 'crossover=41'", "crossover takes a level from 0 to 40"});
  expect_error([&] { (void)Config::parse("upper=7", runtime(false).devices()); },
               {"", "plan 'upper=7'", "upper device 7 is not one of the"});
  EXPECT_EQ(data, before);
}

// With no plan the knowledge base (in memory for tests) trains one: the crossover sweep over
// these devices; the plan it keeps names a crossover and sorts like every other.
TEST(DivideAndConquer, TrainedPlanNamesACrossoverAndSorts) {
  auto data = keys_of<cl_uint>(1 << 15, 9);
  std::vector<cl_uint> want = data;
  std::sort(want.begin(), want.end());
  auto v = sinew::vector<cl_uint>().name("keys");
  Report r = runtime(false).run(mergesort(v, 2, 256), {{v, data}}).get();
  EXPECT_EQ(r.provenance, Provenance::trained) << r.str();
  EXPECT_TRUE(r.config.item("crossover").has_value()) << r.str();
  EXPECT_TRUE(r.config.item("upper").has_value()) << r.str();
  EXPECT_GE(r.training_executions, device_count()) << r.str();
  // The HPU model's own choice, with its prediction and measured time, reaches the report.
  ASSERT_TRUE(r.model_choice.has_value()) << r.str();
  EXPECT_TRUE(r.model_choice->config.item("crossover").has_value()) << r.str();
  EXPECT_GT(r.model_choice->measured_ms, 0.0) << r.str();
  EXPECT_NE(r.str().find("training's model chose"), std::string::npos) << r.str();
  EXPECT_EQ(data, want);
  // The stored plan is used as it is the next time.
  data = keys_of<cl_uint>(1 << 15, 10);
  want = data;
  std::sort(want.begin(), want.end());
  Report again = runtime(false).run(mergesort(v, 2, 256), {{v, data}}).get();
  EXPECT_EQ(again.provenance, Provenance::knowledge_base) << again.str();
  EXPECT_EQ(again.config, r.config);
  EXPECT_EQ(data, want);
  // The balancer leaves it alone (the crossover device finishes last by design).
  for (int i = 0; i < 6; ++i) {
    data = keys_of<cl_uint>(1 << 15, 11 + i);
    Report later = runtime(false).run(mergesort(v, 2, 256), {{v, data}}).get();
    EXPECT_EQ(later.config, r.config) << later.str();
    EXPECT_EQ(later.execution, 0u) << later.str();
    EXPECT_TRUE(std::is_sorted(data.begin(), data.end()));
  }
  // An unseen size: derived from the stored one (the model's runs, its plan and the stored plan
  // measured) or trained, by the knowledge base's policy; either way a crossover, and sorted.
  data = keys_of<cl_uint>((1 << 14) + 5, 30);
  want = data;
  std::sort(want.begin(), want.end());
  Report other = runtime(false).run(mergesort(v, 2, 256), {{v, data}}).get();
  EXPECT_TRUE(other.provenance == Provenance::derived || other.provenance == Provenance::trained) << other.str();
  EXPECT_TRUE(other.config.item("crossover").has_value()) << other.str();
  EXPECT_EQ(data, want);
}
