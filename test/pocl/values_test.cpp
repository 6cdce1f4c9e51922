// Results as arguments (sinew::value): a map_reduce's combined value passed to a later kernel of
// the same tree, by value and through a pointer, of scalar, OpenCL vector and struct types, in
// pipelines, inside a map_reduce's body, in loop bodies and with a loop predicate; several values
// per kernel; and the refusals before device work. Each result is compared with a plain C++
// reference on every PoCL device this process sees (1, 2 or 3: the suite is registered once per
// count), for several splits, zero-copy and with the last device discrete. Values are small
// integers, so float sums are exact and every comparison is bitwise.
#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

using namespace sinew;
using sinew::testing::expect_error;

namespace {

const char* kKernels = R"CL(
typedef struct { int lo; int hi; } range_t;
range_t widen(range_t a, range_t b) { range_t r; r.lo = min(a.lo, b.lo); r.hi = max(a.hi, b.hi); return r; }

__kernel void copy_part(__global const int* x, __global int* part) {
  size_t i = get_global_id(0); part[i] = x[i];
}
__kernel void add_value(__global const int* x, __global int* y, int total) {
  size_t i = get_global_id(0); y[i] = x[i] + total;
}
__kernel void add_pointer(__global const int* x, __global int* y, __global const int* total) {
  size_t i = get_global_id(0); y[i] = x[i] + total[0];
}
__kernel void add_constant(__global const int* x, __global int* y, __constant int* total) {
  size_t i = get_global_id(0); y[i] = x[i] + total[0];
}
__kernel void scale_and_add(__global const int* x, __global int* y, int largest, __global const int* total) {
  size_t i = get_global_id(0); y[i] = x[i] * largest + total[0];
}
__kernel void flip(__global int* x, int largest) {
  size_t i = get_global_id(0); x[i] = largest - x[i] + 1;
}
__kernel void shrink(__global int* x, __global const int* total) {
  size_t i = get_global_id(0); x[i] = max(0, x[i] - 1 - total[0] % 7);
}
__kernel void lanes(__global const float4* x, __global float4* part) {
  size_t i = get_global_id(0); part[i] = x[i];
}
__kernel void dot_lanes(__global const float4* x, __global float* y, float4 sums) {
  size_t i = get_global_id(0); y[i] = dot(x[i], sums);
}
__kernel void dot_lanes_pointer(__global const float4* x, __global float* y, __global const float4* sums) {
  size_t i = get_global_id(0); y[i] = dot(x[i], sums[0]);
}
__kernel void to_range(__global const int* x, __global range_t* part) {
  size_t i = get_global_id(0); part[i].lo = x[i]; part[i].hi = x[i];
}
__kernel void rescale(__global const int* x, __global int* y, range_t r) {
  size_t i = get_global_id(0); y[i] = (x[i] - r.lo) * 1000 / (r.hi - r.lo + 1);
}
__kernel void rescale_pointer(__global const int* x, __global int* y, __global const range_t* r) {
  size_t i = get_global_id(0); y[i] = (x[i] - r[0].lo) * 1000 / (r[0].hi - r[0].lo + 1);
}
__kernel void add_float(__global const int* x, __global int* y, float total) {
  size_t i = get_global_id(0); y[i] = x[i] + (int)total;
}
__kernel void add_float_pointer(__global const int* x, __global int* y, __global const float* total) {
  size_t i = get_global_id(0); y[i] = x[i] + (int)total[0];
}
__kernel void add_writable(__global const int* x, __global int* y, __global int* total) {
  size_t i = get_global_id(0); y[i] = x[i] + total[0];
}
)CL";

struct Range {
  cl_int lo, hi;
};

Kernel k(const std::string& entry) { return kernel_source(kKernels, entry, "values_test.cl"); }

// One runtime per device setting: all devices zero-copy, or the last one discrete.
struct Setup {
  std::string name;
  RuntimeOptions options;
};
std::vector<Setup> setups() {
  const std::size_t count = Runtime().devices().size();
  return {{"zero_copy", {}}, {"discrete", RuntimeOptions{.discrete = std::to_string(count - 1)}}};
}

