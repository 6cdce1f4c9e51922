// A leaf that runs whole (Kernel::whole_range): a transpose, which writes outside any slice, in a
// pipeline after a partitioned step, on however many PoCL devices the suite is given, zero-copy
// and with the last device discrete, with the poison check: the right result on every plan, in one
// partition; a dynamic plan refused before any device work; the trainer's plan whole as well.
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>

using namespace sinew;
using namespace sinew::testing;

namespace {

const char* kWholeKernels = R"CL(
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

// pipeline(bump(inout a), transpose(in a, out b).whole_range()) over a square grid (the transpose's
// units, rows of b, are as many as a's).
struct Transposed {
  std::vector<int> a, b, want;
  Node tree;
  std::vector<Binding> bindings;
  Vector<cl_int> va = sinew::vector<cl_int>().name("a"), vb = sinew::vector<cl_int>().name("b");
};
void make(Transposed& t, std::size_t side) {
  t.a.resize(side * side);
  for (std::size_t i = 0; i < t.a.size(); ++i) t.a[i] = static_cast<int>((i * 13) % 97) - 40;
  t.b.assign(t.a.size(), 0);
  t.want.resize(t.a.size());
  for (std::size_t y = 0; y < side; ++y)
    for (std::size_t x = 0; x < side; ++x) t.want[x * side + y] = t.a[y * side + x] * 3 + static_cast<int>(x);
  t.va.unit(side);
  t.vb.unit(side);
  const auto n = static_cast<cl_uint>(side);
  auto bump = kernel_source(kWholeKernels, "bump", "whole.cl").args(inout(t.va), scalar(n)).dims(2);
  auto transpose = kernel_source(kWholeKernels, "transpose", "whole.cl")
                       .args(in(t.va), out(t.vb), scalar(n), scalar(n))
                       .dims(2)
                       .whole_range();
  t.tree = pipeline(bump, transpose);
  t.bindings = {{t.va, t.a}, {t.vb, t.b}};
}

Runtime& checked(bool discrete) {
  static std::map<bool, std::unique_ptr<Runtime>> made;
  auto& r = made[discrete];
  if (!r)
    r = std::make_unique<Runtime>(RuntimeOptions{
        .discrete = discrete ? std::to_string(device_count() - 1) : std::string(), .poison_check = true});
  return *r;
}

}  // namespace

class WholeRange : public ::testing::TestWithParam<bool> {};

TEST_P(WholeRange, TransposeIsRightAndNeverSplitOnAnyPlan) {
  Runtime& rt = checked(GetParam());
  const std::size_t n = device_count();
  std::vector<Config> plans;
  Config even;
  even.shares.assign(n, 1.0 / static_cast<double>(n));
  plans.push_back(even);
  Config last_most = even;
  for (std::size_t d = 0; d < n; ++d) last_most.shares[d] = n == 1 ? 1.0 : d + 1 == n ? 0.6 : 0.4 / double(n - 1);
  last_most.overlap = 3;
  plans.push_back(last_most);
  for (std::size_t d = 0; d < n; ++d) plans.push_back(Config::single(d, n));
  for (const Config& c : plans) {
    Transposed t;
    make(t, 24);
    const Report r = rt.run(t.tree, t.bindings, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(t.b, t.want), "") << c.str();
    std::size_t working = 0, device = 0;
    for (const auto& p : r.partitions)
      if (p.units > 0) ++working, device = p.device;
    EXPECT_EQ(working, 1u) << c.str() << "\n" << r.str();
    // The device with the plan's largest share (the first of equal ones).
    const auto largest = std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin();
    EXPECT_EQ(device, static_cast<std::size_t>(largest)) << c.str();
    EXPECT_EQ(r.config.shares[device], 1.0) << r.config.str();
  }
}

// A dynamic plan is refused before any device work, naming the leaf marked whole.
TEST_P(WholeRange, DynamicPlanRefusedBeforeDeviceWork) {
  Runtime& rt = checked(GetParam());
  Transposed t;
  make(t, 16);
  const auto before = t.a;
  Config dynamic;
  dynamic.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
  dynamic.schedule = "dynamic";
  try {
    rt.run(t.tree, t.bindings, RunOptions{.config = dynamic}).get();
    FAIL() << "a whole-range leaf ran under the dynamic schedule";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
    EXPECT_NE(e.node().find("transpose"), std::string::npos) << e.what();
    EXPECT_EQ(e.argument(), "whole_range") << e.what();
    EXPECT_NE(std::string(e.what()).find("runs whole"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("schedule=static"), std::string::npos) << e.context().fix;
  }
  EXPECT_EQ(t.a, before) << "no device work before the error";
  EXPECT_EQ(t.b, std::vector<int>(t.b.size(), 0));
}

// The knowledge base's plan (trained here) runs whole as well.
TEST_P(WholeRange, TrainedPlanRunsWhole) {
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .kb_path = ":memory:",
                            .training = {.quality = 1, .max_executions = 8},
                            .quiet = true});
  Transposed t;
  make(t, 32);
  const Report r = rt.run(t.tree, t.bindings).get();
  EXPECT_EQ(compare_int(t.b, t.want), "");
  std::size_t working = 0;
  for (const auto& p : r.partitions) working += p.units > 0;
  EXPECT_EQ(working, 1u) << r.str();
}

INSTANTIATE_TEST_SUITE_P(Modes, WholeRange, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });
