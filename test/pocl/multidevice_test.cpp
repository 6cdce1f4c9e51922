// The same trees on several PoCL devices (POCL_DEVICES="pthread pthread", or three) with many
// distributions: results must equal the single-device run bit for bit (integer kernels).
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace sinew;
using namespace sinew::testing;

namespace {
std::vector<std::vector<double>> share_sets(std::size_t devices) {
  std::vector<std::vector<double>> s;
  auto one_hot = [&](std::size_t d) { std::vector<double> v(devices, 0.0); v[d] = 1; return v; };
  for (std::size_t d = 0; d < devices; ++d) s.push_back(one_hot(d));
  s.push_back(std::vector<double>(devices, 1.0 / devices));
  std::vector<double> skew(devices, 0.9 / (devices - 1));
  skew[0] = 0.1;
  s.push_back(skew);
  std::vector<double> odd(devices);
  double sum = 0;
  for (std::size_t d = 0; d < devices; ++d) sum += odd[d] = 0.137 + 0.31 * d;
  for (double& x : odd) x /= sum;  // a plan's shares add up to 1
  s.push_back(odd);
  return s;
}
}  // namespace

TEST(MultiDevice, DiscoversEveryPoclDevice) {
  Runtime rt;
  const char* env = std::getenv("POCL_DEVICES");
  ASSERT_NE(env, nullptr);
  std::size_t expected = 1;
  for (const char* p = env; *p; ++p) expected += *p == ' ';
  EXPECT_EQ(rt.devices().size(), expected);
  for (const auto& d : rt.devices()) EXPECT_EQ(d.kind, DeviceKind::cpu);
}

class Distributions : public ::testing::TestWithParam<std::string> {};

TEST_P(Distributions, EqualTheSingleDeviceResult) {
  Runtime rt;
  const std::size_t devices = rt.devices().size();
  ASSERT_GE(devices, 2u);
  for (std::size_t n : {3u, 1001u}) {
    for (const auto& shares : share_sets(devices)) {
      for (const auto& fission : rt.devices()[0].fission_configs) {
        Holder h;
        Case c = make_case(GetParam(), n, h);
        Config cfg;
        cfg.shares = shares;
        cfg.fission = fission.name;
        c.report = rt.run(c.tree, c.bindings, RunOptions{.config = cfg}).get();
        EXPECT_EQ(c.check(), "") << GetParam() << " n=" << n << " " << cfg.str();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllNodeTypes, Distributions, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// The last device driven as a discrete GPU: explicit transfers, 1-4 overlap queues, beside the
// first device with each of its fission configurations.
TEST_P(Distributions, WithADiscreteDeviceAndOverlapEqualTheReference) {
  const std::size_t count = Runtime().devices().size();
  // Tiny streaming chunks: streamable trees reach the discrete device in many partitions.
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1), .chunk_mb = 0.0005});
  ASSERT_TRUE(rt.devices().back().discrete);
  for (std::size_t n : {2u, 513u}) {
    for (const auto& shares : share_sets(count)) {
      for (unsigned overlap = 1; overlap <= 4; ++overlap) {
        for (const auto& fission : rt.devices()[0].fission_configs) {
          Holder h;
          Case c = make_case(GetParam(), n, h);
          Config cfg;
          cfg.shares = shares;
          cfg.fission = fission.name;
          cfg.overlap = overlap;
          c.report = rt.run(c.tree, c.bindings, RunOptions{.config = cfg}).get();
          EXPECT_EQ(c.check(), "") << GetParam() << " n=" << n << " " << cfg.str() << "\n" << c.report.decomposition;
        }
      }
    }
  }
}

// CPU results mapped and unmapped after their kernels (SINEW_MAP_ZERO_COPY=1: the path of CPU
// drivers whose USE_HOST_PTR buffers are not the host memory itself), every device driven by its
// own thread.
TEST(MultiDevice, MappedZeroCopyResultsEqualTheReference) {
  ::setenv("SINEW_MAP_ZERO_COPY", "1", 1);
  Runtime rt;
  ::unsetenv("SINEW_MAP_ZERO_COPY");
  for (const auto& d : rt.devices()) ASSERT_FALSE(d.host_pointer_aliased) << d.id();
  for (const auto& name : case_names()) {
    for (const auto& shares : share_sets(rt.devices().size())) {
      Holder h;
      Case c = make_case(name, 1001, h);
      Config cfg;
      cfg.shares = shares;
      c.report = rt.run(c.tree, c.bindings, RunOptions{.config = cfg}).get();
      EXPECT_EQ(c.check(), "") << name << " " << cfg.str();
    }
  }
}

TEST(MultiDevice, FewerUnitsThanDevicesAndZeroShares) {
  Runtime rt;
  Holder h;
  Case c = make_case("replicated_sync_loop", 1, h);  // one unit for several devices
  Config cfg;
  cfg.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  c.report = rt.run(c.tree, c.bindings, {.config = cfg}).get();
  EXPECT_EQ(c.check(), "");
  EXPECT_EQ(c.report.partitions.size(), 1u);
}

TEST(MultiDevice, TraceFileHasEveryPartition) {
  const std::string path = ::testing::TempDir() + "/sinew-trace-test.json";
  std::remove(path.c_str());
  setenv("SINEW_TRACE", path.c_str(), 1);  // read with the other variables when the runtime is made
  Runtime rt;
  Holder h;
  Case c = make_case("pipeline_channel", 300, h);
  Config cfg;
  cfg.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  c.report = rt.run(c.tree, c.bindings, {.config = cfg}).get();
  unsetenv("SINEW_TRACE");
  std::ifstream in(path);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  for (std::size_t p = 0; p < c.report.partitions.size(); ++p)
    EXPECT_NE(json.find(" #" + std::to_string(p) + "\""), std::string::npos) << json;
  for (const auto& d : rt.devices()) EXPECT_NE(json.find(d.id() + " " + d.name), std::string::npos) << json;
  EXPECT_NE(json.find("kernel 'mul2'"), std::string::npos);
  std::remove(path.c_str());
}

TEST(MultiDevice, PinnedMemoryBindsLikeAVector) {
  const std::size_t count = Runtime().devices().size();
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1)});
  const std::size_t n = 10007;
  auto a = rt.pinned<cl_int>(n);
  ASSERT_EQ(a.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(a[i], 0) << i;  // zero-initialised
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<cl_int>(i);
  auto A = sinew::vector<cl_int>().name("a");
  auto k = kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(A), scalar(cl_int(5)));
  Config cfg;
  cfg.shares.assign(count, 1.0 / static_cast<double>(count));
  cfg.overlap = 2;
  rt.run(k, {{A, a}}, {.config = cfg}).get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], static_cast<cl_int>(i) + 5) << i;
}

