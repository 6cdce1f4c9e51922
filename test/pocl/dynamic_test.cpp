// The dynamic schedule (Config::schedule = dynamic) on the PoCL devices this suite is given (1, 2
// or 3), zero-copy and with the last device driven as a discrete GPU: every unit exactly once for
// every chunk policy (guided by equal or uneven weights, a min_chunk, one chunk for everything,
// several queues, a CPU's sub-devices), sizes from one unit to many chunks; pipelines whose chunks
// stay on their device through every stage (a channel between stages, a halo of a vector the tree
// only reads); map_reduce; a device error during the run; the trees that cannot be dynamic.
#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

using namespace sinew;
using sinew::testing::expect_error;

namespace {

using sinew::testing::device_count;
using sinew::testing::runtime;

// Dynamic plans (Config::parse) for the suite's devices: equal weights, uneven ones, a device
// left out, a min_chunk, one chunk for all; discrete runs also give the last device three queues,
// zero-copy ones split the first CPU into sub-devices where the machine offers it.
std::vector<std::string> plans(bool discrete) {
  std::vector<std::string> p = {"schedule=dynamic", "schedule=dynamic,min_chunk=1000",
                                "schedule=dynamic,min_chunk=100000000"};
  switch (device_count()) {
    case 1: break;
    case 2: p.insert(p.end(), {"0=0.2,1=0.8,schedule=dynamic", "0=0,1=1,schedule=dynamic,min_chunk=7"}); break;
    default: p.insert(p.end(), {"0=0.2,1=0.5,2=0.3,schedule=dynamic", "0=0.7,1=0,2=0.3,schedule=dynamic,min_chunk=64"}); break;
  }
  if (discrete) {
    p.push_back(p.front() + ",overlap=3");
  } else {
    const auto& fissions = runtime(false).devices().front().fission_configs;
    if (fissions.size() > 1) p.push_back(p.front() + ",fission=" + fissions[1].name);
  }
  return p;
}

const std::vector<std::size_t> kSizes = {1, 7, 1000, 65537, 1000003};

const char* kKernels = R"CL(
// Counts each visit of a unit, tags it with its index, and gives the reduction a 1 to add up: a
// unit computed twice shows in `visits` (zero copy: the host's counter) and in the sum (any device).
__kernel void visit(__global int* visits, __global uint* tag, __global uint* one, uint off) {
  size_t i = get_global_id(0);
  atomic_inc(&visits[i]);
  tag[i] = off + (uint)i;
  one[i] = 1;
}
__kernel void scale(__global const int* in, __global int* out) { out[get_global_id(0)] = 3 * in[get_global_id(0)] + 1; }
__kernel void twice(__global const int* in, __global int* out) { out[get_global_id(0)] = 2 * in[get_global_id(0)]; }
// Rows of `width` ints read with a halo of one row each side (clamped): the slice's row y is row
// y + 1 of the halo buffer.
__kernel void blur_rows(__global const int* in, __global int* out, uint width) {
  size_t x = get_global_id(0), y = get_global_id(1);
  const __global int* c = in + (y + 1) * width + x;
  out[y * width + x] = c[-(int)width] + 2 * c[0] + 4 * c[width];
}
// Needs work-groups of 64 that Sinew is not told of: the driver refuses every launch.
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void groups_of_64(__global int* v) { v[get_global_id(0)] += 1; }
__kernel void add_one(__global int* v) { v[get_global_id(0)] += 1; }
__kernel void next_minus(__global const int* all, __global int* mine, uint off, uint n) {
  uint i = off + (uint)get_global_id(0);
  mine[get_global_id(0)] = all[(i + 1) % n] - all[i];
}
)CL";

Kernel source(const std::string& entry) { return kernel_source(kKernels, entry, "dynamic_test.cl"); }

