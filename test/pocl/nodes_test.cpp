// Every node type alone and nested three deep, on one device, against a C++ reference.
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>

using namespace sinew;
using namespace sinew::testing;

class Nodes : public ::testing::TestWithParam<std::string> {};

// On every device of the machine, one at a time (the PoCL CPU here; CPU and GPU on a GPU machine).
TEST_P(Nodes, MatchReferenceOnEachDeviceAlone) {
  Runtime rt;
  for (const auto& dev : rt.devices()) {
    for (std::size_t n : {1u, 37u, 4096u}) {
      Holder h;
      Case c = make_case(GetParam(), n, h);
      c.report = rt.run(c.tree, c.bindings, RunOptions{.device = dev.index}).get();
      EXPECT_EQ(c.check(), "") << GetParam() << " n=" << n << " on " << dev.id() << "\n" << c.tree.dump();
      // Every partition on that device: one, or one per fission sub-device or overlap queue at
      // the level the runtime picked for the device alone (Planner::single_device).
      ASSERT_FALSE(c.report.partitions.empty());
      for (const auto& part : c.report.partitions) EXPECT_EQ(part.device, dev.index) << c.report.config.str();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllNodeTypes, Nodes, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// Work-group constraints: a required local size, and a local-size multiple the runtime meets
// with the largest work-group that divides each partition's range.
TEST(WorkGroups, RequiredSizeAndMultipleRunOnEveryDevice) {
  const char* src = R"(
__kernel void groups(__global int* v, __local int* tmp) {
  tmp[get_local_id(0)] = (int)get_local_size(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  v[get_global_id(0)] = tmp[0] * 1000 + (int)get_global_id(0);
})";
  Runtime rt;
  auto V = sinew::vector<cl_int>().name("v");
  for (const auto& dev : rt.devices()) {
    // One partition (the device alone, no fission: RunOptions::device may pick sub-devices), so
    // that one work-group size holds for every element.
    const RunOptions alone{.config = Config::single(dev.index, rt.devices().size())};
    std::vector<cl_int> data(96, -1);
    rt.run(kernel_source(src, "groups").args(out(V), local<cl_int>(96)).local_size({16}), {{V, data}}, alone).get();
    for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], 16 * 1000 + static_cast<int>(i)) << i;
    rt.run(kernel_source(src, "groups").args(out(V), local<cl_int>(96)).local_multiple(12), {{V, data}}, alone)
        .get();
    const int size = data[0] / 1000;  // the work-group the runtime chose
    EXPECT_EQ(size % 12, 0) << size;
    EXPECT_EQ(96 % size, 0) << size;
    for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], size * 1000 + static_cast<int>(i)) << i;
  }
}

TEST(Library, AxpyMatchesReference) {
  Runtime rt;
  const std::size_t n = 10000;
  std::vector<float> x(n), y(n), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 13) * 0.25f;
    y[i] = 1.0f - static_cast<float>(i % 7);
    want[i] = 3.0f * x[i] + y[i];
  }
  auto X = sinew::vector<cl_float>().name("x");
  auto Y = sinew::vector<cl_float>().name("y");
  const auto y0 = y;
  for (const auto& dev : rt.devices()) {
    y = y0;
    rt.run(blas::axpy(3.0f, X, Y), {{X, x}, {Y, y}}, {.device = dev.index}).get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], want[i], 1e-5f) << i << " on " << dev.id();
  }
}

// CLBlast's kernels count on buffers aligned to the device's base address alignment (on a
// Sapphire Rapids VM, PoCL 3.1 ran XaxpyFaster with aligned 32-byte stores). User memory that is
// not aligned so is staged on a zero-copy CPU device, not handed over; aligned memory is.
TEST(Library, AxpyOnUserMemoryNotAlignedForTheDeviceIsStaged) {
  Runtime rt;
  const std::size_t n = 4096;
  std::vector<float> storage_x(n + 64), storage_y(n + 64);
  auto aligned = [](std::vector<float>& v, std::size_t skip) {
    float* p = v.data();
    while (reinterpret_cast<std::uintptr_t>(p) % 128 != 0) ++p;  // PoCL's base address alignment
    return p + skip;
  };
  auto X = sinew::vector<cl_float>().name("x");
  auto Y = sinew::vector<cl_float>().name("y");
  for (const auto& dev : rt.devices()) {
    if (dev.discrete || !dev.host_unified_memory) continue;
    for (const std::size_t skip : {std::size_t{0}, std::size_t{1}}) {  // aligned; 4 bytes past
      float* x = aligned(storage_x, skip);
      float* y = aligned(storage_y, skip);
      for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13), y[i] = 1.0f;
      const Report r = rt.run(blas::axpy(2.0f, X, Y), {{X, std::span<float>(x, n)}, {Y, std::span<float>(y, n)}},
                              {.device = dev.index})
                           .get();
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * static_cast<float>(i % 13) + 1.0f) << i;
      if (skip == 0)
        EXPECT_EQ(r.copies.host_copies(), 0u) << dev.id() << ": aligned memory is the buffer itself";
      else
        EXPECT_GT(r.copies.host_copies(), 0u) << dev.id() << ": memory 4 bytes past alignment is staged";
    }
  }
}