// Even shares, each device alone, and an uneven split.
std::vector<std::vector<double>> share_sets(std::size_t devices) {
  std::vector<std::vector<double>> s{std::vector<double>(devices, 1.0 / static_cast<double>(devices))};
  if (devices == 1) return s;
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<double> one(devices, 0.0);
    one[d] = 1;
    s.push_back(one);
  }
  std::vector<double> odd(devices);
  double sum = 0;
  for (std::size_t d = 0; d < devices; ++d) sum += odd[d] = 0.137 + 0.31 * static_cast<double>(d);
  for (double& x : odd) x /= sum;
  s.push_back(odd);
  return s;
}

template <class F>
void for_every_plan(F&& run) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      Config cfg;
      cfg.shares = shares;
      run(rt, RunOptions{.config = cfg}, setup.name + " " + cfg.str());
    }
  }
}

std::vector<cl_int> small_ints(std::size_t n, unsigned seed) {
  std::vector<cl_int> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<cl_int>((i * 37 + seed * 11) % 23);
  return x;
}

// sum(x) feeds add_*(x, y, total): y = x + sum(x).
void expect_sum_added(const std::string& entry) {
  const std::size_t n = 1003;
  const auto x = small_ints(n, 1);
  const cl_int total = std::accumulate(x.begin(), x.end(), 0);
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
    auto s = result<cl_int>("s");
    auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                         k(entry).args(in(xv), out(y), value(s)));
    std::vector<cl_int> got(n, -1);
    cl_int s_host = 0;
    rt.run(tree, {{xv, x}, {y, got}, {s, &s_host}}, options).get();
    EXPECT_EQ(s_host, total) << what;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] + total) << entry << " " << what << " at " << i;
  });
}

}  // namespace

TEST(Values, ScalarByValueInAPipeline) { expect_sum_added("add_value"); }
TEST(Values, ScalarThroughAGlobalPointer) { expect_sum_added("add_pointer"); }
TEST(Values, ScalarThroughAConstantPointer) { expect_sum_added("add_constant"); }

TEST(Values, VectorTypeByValueAndThroughAPointer) {
  const std::size_t n = 501;
  std::vector<cl_float4> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = {{static_cast<float>(i % 5), static_cast<float>(i % 7), static_cast<float>(i % 3), 1.0f}};
  cl_float4 sums{{0, 0, 0, 0}};
  for (const auto& e : x)
    for (int l = 0; l < 4; ++l) sums.s[l] += e.s[l];
  for (const std::string entry : {"dot_lanes", "dot_lanes_pointer"}) {
    for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
      auto xv = vector<cl_float4>(), part = vector<cl_float4>();
      auto y = vector<cl_float>();
      auto s = result<cl_float4>("sums");
      auto tree = pipeline(map_reduce(k("lanes").args(in(xv), out(part)), reduce::sum(part, s)),
                           k(entry).args(in(xv), out(y), value(s)));
      std::vector<cl_float> got(n, -1);
      rt.run(tree, {{xv, x}, {y, got}}, options).get();
      for (std::size_t i = 0; i < n; ++i) {
        const float want = x[i].s[0] * sums.s[0] + x[i].s[1] * sums.s[1] + x[i].s[2] * sums.s[2] + sums.s[3];
        ASSERT_EQ(got[i], want) << entry << " " << what << " at " << i;
      }
    });
  }
}

TEST(Values, StructOfACustomReductionByValueAndThroughAPointer) {
  const std::size_t n = 777;
  const auto x = small_ints(n, 3);
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  for (const std::string entry : {"rescale", "rescale_pointer"}) {
    for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
      auto xv = vector<cl_int>(), y = vector<cl_int>();
      auto part = vector<Range>();
      auto r = result<Range>("range");
      auto tree = pipeline(
          map_reduce(k("to_range").args(in(xv), out(part)),
                     reduce::custom_source(part, r, kKernels, "widen", Range{INT_MAX, INT_MIN}, "values_test.cl")),
          k(entry).args(in(xv), out(y), value(r)));
      std::vector<cl_int> got(n, -1);
      rt.run(tree, {{xv, x}, {y, got}}, options).get();
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], (x[i] - *lo) * 1000 / (*hi - *lo + 1)) << entry << " " << what << " at " << i;
    });
  }
}

TEST(Values, SeveralValuesInOneKernel) {
  const std::size_t n = 640;
  const auto x = small_ints(n, 5);
  const cl_int total = std::accumulate(x.begin(), x.end(), 0), largest = *std::max_element(x.begin(), x.end());
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), p1 = vector<cl_int>(), p2 = vector<cl_int>(), y = vector<cl_int>();
    auto s = result<cl_int>("s"), m = result<cl_int>("m");
    auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(p1)), reduce::sum(p1, s)),
                         map_reduce(k("copy_part").args(in(xv), out(p2)), reduce::max(p2, m)),
                         k("scale_and_add").args(in(xv), out(y), value(m), value(s)));
    std::vector<cl_int> got(n, -1);
    rt.run(tree, {{xv, x}, {y, got}}, options).get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] * largest + total) << what << " at " << i;
  });
}

// Each iteration's maximum feeds the same iteration's flip: x = max(x) - x + 1, five times.
TEST(Values, EachIterationsValueInALoopBody) {
  const std::size_t n = 999;
  const auto x0 = small_ints(n, 7);
  std::vector<cl_int> want = x0;
  for (int it = 0; it < 5; ++it) {
    const cl_int m = *std::max_element(want.begin(), want.end());
    for (auto& v : want) v = m - v + 1;
  }
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), part = vector<cl_int>();
    auto m = result<cl_int>("m");
    auto tree = loop(pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::max(part, m)),
                              k("flip").args(inout(xv), value(m))))
                    .times(5);
    std::vector<cl_int> got = x0;
    rt.run(tree, {{xv, got}}, options).get();
    EXPECT_EQ(got, want) << what;
  });
}

// The same result feeds the iteration's kernel and the loop's predicate: shrink until sum < 100.
TEST(Values, AValueAndTheLoopPredicateReadTheSameResult) {
  const std::size_t n = 512;
  const auto x0 = small_ints(n, 9);
  std::vector<cl_int> want = x0;
  std::size_t iterations = 0;
  for (;;) {
    const cl_int s = std::accumulate(want.begin(), want.end(), 0);
    for (auto& v : want) v = std::max(0, v - 1 - s % 7);
    ++iterations;
    if (s < 100) break;
  }
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), part = vector<cl_int>();
    auto s = result<cl_int>("s");
    auto tree = loop(pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                              k("shrink").args(inout(xv), value(s))))
                    .times(1000)
                    .until(s, [](cl_int v) { return v < 100; });
    std::vector<cl_int> got = x0;
    const Report rep = rt.run(tree, {{xv, got}}, options).get();
    EXPECT_EQ(rep.iterations, iterations) << what;
    EXPECT_EQ(got, want) << what;
  });
}

// A value only pointer parameters read stays on the device alone: its reduction is read back once,
// when the run is over (the bound result and the report get the last iteration's value); split
// over devices every iteration's value is read back and combined.
TEST(Values, AValueOnlyPointersReadIsReadBackOnceOnADeviceAlone) {
  const std::size_t n = 512;
  const auto x0 = small_ints(n, 4);
  std::vector<cl_int> want = x0;
  cl_int last = 0;
  for (int it = 0; it < 6; ++it) {
    last = std::accumulate(want.begin(), want.end(), 0);
    for (auto& v : want) v = std::max(0, v - 1 - last % 7);
  }
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), part = vector<cl_int>();
    auto s = result<cl_int>("s");
    auto tree = loop(pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                              k("shrink").args(inout(xv), value(s))))
                    .times(6);
    std::vector<cl_int> got = x0;
    cl_int s_host = -1;
    const Report rep = rt.run(tree, {{xv, got}, {s, &s_host}}, options).get();
    EXPECT_EQ(got, want) << what;
    EXPECT_EQ(s_host, last) << what;
    EXPECT_EQ(rep.value(s), last) << what;
    std::size_t partitions = 0;
    for (double share : options.config->shares) partitions += share > 0;
    if (partitions == 1) {
      EXPECT_EQ(rep.copies.values.count, 1u) << what;
    } else {
      EXPECT_GE(rep.copies.values.count, 6 * partitions) << what;
    }
  });
}

