// The discrete devices of one platform in one OpenCL context (RuntimeOptions::shared_context,
// docs/decisions/174), on three PoCL devices with cpu:1 and cpu:2 driven like GPUs (cpu:0 stays
// zero-copy, in a context of its own): a halo loop, a loop reading a replica and a whole leaf give
// the one-device results bit for bit, with the poison check; what moves between cpu:1 and cpu:2
// moves on the devices, and through the host with the option off (a context per device); a
// program built for one device of a shared context is never handed to another.
#include "platform/program_cache.hpp"
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace sinew;
using namespace sinew::testing;

namespace {

constexpr const char* kKernels = R"CL(
__kernel void bump(__global int* a, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  a[y * cols + x] = a[y * cols + x] * 3 + (int)x;
}
// b = a transposed: row y of a becomes column y of b, outside any slice of b's rows.
__kernel void transpose(__global const int* a, __global int* b, uint rows, uint cols) {
  size_t x = get_global_id(0), y = get_global_id(1);
  b[x * rows + y] = a[y * cols + x];
}
)CL";

// cpu:1 and cpu:2 discrete, sharing a context or (shared = false) each in its own.
Runtime& two_discrete(bool shared) {
  static Runtime in_one(RuntimeOptions{.discrete = "cpu:1,cpu:2", .shared_context = true, .poison_check = true});
  static Runtime apart(RuntimeOptions{.discrete = "cpu:1,cpu:2", .shared_context = false, .poison_check = true});
  return shared ? in_one : apart;
}

Config shares(std::vector<double> s) {
  Config c;
  c.shares = std::move(s);
  return c;
}

// loop(pipeline(stencil_rows(halo(img, 1, 1, constant 5) -> out), copy(out -> img))): the grid
// after `iterations` steps, and the run's report.
struct HeatRun {
  std::vector<int> img;
  Report report;
};
HeatRun heat(Runtime& rt, const Config& config, std::size_t rows = 64, std::size_t width = 32,
             std::size_t iterations = 6) {
  HeatLike loop_run(rows, width, iterations);
  HeatRun h;
  h.report = loop_run.run(rt, config);
  h.img = std::move(loop_run.img);
  return h;
}

// loop(pipeline(neighbours(whole(a) -> next), copy(next -> a))): every partition reads all of a
// each step (a replica per device, refreshed from the slices between steps).
struct ReplicaRun {
  std::vector<int> a;
  Report report;
};
ReplicaRun replica_loop(Runtime& rt, const Config& config, std::size_t n = 4096, int steps = 4) {
  ReplicaRun r;
  r.a.resize(n);
  for (std::size_t i = 0; i < n; ++i) r.a[i] = static_cast<int>((i * 7919) % 1000) - 500;
  std::vector<int> next(n, 0);
  auto A = sinew::vector<cl_int>().name("a");
  auto N = sinew::vector<cl_int>().name("next");
  auto body = pipeline(kernel_source(kTestKernels, "neighbours", "t.cl").args(whole(A), out(N), offset(A), size(A)),
                       copy(N, A));
  r.report = rt.run(loop(body).times(steps), {{A, r.a}, {N, next}}, RunOptions{.config = config}).get();
  return r;
}

// pipeline(bump(inout a), transpose(in a, out b).whole_range()) over a square grid: the
// transpose runs once, whole, on the device with the largest share.
struct WholeRun {
  std::vector<int> b;
  Report report;
};
WholeRun transposed(Runtime& rt, const Config& config, std::size_t side = 48) {
  std::vector<int> a(side * side);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>((i * 13) % 97) - 40;
  WholeRun w;
  w.b.assign(a.size(), 0);
  auto va = sinew::vector<cl_int>().name("a").unit(side), vb = sinew::vector<cl_int>().name("b").unit(side);
  const auto n = static_cast<cl_uint>(side);
  auto bump = kernel_source(kKernels, "bump", "whole.cl").args(inout(va), scalar(n)).dims(2);
  auto transpose = kernel_source(kKernels, "transpose", "whole.cl").args(in(va), out(vb), scalar(n), scalar(n)).dims(2);
  transpose.whole_range();
  w.report = rt.run(pipeline(bump, transpose), {{va, a}, {vb, w.b}}, RunOptions{.config = config}).get();
  return w;
}