// Checks that the report's chunks are a partition of [0, n): disjoint, adjacent once sorted, and
// counted per device as the report says.
std::string chunks_cover(const Report& r, std::size_t n) {
  std::vector<PartitionReport> parts = r.partitions;
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t at = 0, counted = 0;
  for (const auto& p : parts) {
    if (p.first != at || p.units == 0) return "chunk at unit " + std::to_string(p.first) + ", expected " + std::to_string(at);
    at += p.units;
  }
  if (at != n) return "the chunks end at " + std::to_string(at) + " of " + std::to_string(n);
  for (std::size_t d = 0; d < r.chunks.size(); ++d) counted += r.chunk_units[d];
  if (counted != n) return "the report counts " + std::to_string(counted) + " units";
  if (r.chunks.size() != device_count()) return "no chunk count per device";
  return "";
}

// The visit-counting map_reduce. run(): over `n` units by `plan`, every unit visited once and
// tagged with its index, the reduction's total `n`, the chunks a partition of the units; the
// report, for the caller's own checks. One object is one tree (a runtime keeps what it learnt
// about a tree with the tree).
struct Visits {
  Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
  Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
  Vector<cl_uint> O = sinew::vector<cl_uint>().name("one");
  Result<cl_uint> total = sinew::result<cl_uint>("total");
  Node tree = map_reduce(source("visit").args(inout(V), out(T), out(O), offset(T)), reduce::sum(O, total));