// A map_reduce's body may take an earlier stage's value (CG's update of x and r, which also
// reduces r.r).
TEST(Values, AMapReduceBodyTakesAnEarlierValue) {
  const std::size_t n = 300;
  const auto x = small_ints(n, 2);
  const cl_int total = std::accumulate(x.begin(), x.end(), 0);
  cl_long want = 0;
  for (cl_int v : x) want += v + total;
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
    auto s = result<cl_int>("s"), s2 = result<cl_int>("s2");
    auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                         map_reduce(k("add_pointer").args(in(xv), out(y), value(s)), reduce::sum(y, s2)));
    cl_int got = 0;
    rt.run(tree, {{xv, x}, {s2, &got}}, options).get();
    EXPECT_EQ(got, want) << what;
  });
}

TEST(ValuesRefused, BeforeTheStageThatProducesIt) {
  Runtime rt;
  auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
  auto s = result<cl_int>("s");
  auto tree = loop(pipeline(k("add_value").args(in(xv), out(y), value(s)),
                            map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s))))
                  .times(2);
  std::vector<cl_int> x(64, 1), got(64);
  expect_error([&] { rt.run(tree, {{xv, x}, {y, got}}).get(); },
               {.node = "add_value", .argument = "value of result 's'", .message = "is read before the map_reduce"});
}

TEST(ValuesRefused, InsideTheMapReduceThatProducesIt) {
  Runtime rt;
  auto xv = vector<cl_int>(), part = vector<cl_int>();
  auto s = result<cl_int>("s");
  auto tree = map_reduce(k("add_value").args(in(xv), out(part), value(s)), reduce::sum(part, s));
  std::vector<cl_int> x(64, 1);
  expect_error([&] { rt.run(tree, {{xv, x}}).get(); },
               {.node = "add_value", .argument = "value of result 's'", .message = "inside the body of"});
}

TEST(ValuesRefused, AResultNoMapReduceProduces) {
  Runtime rt;
  auto xv = vector<cl_int>(), y = vector<cl_int>();
  auto s = result<cl_int>("s");
  auto tree = k("add_value").args(in(xv), out(y), value(s));
  std::vector<cl_int> x(64, 1), got(64);
  expect_error([&] { rt.run(tree, {{xv, x}, {y, got}}).get(); },
               {.node = "add_value", .argument = "value of result 's'", .message = "produced by no map_reduce"});
}

TEST(ValuesRefused, ATypeMismatchWithTheParameter) {
  Runtime rt;
  auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
  auto s = result<cl_int>("s");
  std::vector<cl_int> x(64, 1), got(64);
  for (const std::string entry : {"add_float", "add_float_pointer"}) {
    auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                         k(entry).args(in(xv), out(y), value(s)));
    expect_error([&] { rt.run(tree, {{xv, x}, {y, got}}).get(); },
                 {.node = entry, .argument = "value of result 's'", .message = "holds int but the kernel parameter"});
  }
}

TEST(ValuesRefused, AWritablePointer) {
  Runtime rt;
  auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
  auto s = result<cl_int>("s");
  auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                       k("add_writable").args(in(xv), out(y), value(s)));
  std::vector<cl_int> x(64, 1), got(64);
  expect_error([&] { rt.run(tree, {{xv, x}, {y, got}}).get(); },
               {.node = "add_writable", .argument = "value of result 's'", .message = "is not const"});
}

TEST(ValuesRefused, ByTheDynamicSchedule) {
  Runtime rt;
  auto xv = vector<cl_int>(), part = vector<cl_int>(), y = vector<cl_int>();
  auto s = result<cl_int>("s");
  auto tree = pipeline(map_reduce(k("copy_part").args(in(xv), out(part)), reduce::sum(part, s)),
                       k("add_value").args(in(xv), out(y), value(s)));
  std::vector<cl_int> x(64, 1), got(64);
  Config dynamic;
  dynamic.schedule = "dynamic";
  try {
    rt.run(tree, {{xv, x}, {y, got}}, RunOptions{.config = dynamic}).get();
    FAIL() << "a dynamic schedule ran a tree whose partitions meet for a value";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("as a value"), std::string::npos) << e.what();
  }
}