bool three_devices() { return device_count() >= 3; }

}  // namespace

// The halo rows between cpu:1 and cpu:2 move on the devices in one context: every exchange's
// bytes, none through the host; a context per device sends them all through the host. The grid
// is the one device's bit for bit either way, and with cpu:0 in the run (its own context) only
// the rows across its boundary go through the host.
TEST(SharedContext, HaloRowsMoveBetweenTheDiscreteDevicesOnTheDevices) {
  if (!three_devices()) GTEST_SKIP() << "needs three PoCL devices";
  const HeatRun alone = heat(two_discrete(true), Config::single(1, 3));
  for (bool shared : {true, false}) {
    const HeatRun split = heat(two_discrete(shared), shares({0, 0.5, 0.5}));
    EXPECT_EQ(compare_int(split.img, alone.img), "") << "shared " << shared;
    const Report& r = split.report;
    ASSERT_EQ(r.exchanges.size(), 5u) << r.str();  // iteration 0 reads the uploaded halo
    for (const auto& e : r.exchanges) {
      EXPECT_EQ(e.bytes, 2u * 32 * sizeof(cl_int)) << r.str();  // one row each way
      EXPECT_EQ(e.host_bytes, shared ? 0u : e.bytes) << "shared " << shared << "\n" << r.str();
    }
    const HeatRun three = heat(two_discrete(shared), shares({0.25, 0.375, 0.375}));
    EXPECT_EQ(compare_int(three.img, alone.img), "") << "shared " << shared;
    for (const auto& e : three.report.exchanges) {
      ASSERT_EQ(e.bytes, 4u * 32 * sizeof(cl_int)) << three.report.str();  // two boundaries
      EXPECT_EQ(e.host_bytes, shared ? e.bytes / 2 : e.bytes) << "shared " << shared << "\n" << three.report.str();
    }
  }
}

// A replica read whole every step is refreshed from the other discrete device's slice on the
// device in one context: the loop moves nothing between the host and the devices, while a
// context per device refreshes it through the host; the result is the one device's bit for bit.
TEST(SharedContext, ReplicasAreRefreshedBetweenTheDiscreteDevicesOnTheDevices) {
  if (!three_devices()) GTEST_SKIP() << "needs three PoCL devices";
  const ReplicaRun alone = replica_loop(two_discrete(true), Config::single(2, 3));
  for (bool shared : {true, false}) {
    const ReplicaRun split = replica_loop(two_discrete(shared), shares({0, 0.5, 0.5}));
    EXPECT_EQ(compare_int(split.a, alone.a), "") << "shared " << shared;
    const Copies& loop = split.report.loop_copies;
    EXPECT_GT(loop.device.bytes, 0u) << split.report.str();
    if (shared)
      EXPECT_EQ(loop.to_host.bytes + loop.to_device.bytes, 0u) << split.report.str();
    else
      EXPECT_GT(loop.to_host.bytes, 0u) << split.report.str();
    // cpu:0 beside them: its slices come through the host, the discrete devices' still on them.
    const ReplicaRun three = replica_loop(two_discrete(shared), shares({0.2, 0.4, 0.4}));
    EXPECT_EQ(compare_int(three.a, alone.a), "") << "shared " << shared;
  }
}

// A whole leaf on cpu:2 gathers cpu:1's slices and scatters back to them on the devices in one
// context; with a context per device through the host. The transpose is the one device's.
TEST(SharedContext, AWholeLeafGathersFromTheOtherDiscreteDeviceOnTheDevices) {
  if (!three_devices()) GTEST_SKIP() << "needs three PoCL devices";
  const WholeRun alone = transposed(two_discrete(true), Config::single(1, 3));
  for (bool shared : {true, false}) {
    const WholeRun split = transposed(two_discrete(shared), shares({0, 0.4, 0.6}));
    EXPECT_EQ(compare_int(split.b, alone.b), "") << "shared " << shared;
    ASSERT_EQ(split.report.whole_leaves.size(), 1u) << split.report.str();
    const WholeLeafRun& w = split.report.whole_leaves.front();
    EXPECT_EQ(w.device, 2u);
    EXPECT_GT(w.gathered_bytes, 0u);
    if (shared)
      EXPECT_EQ(w.host_bytes, 0u) << split.report.str();
    else
      EXPECT_GT(w.host_bytes, 0u) << split.report.str();
  }
}