void pinned_chunks_on_several_queues(Runtime& rt);

// Pinned data on a discrete device with several queues: the many chunks pipelined on each
// queue give every element once, through a pipeline whose channel stays on the device; alone,
// and beside the CPUs working on the same pinned memory in place (then one thread enqueues
// every device's partitions and waits for them all). PoCL's CPU buffers are the host memory
// itself, so the CPUs' results are not mapped; with SINEW_MAP_ZERO_COPY=1 they are mapped, and
// unmapped after the wait.
TEST(MultiDevice, PinnedChunksPipelinedOnSeveralQueues) {
  for (const bool map : {false, true}) {
    if (map) ::setenv("SINEW_MAP_ZERO_COPY", "1", 1);
    const std::size_t count = Runtime().devices().size();
    Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1), .chunk_mb = 0.05});
    ::unsetenv("SINEW_MAP_ZERO_COPY");
    EXPECT_EQ(rt.devices().front().host_pointer_aliased, !map);
    pinned_chunks_on_several_queues(rt);
  }
}

void pinned_chunks_on_several_queues(Runtime& rt) {
  const std::size_t count = rt.devices().size();
  const std::size_t n = 300'007;  // ~1.2 MB of int per vector: about 45 chunks of 50 KB
  auto a = rt.pinned<cl_int>(n);
  auto b = rt.pinned<cl_int>(n);
  auto A = sinew::vector<cl_int>().name("a"), B = sinew::vector<cl_int>().name("b");
  auto tree = pipeline(kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(A), scalar(cl_int(3))),
                       kernel_source(kTestKernels, "mul2", "t.cl").args(in(A), out(B)));
  for (const double discrete_share : {1.0, 0.5, 0.137}) {
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<cl_int>(i) - 7;
    std::fill(b.begin(), b.end(), 0);
    Config cfg;
    cfg.shares.assign(count, (1.0 - discrete_share) / static_cast<double>(count - 1));
    cfg.shares.back() = discrete_share;
    cfg.overlap = 3;
    const Report r = rt.run(tree, {{A, a}, {B, b}}, {.config = cfg}).get();
    EXPECT_GT(r.partitions.size(), discrete_share < 1 ? 10u : 20u) << r.decomposition;
    std::size_t units = 0;
    for (const auto& p : r.partitions) units += p.units;
    EXPECT_EQ(units, n);
    for (std::size_t d = 0; d < count; ++d) {
      if (cfg.shares[d] > 0) EXPECT_GT(r.device_ms[d], 0.0) << "device " << d << "\n" << r.str();
      EXPECT_LE(r.device_ms[d], r.wall_ms) << "device " << d << "\n" << r.str();
    }
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(a[i], static_cast<cl_int>(i) - 4) << i << ", discrete share " << discrete_share;
      ASSERT_EQ(b[i], 2 * (static_cast<cl_int>(i) - 4)) << i << ", discrete share " << discrete_share;
    }
  }
}

// Slices of several staging chunks: the pinned ring wraps around on upload and download.
TEST(MultiDevice, StagedTransfersLargerThanTheRing) {
  const std::size_t count = Runtime().devices().size();
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1)});
  const std::size_t n = 5'000'003;  // ~20 MB of int: 5 chunks of 4 MB, and a ragged end
  std::vector<cl_int> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<cl_int>(i * 3);
  auto A = sinew::vector<cl_int>().name("a");
  auto k = kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(A), scalar(cl_int(-1)));
  Config cfg;
  cfg.shares.assign(count, 0.0);
  cfg.shares.back() = 1.0;  // all on the discrete device
  cfg.overlap = 1;
  rt.run(k, {{A, a}}, {.config = cfg}).get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], static_cast<cl_int>(i * 3) - 1) << i;
}

TEST(MultiDevice, PlanStringsSplitByKindAndDevice) {
  Runtime rt;
  Holder h;
  Case c = make_case("pipeline_channel", 4000, h);
  c.report = rt.run(c.tree, c.bindings, {.plan = "cpu:0=0.25"}).get();
  EXPECT_EQ(c.check(), "");
  EXPECT_NEAR(c.report.config.shares[0], 0.25, 1e-12);
  ASSERT_GE(c.report.partitions.size(), 2u);
  EXPECT_NEAR(static_cast<double>(c.report.partitions[0].units), 1000.0, 8.0);
  EXPECT_THROW(rt.run(c.tree, c.bindings, {.plan = "gpu=1"}), Error);  // no GPU on PoCL
}