TEST(Library, GemmRowsMatchReference) {
  Runtime rt;
  const std::size_t m = 33, k = 16, n = 8;
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f), want(m * n, 0.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < k; ++l) want[i * n + j] += a[i * k + l] * b[l * n + j];
  auto A = sinew::vector<cl_float>().unit(k).name("A");
  auto B = sinew::vector<cl_float>().name("B");
  auto C = sinew::vector<cl_float>().unit(n).name("C");
  for (const auto& dev : rt.devices()) {
    std::fill(c.begin(), c.end(), -1.0f);
    rt.run(blas::gemm(1.0f, A, B, 0.0f, C, k, n), {{A, a}, {B, b}, {C, c}}, {.device = dev.index}).get();
    for (std::size_t i = 0; i < m * n; ++i) ASSERT_NEAR(c[i], want[i], 1e-4f) << i << " on " << dev.id();
  }
}

TEST(Library, FftForwardMatchesDftAndInverseRestoresInput) {
  Runtime rt;
  const std::size_t len = 64, batch = 3;
  std::vector<cl_float2> data(len * batch);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = {{std::sin(0.3f * i), std::cos(0.11f * i)}};
  const auto input = data;
  auto D = sinew::vector<cl_float2>().unit(len).name("signal");
  for (const auto& dev : rt.devices()) {
  data = input;
  rt.run(fft(D, FftDirection::forward), {{D, data}}, {.device = dev.index}).get();
  for (std::size_t t = 0; t < batch; ++t)
    for (std::size_t f = 0; f < len; ++f) {
      std::complex<double> s = 0;
      for (std::size_t j = 0; j < len; ++j)
        s += std::complex<double>(input[t * len + j].s[0], input[t * len + j].s[1]) *
             std::polar(1.0, -2 * M_PI * double(f * j) / len);
      ASSERT_NEAR(data[t * len + f].s[0], s.real(), 1e-3) << t << "," << f;
      ASSERT_NEAR(data[t * len + f].s[1], s.imag(), 1e-3) << t << "," << f;
    }
  rt.run(pipeline(fft(D, FftDirection::inverse)), {{D, data}}, {.device = dev.index}).get();
  for (std::size_t i = 0; i < data.size(); ++i) {
    ASSERT_NEAR(data[i].s[0], input[i].s[0], 1e-4) << dev.id();
    ASSERT_NEAR(data[i].s[1], input[i].s[1], 1e-4) << dev.id();
  }
  }
}

TEST(Report, NamesConfigPartitionsAndKernelTimes) {
  Runtime rt(RuntimeOptions{.kb_path = ":memory:", .quiet = true});  // starts knowing nothing
  Holder h;
  Case c = make_case("pipeline_channel", 1000, h);
  Report r = rt.run(c.tree, c.bindings, {.profile = true}).get();  // device times asked for
  EXPECT_EQ(r.provenance, Provenance::trained);
  EXPECT_GT(r.training_executions, 0u);
  EXPECT_GT(r.kb_entry, 0);
  std::size_t units = 0;
  for (const auto& p : r.partitions) units += p.units;
  EXPECT_EQ(units, 1000u);
  EXPECT_EQ(r.kernels.size(), 3u * r.partitions.size());
  for (const auto& k : r.kernels) {
    EXPECT_GE(k.launches, 1u);  // 2 when a range is launched as a multiple plus a remainder
    EXPECT_GE(k.ms, 0.0);
  }
  EXPECT_GT(r.wall_ms, 0.0);
  EXPECT_NE(r.str().find("kernel 'mul2'"), std::string::npos) << r.str();
  EXPECT_NE(r.decomposition.find("1000 units"), std::string::npos) << r.decomposition;

  // The same tree and input again: the knowledge base answers, nothing is trained.
  Holder h2;
  Case again = make_case("pipeline_channel", 1000, h2);
  Report r2 = rt.run(again.tree, again.bindings).get();
  EXPECT_EQ(r2.provenance, Provenance::knowledge_base);
  EXPECT_EQ(r2.kb_entry, r.kb_entry);
  // Not profiled (the default): no device-side times, the host-timed ones remain.
  EXPECT_TRUE(r2.kernels.empty());
  units = 0;
  for (const auto& p : r2.partitions) {
    units += p.units;
    EXPECT_EQ(p.kernel_ms, 0.0);
  }
  EXPECT_EQ(units, 1000u);
  EXPECT_GT(*std::max_element(r2.device_ms.begin(), r2.device_ms.end()), 0.0);
  EXPECT_EQ(r2.training_executions, 0u);
  EXPECT_EQ(r2.config, r.config);
  again.report = r2;
  EXPECT_EQ(again.check(), "");
}