// Runs one after another on a shared context reuse its pooled buffers and built programs (each
// device's own) and stay right; so does every test tree on its plans there.
TEST(SharedContext, RunsInARowAndTheSharedTreesStayRight) {
  if (!three_devices()) GTEST_SKIP() << "needs three PoCL devices";
  Runtime& rt = two_discrete(true);
  const HeatRun first = heat(rt, shares({0, 0.5, 0.5}));
  for (int again = 0; again < 3; ++again)
    EXPECT_EQ(compare_int(heat(rt, shares({0, 0.5, 0.5})).img, first.img), "") << "run " << again;
  for (const auto& name : case_names()) {
    for (const Config& c : {shares({0, 0.5, 0.5}), shares({0.2, 0.3, 0.5})}) {
      Holder h;
      Case k = make_case(name, 300, h);
      k.report = rt.run(k.tree, k.bindings, RunOptions{.config = c}).get();
      EXPECT_EQ(k.check(), "") << name << " " << c.str();
    }
  }
}

// $SINEW_SHARED_CONTEXT=1 puts the two discrete devices in one context: the halo rows between
// them move on the devices; 0, or unset (the default, docs/decisions/174), keeps a context per
// device and they go through the host.
TEST(SharedContext, TheEnvironmentTurnsItOnAndTheDefaultKeepsAContextPerDevice) {
  if (!three_devices()) GTEST_SKIP() << "needs three PoCL devices";
  for (const char* value : {"0", "", "1"}) {
    ::setenv("SINEW_SHARED_CONTEXT", value, 1);
    Runtime rt(RuntimeOptions{.discrete = "cpu:1,cpu:2"});
    ::unsetenv("SINEW_SHARED_CONTEXT");
    const HeatRun split = heat(rt, shares({0, 0.5, 0.5}), 32, 32, 3);
    ASSERT_EQ(split.report.exchanges.size(), 2u) << split.report.str();
    for (const auto& e : split.report.exchanges)
      EXPECT_EQ(e.host_bytes, std::string(value) == "1" ? 0u : e.bytes) << value << "\n" << split.report.str();
  }
}

// In a context of several devices, each device's programs are built for it alone and kept apart:
// the cache never hands one device's build to the other.
TEST(SharedContext, AProgramBuiltForOneDeviceOfAContextIsNotUsedOnAnother) {
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  std::vector<cl::Device> devices;
  platforms.at(0).getDevices(CL_DEVICE_TYPE_ALL, &devices);
  if (devices.size() < 2) GTEST_SKIP() << "needs two PoCL devices";
  devices.resize(2);
  const cl::Context shared(devices);
  detail::ProgramCache cache("");
  const detail::ProgramSource source{"__kernel void k(__global int* a) { a[get_global_id(0)] += 1; }", "<k>"};
  std::vector<cl::Program> programs;
  for (const auto& d : devices) {
    const auto built_for = detail::program_devices(shared, d);
    ASSERT_EQ(built_for.size(), 1u);
    EXPECT_EQ(built_for.front()(), d());
    programs.push_back(cache.get(shared, built_for, source, ""));
    // The device's own build runs on its queue.
    std::vector<cl_int> a{1, 2, 3, 4};
    cl::Buffer buffer(shared, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, a.size() * sizeof(cl_int), a.data());
    cl::Kernel k(programs.back(), "k");
    k.setArg(0, buffer);
    cl::CommandQueue queue(shared, d);
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(a.size()), cl::NullRange);
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, a.size() * sizeof(cl_int), a.data());
    EXPECT_EQ(a, (std::vector<cl_int>{2, 3, 4, 5}));
  }
  EXPECT_NE(programs[0](), programs[1]());
  EXPECT_EQ(cache.get(shared, {devices[1]}, source, "")(), programs[1]());  // kept per device
  EXPECT_EQ(cache.stats().builds, 2u);
  // A context of one device builds for it, as a fission set's context builds for all its devices.
  const cl::Context own(devices[0]);
  EXPECT_EQ(detail::program_devices(own, devices[0]).size(), 1u);
}