  Report run(bool discrete, const std::string& plan, std::size_t n) const {
    std::vector<cl_int> visits(n, 0);
    std::vector<cl_uint> tag(n, 0xFFFFFFFFu), one(n, 0);
    const Report r = runtime(discrete).run(tree, {{V, visits}, {T, tag}, {O, one}}, {.plan = plan}).get();
    EXPECT_EQ(r.value(total), n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += visits[i] != 1 || tag[i] != i;
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(chunks_cover(r, n), "") << r.decomposition;
    return r;
  }
};

class Dynamic : public ::testing::TestWithParam<bool> {};

TEST_P(Dynamic, EveryUnitExactlyOnceForEveryChunkPolicy) {
  const bool discrete = GetParam();
  for (const auto& plan : plans(discrete))
    for (std::size_t n : kSizes) {
      SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
      const Report r = Visits().run(discrete, plan, n);
      ASSERT_EQ(r.config.schedule, "dynamic");
      EXPECT_NE(r.decomposition.find("taken:"), std::string::npos) << r.decomposition;
      if (plan.find("min_chunk=100000000") != std::string::npos) EXPECT_EQ(r.partitions.size(), 1u);
      // A device with share 0 takes nothing.
      if (plan.find("1=0,") != std::string::npos) EXPECT_EQ(r.chunks.at(1), 0u);
      if (plan.find("0=0,") != std::string::npos) EXPECT_EQ(r.chunks.at(0), 0u);
    }
}

TEST_P(Dynamic, PipelineChunksStayOnTheirDevice) {
  // Three stages joined by channels nobody binds (they exist only on the chunk's device), the
  // first reading a halo of the input: wrong if any stage ran a chunk elsewhere or not at all.
  const bool discrete = GetParam();
  const std::size_t width = 33;
  for (const auto& plan : plans(discrete))
    for (std::size_t rows : {1u, 5u, 3001u}) {
      SCOPED_TRACE(plan + ", " + std::to_string(rows) + " rows" + (discrete ? ", discrete" : ""));
      const std::size_t n = rows * width;
      auto I = sinew::vector<cl_int>().unit(width).name("in");
      auto A = sinew::vector<cl_int>().unit(width).name("a");
      auto B = sinew::vector<cl_int>().unit(width).name("b");
      auto R = sinew::vector<cl_int>().unit(width).name("r");
      std::vector<cl_int> input(n), output(n, -1);
      for (std::size_t i = 0; i < n; ++i) input[i] = static_cast<cl_int>((i * 7919) % 1000) - 500;
      const Node tree =
          pipeline(source("blur_rows").args(halo(I, 1, 1, Boundary::clamp), out(A), scalar(cl_uint(width))).dims(2),
                   source("scale").args(in(A), out(B)), source("twice").args(in(B), out(R)));
      const Report r = runtime(discrete).run(tree, {{I, input}, {R, output}}, {.plan = plan}).get();
      std::size_t wrong = 0;
      for (std::size_t y = 0; y < rows; ++y)
        for (std::size_t x = 0; x < width; ++x) {
          auto at = [&](std::size_t row) { return input[std::min(row, rows - 1) * width + x]; };
          const int blur = at(y == 0 ? 0 : y - 1) + 2 * at(y) + 4 * at(y + 1);
          wrong += output[y * width + x] != 2 * (3 * blur + 1);
        }
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(chunks_cover(r, rows), "");
    }
}

TEST_P(Dynamic, AVectorReadWholeReachesEveryChunk) {
  // A replica per context, filled once before any chunk runs; each chunk reads it at its offset.
  const bool discrete = GetParam();
  for (const auto& plan : plans(discrete))
    for (std::size_t n : {1u, 1000u, 100003u}) {
      SCOPED_TRACE(plan + ", " + std::to_string(n) + (discrete ? ", discrete" : ""));
      auto All = sinew::vector<cl_int>().name("all");
      auto Mine = sinew::vector<cl_int>().name("mine");
      std::vector<cl_int> all(n), mine(n, 0);
      for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<cl_int>((i * 7919) % 1000);
      const Node tree = source("next_minus").args(whole(All), out(Mine), offset(Mine), size(All));
      const Report r = runtime(discrete).run(tree, {{All, all}, {Mine, mine}}, {.plan = plan}).get();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += mine[i] != all[(i + 1) % n] - all[i];
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(chunks_cover(r, n), "");
    }
}

TEST_P(Dynamic, MapReduceSumsOverChunks) {
  const bool discrete = GetParam();
  for (const auto& plan : plans(discrete)) {
    SCOPED_TRACE(plan);
    const std::size_t n = 300007;
    auto X = sinew::vector<cl_int>().name("x");
    auto Y = sinew::vector<cl_int>().name("y");
    auto low = sinew::result<cl_int>("low");
    std::vector<cl_int> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<cl_int>((i * 2654435761u) % 2001) - 1000;
    const Node simple = map_reduce(source("scale").args(in(X), out(Y)), reduce::min(Y, low));
    const Report r = runtime(discrete).run(simple, {{X, x}, {Y, y}}, {.plan = plan}).get();
    cl_int want = *std::min_element(x.begin(), x.end()) * 3 + 1;
    EXPECT_EQ(r.value(low), want);
    for (std::size_t i = 0; i < n; i += 997) EXPECT_EQ(y[i], 3 * x[i] + 1);
    EXPECT_EQ(chunks_cover(r, n), "");
  }
}

// The stop rule: a device weighted 1/10000 of the others would end even its least chunk after
// they had done everything, so it takes none; the others run every unit exactly once (through a
// pipeline with a channel, so a chunk skipped or doubled shows in the output).
// Runs of one plan after the first start from the rates the run before measured (and a device
// they keep out takes its least chunk as a probe): every unit still exactly once in each.
TEST_P(Dynamic, RunsOfOnePlanStartFromTheLastRunsRatesAndComputeEveryUnitOnce) {
  const bool discrete = GetParam();
  const std::string plan = device_count() == 1 ? "schedule=dynamic"
                           : device_count() == 2 ? "0=0.5,1=0.5,schedule=dynamic"
                                                 : "0=0.4,1=0.3,2=0.3,schedule=dynamic";
  const std::size_t n = 100003;
  const Visits visits;  // one tree for every run
  for (int run = 0; run < 5; ++run) {
    SCOPED_TRACE(plan + ", run " + std::to_string(run) + (discrete ? ", discrete" : ""));
    visits.run(discrete, plan, n);
  }
}

// The first device too slow to count: the last runs the tree as its static split would (on a
// discrete device: its chunks cut at the start, one per queue here, each queue streaming them).
TEST_P(Dynamic, ADeviceLeftAloneRunsEveryUnitOnceOnItsQueues) {
  if (device_count() < 2) GTEST_SKIP() << "one device";
  const bool discrete = GetParam();
  const std::string plan = device_count() == 2 ? "0=0.0001,1=0.9999,overlap=2,schedule=dynamic"
                                               : "0=0.0001,1=0.0001,2=0.9998,overlap=2,schedule=dynamic";
  const std::size_t last = device_count() - 1;
  for (std::size_t n : {1u, 1000u, 100003u}) {
    SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
    const Report r = Visits().run(discrete, plan, n);
    EXPECT_EQ(r.chunk_units.at(last), n) << r.decomposition;
    // Discrete, the static split's chunks: one per queue where there are units for two.
    if (discrete && n > 1) EXPECT_EQ(r.chunks.at(last), 2u) << r.decomposition;
    // ... and only its queues are the run's workers: the others, which would take nothing, hold no
    // host thread and make no CPU work for its waits to nap beside (Report::device_ms 0).
    if (discrete && n > 1)
      for (std::size_t d = 0; d < last; ++d) EXPECT_EQ(r.device_ms.at(d), 0.0) << "device " << d;
  }
}

TEST_P(Dynamic, ADeviceTooSlowToHelpTakesNoChunk) {
  if (device_count() < 2) GTEST_SKIP() << "one device";
  const bool discrete = GetParam();
  const std::string plan = device_count() == 2 ? "0=0.0001,1=0.9999,schedule=dynamic"
                                               : "0=0.0001,1=0.5,2=0.4999,schedule=dynamic";
  for (std::size_t n : {1u, 1000u, 4099u}) {
    SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
    auto X = sinew::vector<cl_int>().name("x");
    auto M = sinew::vector<cl_int>().name("mid");
    auto Y = sinew::vector<cl_int>().name("y");
    std::vector<cl_int> x(n), y(n, -1);
    std::iota(x.begin(), x.end(), -17);
    const Node tree = pipeline(source("scale").args(in(X), out(M)), source("twice").args(in(M), out(Y)));
    const Report r = runtime(discrete).run(tree, {{X, x}, {Y, y}}, {.plan = plan}).get();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += y[i] != 2 * (3 * x[i] + 1);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(chunks_cover(r, n), "");
    EXPECT_EQ(r.chunks.at(0), 0u) << r.decomposition;
    // Out from the start: no worker, no time (its thread would have held the calling thread).
    EXPECT_EQ(r.device_ms.at(0), 0.0);
    // The report says it was kept out, not that it stopped on the way (with three devices, one of
    // the other two may stop near the end).
    if (n > 1) {
      EXPECT_NE(r.decomposition.find(runtime(discrete).devices().front().id() + " kept out"), std::string::npos)
          << r.decomposition;
      if (device_count() == 2)
        EXPECT_EQ(r.decomposition.find("stopped taking chunks early"), std::string::npos) << r.decomposition;
    }
  }
}

TEST_P(Dynamic, ADeviceErrorDuringTheRunReachesTheFutureAndNothingIsStored) {
  const bool discrete = GetParam();
  const auto kb = std::filesystem::temp_directory_path() /
                  ("sinew-dynamic-" + std::to_string(::getpid()) + (discrete ? "-d" : "-z") + ".sqlite");
  std::filesystem::remove(kb);
  RuntimeOptions options{.kb_path = kb.string()};
  if (discrete) options.discrete = std::to_string(device_count() - 1);
  {
    Runtime rt(options);
    auto V = sinew::vector<cl_int>().name("v");
    // The kernel runs only in work-groups of 64 (which Sinew does not know): the driver refuses
    // its launch on the worker's queue, once the run's workers are taking chunks.
    std::vector<cl_int> v((1u << 14) - 1, 1);
    const Node tree = source("groups_of_64").args(inout(V));
    auto given = rt.run(tree, {{V, v}}, {.plan = "schedule=dynamic,min_chunk=64"});
    try {
      given.get();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CL_INVALID_WORK_GROUP_SIZE"), std::string::npos) << e.what();
    }
    auto planned = rt.run(tree, {{V, v}});  // the knowledge base would train and store a plan
    EXPECT_THROW(planned.get(), Error);
    auto store = KnowledgeBase::open(kb.string());
    EXPECT_TRUE(store->entries_for_tree(tree.signature()).empty());
    EXPECT_TRUE(store->runs_for_tree(tree.signature()).empty());
  }
  std::filesystem::remove(kb);
}

TEST_P(Dynamic, AnErrorAfterSomeChunksRanStopsTheRunAndReachesTheFuture) {
  // A kernel in work-groups of a multiple of 64 (Sinew checks each partition's range, and the
  // granule does not ask for it) over 300 * 64 units on the first device alone, chunks of at least
  // 64: the large first chunks (round binary numbers) run, a later one of 96 units is refused as
  // its worker takes it.
  const bool discrete = GetParam();
  Runtime& rt = runtime(discrete);
  auto V = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> v(300 * 64, 1);
  const Node tree = source("add_one").args(inout(V)).local_multiple(64);
  auto run = rt.run(tree, {{V, v}}, {.plan = "0=1,schedule=dynamic,min_chunk=64"});
  try {
    run.get();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no work-group size that is a multiple of 64"), std::string::npos) << e.what();
    EXPECT_NE(e.node().find("add_one"), std::string::npos) << e.what();
  }
  // On a zero-copy device the chunks before it are in the host memory; nothing after it ran.
  if (!rt.devices().front().discrete) {
    const auto done = std::find(v.begin(), v.end(), 1) - v.begin();
    EXPECT_GE(done, 300 * 64 / 2);
    EXPECT_LT(done, 300 * 64);
    EXPECT_EQ(done % 64, 0);
    EXPECT_EQ(std::count(v.begin() + done, v.end(), 1), 300 * 64 - done);
  }
  // The runtime goes on: the same tree with chunks it can run.
  std::fill(v.begin(), v.end(), 1);
  rt.run(tree, {{V, v}}, {.plan = "0=1,schedule=dynamic,min_chunk=4800"}).get();
  EXPECT_EQ(std::count(v.begin(), v.end(), 2), static_cast<std::ptrdiff_t>(v.size()));
}

TEST_P(Dynamic, TreesWhosePartitionsMeetAreRefusedBeforeDeviceWork) {
  const bool discrete = GetParam();
  Runtime& rt = runtime(discrete);
  auto V = sinew::vector<cl_int>().name("v");
  auto W = sinew::vector<cl_int>().name("w");
  std::vector<cl_int> v(1000, 5), w(1000, 0);
  const RunOptions dynamic{.plan = "schedule=dynamic"};
  // A scan carries totals from partition to partition.
  expect_error([&] { rt.run(scan(V, scan_op::sum()), {{V, v}}, dynamic); }, {"scan", "scan", "dynamic schedule"});
  // A vector read whole while the tree writes it: replicas re-synchronised mid-run.
  const Node whole_written = pipeline(source("twice").args(in(W), out(V)),
                                      kernel_source("__kernel void k(__global const int* all, __global int* mine) "
                                                    "{ mine[get_global_id(0)] += all[0]; }", "k", "k.cl")
                                          .args(whole(V), inout(W)));
  expect_error([&] { rt.run(whole_written, {{V, v}, {W, w}}, dynamic); }, {"k", "vector 'v'", "dynamic schedule"});
  // A loop whose predicate reads every partition's value each iteration.
  auto m = sinew::result<cl_int>("m");
  const Node looped = loop(map_reduce(source("twice").args(in(V), out(W)), reduce::max(W, m)))
                          .until(m, [](cl_int) { return true; })
                          .times(3);
  expect_error([&] { rt.run(looped, {{V, v}, {W, w}}, dynamic); }, {"loop", "loop", "dynamic schedule"});
  for (const auto& x : v) EXPECT_EQ(x, 5);  // nothing ran
}

INSTANTIATE_TEST_SUITE_P(Modes, Dynamic, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Discrete" : "ZeroCopy"; });

}  // namespace
