// Per-device kernel variants (sinew::variants) on the PoCL devices this suite is given (1, 2 or 3),
// zero-copy and with the last device driven as a discrete GPU. PoCL's devices are all CPUs: the
// last device runs the GPU variants through RuntimeOptions::variant_gpu ($SINEW_VARIANT_GPU), the
// others the fallback. Each partition runs its device's variant (every unit tagged by the variant
// that ran it, against the Report's partitions); every variant's results agree on the same data
// (a CLBlast gemm against a blocked OpenCL kernel, within the sample's tolerance); under
// schedule=steal every unit runs exactly once; and variants that do not read and write what the
// fallback does are refused before any device work, naming the leaf, the variant and the argument.
#include <sinew/sinew.hpp>

#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace sinew;

namespace {

using sinew::testing::device_count;

// A runtime whose last device runs GPU variants (zero-copy, or that device discrete too).
Runtime& variant_runtime(bool discrete) {
  static const std::string last = std::to_string(device_count() - 1);
  static Runtime zero_copy(RuntimeOptions{.variant_gpu = last});
  static Runtime emulated(RuntimeOptions{.discrete = last, .variant_gpu = last});
  return discrete ? emulated : zero_copy;
}

// Each visit counted and tagged with the variant that made it (1: the fallback, 2: the GPU
// variant), after work on the units below `heavy`: the first device's range, which takes long
// enough that the others steal from it. The GPU variant takes its tag as a scalar of its own.
const char* kVisit = R"CL(
uint spin(uint x, int rounds) {
  for (int k = 0; k < rounds; ++k) x = x * 1664525u + 1013904223u;
  return x;
}
__kernel void visit_cpu(__global int* visits, __global uint* tag, uint off, uint heavy) {
  size_t i = get_global_id(0);
  uint x = spin(off + (uint)i, off + (uint)i < heavy ? 4096 : 1);
  atomic_inc(&visits[i]);
  tag[i] = x == 7u ? 0u : 1u;  // (x is almost never 7: the loop is not optimised away)
}
__kernel void visit_gpu(__global int* visits, __global uint* tag, uint marker, uint off, uint heavy) {
  size_t i = get_global_id(0);
  uint x = spin(off + (uint)i, off + (uint)i < heavy ? 4096 : 1);
  atomic_inc(&visits[i]);
  tag[i] = x == 7u ? 0u : marker;
}
)CL";

// The tag each unit must carry: 2 where the last device (GPU variants) ran it, else 1.
std::vector<cl_uint> expected_tags(const Report& r, std::size_t n) {
  std::vector<cl_uint> want(n, 0);
  for (const auto& p : r.partitions)
    for (std::size_t i = p.first; i < p.first + p.units && i < n; ++i) want[i] = p.device == device_count() - 1 ? 2 : 1;
  return want;
}

// The first device most units, the others the rest evenly (as the steal suite's).
std::string skewed(const std::string& schedule) {
  if (device_count() < 2) return "schedule=" + schedule;
  const double others = 0.1 * static_cast<double>(device_count() - 1);
  std::string plan = "0=" + std::to_string(1.0 - others);
  for (std::size_t d = 1; d < device_count(); ++d) plan += "," + std::to_string(d) + "=0.1";
  return plan + ",schedule=" + schedule;
}

class VariantRuns : public ::testing::TestWithParam<bool> {};

TEST_P(VariantRuns, EachPartitionRunsItsDeviceKindsVariantExactlyOnceUnderEverySchedule) {
  const bool discrete = GetParam();
  std::size_t steals = 0;
  for (const std::string schedule : {"static", "dynamic", "steal"}) {
    for (std::size_t n : {1000u, 200003u, 200003u}) {
      const std::string plan = skewed(schedule);
      SCOPED_TRACE(plan + ", " + std::to_string(n) + " units" + (discrete ? ", discrete" : ""));
      Vector<cl_int> V = sinew::vector<cl_int>().name("visits");
      Vector<cl_uint> T = sinew::vector<cl_uint>().name("tag");
      const auto heavy = device_count() < 2 ? cl_uint(0) : static_cast<cl_uint>(static_cast<double>(n) * 0.7);
      const Kernel cpu = kernel_source(kVisit, "visit_cpu", "variants_test.cl").args(inout(V), out(T), offset(T), scalar(heavy));
      const Kernel gpu =
          kernel_source(kVisit, "visit_gpu", "variants_test.cl").args(inout(V), out(T), scalar(cl_uint(2)), offset(T), scalar(heavy));
      // An accelerator variant: no PoCL device is one, so it never runs (its tag would be 3).
      const Kernel accelerator =
          kernel_source(kVisit, "visit_gpu", "variants_test.cl").args(inout(V), out(T), scalar(cl_uint(3)), offset(T), scalar(heavy));
      const Node tree = variants(cpu, {{DeviceKind::gpu, gpu}, {DeviceKind::accelerator, accelerator}});
      std::vector<cl_int> visits(n, 0);
      std::vector<cl_uint> tag(n, 0xFFFFFFFFu);
      const Report r = variant_runtime(discrete).run(tree, {{V, visits}, {T, tag}}, {.plan = plan}).get();
      ASSERT_EQ(r.config.schedule, schedule);
      const std::vector<cl_uint> want = expected_tags(r, n);
      std::size_t wrong_visits = 0, wrong_tags = 0;
      for (std::size_t i = 0; i < n; ++i) {
        wrong_visits += visits[i] != 1;
        wrong_tags += tag[i] != want[i] && tag[i] != 0;
      }
      EXPECT_EQ(wrong_visits, 0u);
      EXPECT_EQ(wrong_tags, 0u);
      if (schedule == "steal") steals += r.steals.size();
    }
  }
  if (device_count() > 1) EXPECT_GT(steals, 0u);  // the others ran out of cheap units and stole
}

// Row-major C = A * B over rows of A and C, B whole: the blocked kernel computes a tile of
// C per work-group from tiles of A and B in local memory (the CPU variant of samples/blockmm).
const char* kBlocked = R"CL(
#define TILE 8
__kernel void blocked(__global const float* a, __global const float* b, __global float* c, uint a_elements, uint k,
                      uint n) {
  const uint rows = a_elements / k;
  __local float at[TILE][TILE], bt[TILE][TILE];
  const size_t col = get_global_id(0), row = get_global_id(1);
  const size_t lc = get_local_id(0), lr = get_local_id(1);
  float sum = 0.0f;
  for (uint t = 0; t < k; t += TILE) {
    at[lr][lc] = row < rows && t + lc < k ? a[row * k + t + lc] : 0.0f;
    bt[lr][lc] = t + lr < k && col < n ? b[(t + lr) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < TILE; ++j) sum += at[lr][j] * bt[j][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < rows && col < n) c[row * n + col] = sum;
}
)CL";

// C = A * B: a CLBlast gemm on GPU-variant devices, the blocked kernel elsewhere.
Node matmul(const Vector<cl_float>& A, const Vector<cl_float>& B, const Vector<cl_float>& C, std::size_t k,
            std::size_t n) {
  const Kernel blocked = kernel_source(kBlocked, "blocked", "blocked.cl")
                             .args(in(A), whole(B), out(C), count(A), scalar(cl_uint(k)), scalar(cl_uint(n)))
                             .dims(2)
                             .local_size({8, 8});
  return variants(blocked, {{DeviceKind::gpu, blas::gemm(1.0f, A, B, 0.0f, C, k, n)}});
}

TEST_P(VariantRuns, EveryVariantComputesTheSameProductWithinTheSamplesTolerance) {
  const bool discrete = GetParam();
  constexpr std::size_t m = 96, k = 64, n = 40;  // rows a multiple of the tile; n is not
  constexpr double kTolerance = 1e-4;            // relative, as samples/blockmm states
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n);
  for (auto& x : a) x = value(rng);
  for (auto& x : b) x = value(rng);
  std::vector<double> reference(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < k; ++l) reference[i * n + j] += static_cast<double>(a[i * k + l]) * b[l * n + j];
  // The fallback alone (the first device), the GPU variant alone (the last), and both split.
  std::vector<std::string> plans = {"device=0", "device=" + std::to_string(device_count() - 1)};
  if (device_count() > 1) plans.push_back("schedule=steal");
  for (const std::string& plan : plans) {
    SCOPED_TRACE(plan + (discrete ? ", discrete" : ""));
    Vector<cl_float> A = sinew::vector<cl_float>().unit(k).name("A");
    Vector<cl_float> B = sinew::vector<cl_float>().name("B");
    Vector<cl_float> C = sinew::vector<cl_float>().unit(n).name("C");
    std::vector<float> c(m * n, -7.0f);
    RunOptions o;
    if (plan.rfind("device=", 0) == 0) o.device = std::stoul(plan.substr(7));
    else o.plan = plan;
    variant_runtime(discrete).run(matmul(A, B, C, k, n), {{A, a}, {B, b}, {C, c}}, o).get();
    double worst = 0;
    for (std::size_t i = 0; i < m * n; ++i)
      worst = std::max(worst, std::abs(c[i] - reference[i]) / std::max(1.0, std::abs(reference[i])));
    EXPECT_LE(worst, kTolerance);
  }
}

// The error a run of `tree` throws; the host data must be untouched (nothing ran).
Error refusal(const Node& tree, const Vector<cl_float>& X, const Vector<cl_float>& Y) {
  std::vector<float> x(64, 1.0f), y(64, 5.0f);
  try {
    variant_runtime(false).run(tree, {{X, x}, {Y, y}}).get();
  } catch (const Error& e) {
    for (float v : y) EXPECT_EQ(v, 5.0f);
    return e;
  }
  ADD_FAILURE() << "the run was not refused";
  return Error(make_error_code(errc::invalid_tree), "no error");
}

const char* kCopy = R"CL(
__kernel void scaled(__global const float* x, __global float* y) { y[get_global_id(0)] = x[get_global_id(0)]; }
__kernel void scaled_by(__global const float* x, __global float* y, float f) { y[get_global_id(0)] = f * x[get_global_id(0)]; }
__kernel void scaled_int(__global const float* x, __global int* y) { y[get_global_id(0)] = (int)x[get_global_id(0)]; }
)CL";

TEST(VariantChecks, VariantsThatMoveOtherDataAreRefusedBeforeDeviceWorkNamingLeafVariantAndArgument) {
  Vector<cl_float> X = sinew::vector<cl_float>().name("x");
  Vector<cl_float> Y = sinew::vector<cl_float>().name("y");
  Vector<cl_float> Z = sinew::vector<cl_float>().name("z");
  const Kernel fallback = kernel_source(kCopy, "scaled", "copy.cl").args(in(X), out(Y)).name("scale");
  auto expect = [&](const Node& tree, const std::string& argument, const std::string& words) {
    const Error e = refusal(tree, X, Y);
    const std::string what = e.what();
    EXPECT_NE(what.find("scale"), std::string::npos) << what;  // the leaf
    EXPECT_NE(what.find("variant gpu"), std::string::npos) << what;    // the variant
    EXPECT_NE(what.find(argument), std::string::npos) << what;         // the argument
    EXPECT_NE(what.find(words), std::string::npos) << what;
  };
  // Another access (inout where the fallback writes), another vector, one vector missing.
  expect(variants(fallback, {{DeviceKind::gpu, kernel_source(kCopy, "scaled", "copy.cl").args(in(X), inout(Y))}}),
         "inout 'y'", "same access");
  expect(variants(fallback, {{DeviceKind::gpu, kernel_source(kCopy, "scaled", "copy.cl").args(in(Z), out(Y))}}),
         "in 'z'", "same vectors");
  expect(variants(fallback, {{DeviceKind::gpu, kernel_source(kCopy, "scaled_by", "copy.cl").args(in(X), scalar(2.0f), out(Y))}}),
         "scalar", "expects a pointer");
  // The variant's own signature: its parameter's element type against its argument's.
  expect(variants(fallback, {{DeviceKind::gpu, kernel_source(kCopy, "scaled_int", "copy.cl").args(in(X), out(Y))}}),
         "'y'", "int");
  // A vector the fallback does not move, named by offset().
  expect(variants(fallback, {{DeviceKind::gpu, kernel_source(kCopy, "scaled_by", "copy.cl")
                                                   .args(in(X), out(Y), offset(Z))}}),
         "offset of 'z'", "neither reads nor writes");
  // Two variants for one kind: refused when the node is built.
  try {
    variants(fallback, {{DeviceKind::gpu, fallback}, {DeviceKind::gpu, fallback}});
    ADD_FAILURE() << "two GPU variants were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
  }
}

TEST(VariantChecks, AScanOrAVariantsNodeIsNoVariant) {
  Vector<cl_float> X = sinew::vector<cl_float>().name("x");
  Vector<cl_float> Y = sinew::vector<cl_float>().name("y");
  const Kernel fallback = kernel_source(kCopy, "scaled", "copy.cl").args(in(X), out(Y)).name("scale");
  const Error scan_refused = refusal(variants(fallback, {{DeviceKind::gpu, scan(X, Y, scan_op::sum())}}), X, Y);
  EXPECT_NE(std::string(scan_refused.what()).find("variant gpu"), std::string::npos) << scan_refused.what();
  const Node nested = variants(fallback, {{DeviceKind::gpu, variants(fallback, {})}});
  const Error nested_refused = refusal(nested, X, Y);
  EXPECT_NE(std::string(nested_refused.what()).find("kernel or library leaf"), std::string::npos)
      << nested_refused.what();
}

INSTANTIATE_TEST_SUITE_P(ZeroCopyAndDiscrete, VariantRuns, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });

}  // namespace
