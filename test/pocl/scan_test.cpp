// sinew::scan against std::inclusive_scan / std::exclusive_scan: every operator (sum, min, max,
// user functions given as source text, one of them not commutative) and both kinds, on the
// PoCL devices this suite is given (1, 2 or 3), zero-copy and with the last device driven as a
// discrete GPU, over several plans (shares of 0, uneven splits, several queues) and sizes from
// one element to more than one level of blocks. Integer scans must match exactly; float sums
// within a tolerance proportional to the magnitude of what was summed.
#include <sinew/sinew.hpp>

#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

using namespace sinew;

namespace {

using sinew::testing::device_count;
using sinew::testing::runtime;

// Config::parse plans for the suite's devices: each device alone, uneven splits, a device with
// share 0, ratios; discrete runs also give the last device several queues (partitions).
std::vector<std::string> plans(bool discrete) {
  std::vector<std::string> p;
  switch (device_count()) {
    case 1: p = {"0=1"}; break;
    case 2: p = {"0=1,1=0", "0=0,1=1", "0=0.3,1=0.7", "0=0.93,1=0.07"}; break;
    default: p = {"0=1,1=1,2=1", "0=0.2,1=0.5,2=0.3", "0=0.7,1=0,2=0.3", "2=1", "0=5,1=1,2=3"}; break;
  }
  if (discrete) {
    p.push_back(p.back() + ",overlap=3");
  } else {
    // The first CPU split into sub-devices (one worker each, in one context), where this machine
    // offers a fission.
    const auto& fissions = runtime(false).devices().front().fission_configs;
    if (fissions.size() > 1) p.push_back(p.front() + ",fission=" + fissions[1].name);
  }
  return p;
}

const std::vector<std::size_t> kSizes = {1, 7, 255, 256, 257, 1000003};

const char* kUserOps = R"CL(
int bit_xor(int a, int b) { return a ^ b; }
// x -> m*x + c, applied left then right: associative, not commutative (uint wraps, exactly as in C++).
uint2 affine(uint2 l, uint2 r) { return (uint2)(l.x * r.x, r.x * l.y + r.y); }
)CL";

template <class T>
std::vector<T> data_of(std::size_t n) {
  std::vector<T> v(n);
  std::uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto r = static_cast<std::int64_t>((s >> 33) % 2001) - 1000;  // -1000 .. 1000
    if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(r) / T(1000);
    else x = static_cast<T>(r);
  }
  return v;
}

// An exact comparison, or (tolerance > 0) one within tolerance * (the sum of the magnitudes of the
// elements the i-th result combines) + a little.
template <class T>
std::string compare(const std::vector<T>& got, const std::vector<T>& want, const std::vector<T>& data,
                    bool exclusive, double tolerance) {
  double magnitude = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!exclusive) magnitude += std::fabs(static_cast<double>(data[i]));
    const bool same = tolerance > 0 ? std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <=
                                          tolerance * magnitude + 1e-6
                                    : got[i] == want[i];
    if (!same)
      return "element " + std::to_string(i) + " of " + std::to_string(got.size()) + ": got " + std::to_string(got[i]) +
             ", want " + std::to_string(want[i]);
    if (exclusive) magnitude += std::fabs(static_cast<double>(data[i]));
  }
  return "";
}

std::string compare(const std::vector<cl_uint2>& got, const std::vector<cl_uint2>& want, const std::vector<cl_uint2>&,
                    bool, double) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].s[0] != want[i].s[0] || got[i].s[1] != want[i].s[1])
      return "element " + std::to_string(i) + " of " + std::to_string(got.size()) + ": got (" +
             std::to_string(got[i].s[0]) + ", " + std::to_string(got[i].s[1]) + "), want (" +
             std::to_string(want[i].s[0]) + ", " + std::to_string(want[i].s[1]) + ")";
  return "";
}

// Scans data_of<T>(n) with sinew (in place, or into a second vector) under `plan` and compares
// with the standard library's scan using `ref` and `identity`.
template <class T, class Ref>
std::string check(bool discrete, const std::string& plan, std::size_t n, const ScanOp& op, ScanKind kind, Ref ref,
                  T identity, bool in_place, double tolerance = 0, std::vector<T> data = {}) {
  if constexpr (std::is_arithmetic_v<T>)
    if (data.empty()) data = data_of<T>(n);
  std::vector<T> want(n);
  if (kind == ScanKind::inclusive) std::inclusive_scan(data.begin(), data.end(), want.begin(), ref);
  else std::exclusive_scan(data.begin(), data.end(), want.begin(), identity, ref);
  auto v = sinew::vector<T>().name("v");
  auto w = sinew::vector<T>().name("w");
  std::vector<T> host = data, result(n);
  Report r;
  if (in_place) {
    r = runtime(discrete).run(scan(v, op, kind), {{v, host}}, {.plan = plan}).get();
    result = host;
  } else {
    r = runtime(discrete).run(scan(v, w, op, kind), {{v, host}, {w, result}}, {.plan = plan}).get();
    if (n && std::memcmp(host.data(), data.data(), n * sizeof(T)) != 0) return "the input changed";
  }
  std::string e = compare(result, want, data, kind == ScanKind::exclusive, tolerance);
  return e.empty() ? e : e + "\n" + r.decomposition;
}

std::string where(bool discrete, const std::string& plan, std::size_t n, ScanKind kind, bool in_place) {
  return std::string(discrete ? "discrete" : "zero-copy") + " plan " + plan + " n=" + std::to_string(n) +
         (kind == ScanKind::inclusive ? " inclusive" : " exclusive") + (in_place ? " in place" : " in->out");
}

// Every plan, size, kind, both modes; in place and into a second vector alternately.
template <class Body>
void every_split(const std::vector<std::size_t>& sizes, Body body) {
  for (const bool discrete : {false, true}) {
    const auto ps = plans(discrete);
    for (std::size_t p = 0; p < ps.size(); ++p)
      for (std::size_t s = 0; s < sizes.size(); ++s)
        for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
          const bool in_place = (p + s) % 2 == 0;
          EXPECT_EQ(body(discrete, ps[p], sizes[s], kind, in_place), "")
              << where(discrete, ps[p], sizes[s], kind, in_place);
        }
  }
}

}  // namespace

TEST(Scan, IntSum) {
  every_split(kSizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_int>(d, p, n, scan_op::sum(), k, std::plus<cl_int>(), 0, ip);
  });
}

TEST(Scan, IntMin) {
  every_split(kSizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_int>(d, p, n, scan_op::min(), k, [](cl_int a, cl_int b) { return std::min(a, b); },
                         std::numeric_limits<cl_int>::max(), ip);
  });
}

TEST(Scan, IntMax) {
  every_split(kSizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_int>(d, p, n, scan_op::max(), k, [](cl_int a, cl_int b) { return std::max(a, b); },
                         std::numeric_limits<cl_int>::lowest(), ip);
  });
}

TEST(Scan, UserFunctionFromSource) {
  every_split(kSizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_int>(d, p, n, scan_op::custom_source<cl_int>(kUserOps, "bit_xor", 0, "ops.cl"), k,
                         std::bit_xor<cl_int>(), 0, ip);
  });
}

// A function that does not commute, on a vector type: any operand out of order shows.
TEST(Scan, NonCommutativeUserFunctionOnAVectorType) {
  auto affine = [](cl_uint2 l, cl_uint2 r) {
    cl_uint2 o;
    o.s[0] = l.s[0] * r.s[0];
    o.s[1] = r.s[0] * l.s[1] + r.s[1];
    return o;
  };
  cl_uint2 identity;
  identity.s[0] = 1;
  identity.s[1] = 0;
  every_split({1, 7, 257, 1000003}, [&](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    std::vector<cl_uint2> data(n);
    for (std::size_t i = 0; i < n; ++i) {
      data[i].s[0] = static_cast<cl_uint>(2 * (i % 5) + 1);  // odd: the products never become 0
      data[i].s[1] = static_cast<cl_uint>(i * 2654435761u);
    }
    return check<cl_uint2>(d, p, n, scan_op::custom_source<cl_uint2>(kUserOps, "affine", identity, "ops.cl"), k, affine,
                           identity, ip, 0, data);
  });
}

TEST(Scan, FloatSumWithinTheMagnitudeTolerance) {
  every_split(kSizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    // The reference sums in double: float's own sequential rounding is not the standard.
    const auto data = data_of<cl_float>(n);
    std::vector<double> exact(data.begin(), data.end());
    auto v = sinew::vector<cl_float>().name("v"), w = sinew::vector<cl_float>().name("w");
    std::vector<float> host = data, out(n);
    if (ip) runtime(d).run(scan(v, scan_op::sum(), k), {{v, host}}, {.plan = p}).get();
    else runtime(d).run(scan(v, w, scan_op::sum(), k), {{v, data}, {w, out}}, {.plan = p}).get();
    const auto& result = ip ? host : out;
    std::vector<double> want(n), got(result.begin(), result.end());
    if (k == ScanKind::inclusive) std::inclusive_scan(exact.begin(), exact.end(), want.begin());
    else std::exclusive_scan(exact.begin(), exact.end(), want.begin(), 0.0);
    return compare(got, want, exact, k == ScanKind::exclusive, 1e-5);
  });
}

// Each type at sizes within one block, across blocks and, with 100003 (over 2048 elements on every
// device of every plan), with a second level of block sums per partition; the int tests above
// take the million-element size.
TEST(Scan, OtherScalarTypes) {
  const std::vector<std::size_t> sizes = {7, 257, 100003};
  every_split(sizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_uint>(d, p, n, scan_op::sum(), k, std::plus<cl_uint>(), 0u, ip);  // wraps, exactly
  });
  every_split(sizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    auto data = data_of<cl_long>(n);
    for (auto& x : data) x *= 4000000000LL;  // sums beyond 32 bits
    return check<cl_long>(d, p, n, scan_op::sum(), k, std::plus<cl_long>(), 0, ip, 0, data);
  });
  every_split(sizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    auto data = data_of<cl_ulong>(n);
    return check<cl_ulong>(d, p, n, scan_op::min(), k, [](cl_ulong a, cl_ulong b) { return std::min(a, b); },
                           std::numeric_limits<cl_ulong>::max(), ip, 0, data);
  });
  every_split(sizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_float>(d, p, n, scan_op::max(), k, [](cl_float a, cl_float b) { return std::max(a, b); },
                           -std::numeric_limits<cl_float>::infinity(), ip);
  });
  every_split(sizes, [](bool d, const std::string& p, std::size_t n, ScanKind k, bool ip) {
    return check<cl_double>(d, p, n, scan_op::sum(), k, std::plus<cl_double>(), 0.0, ip, 1e-12);
  });
}

// More than two levels of blocks (a block is at most 2048 elements: 2048^2 + 1 needs three).
TEST(Scan, ThreeLevelsOfBlocks) {
  const std::size_t n = 2048 * 2048 + 1;
  for (const bool d : {false, true}) {
    const std::string p = plans(d).back();
    EXPECT_EQ(check<cl_int>(d, p, n, scan_op::sum(), ScanKind::inclusive, std::plus<cl_int>(), 0, true), "") << p;
  }
}

// A scan between kernels in a pipeline, and again and again in a loop (with and without a
// predicate), on every split.
TEST(Scan, InPipelinesAndLoops) {
  const char* kSrc = R"CL(
__kernel void add1(__global uint* v) { v[get_global_id(0)] += 1; }
__kernel void twice(__global const uint* a, __global uint* b) { b[get_global_id(0)] = 2 * a[get_global_id(0)]; }
)CL";
  for (const bool d : {false, true})
    for (const auto& plan : plans(d))
      for (const std::size_t n : {5u, 3001u}) {
        const auto data = data_of<cl_uint>(n);
        auto A = sinew::vector<cl_uint>().name("a"), B = sinew::vector<cl_uint>().name("b");
        auto add1 = kernel_source(kSrc, "add1", "p.cl").args(inout(A));
        auto twice = kernel_source(kSrc, "twice", "p.cl").args(in(A), out(B));
        std::vector<cl_uint> a = data, b(n);
        runtime(d).run(pipeline(add1, scan(A, scan_op::sum(), ScanKind::exclusive), twice), {{A, a}, {B, b}},
                       {.plan = plan}).get();
        std::vector<cl_uint> wa = data, wb(n);
        for (auto& x : wa) x += 1;
        std::exclusive_scan(wa.begin(), wa.end(), wa.begin(), 0u);
        for (std::size_t i = 0; i < n; ++i) wb[i] = 2 * wa[i];
        EXPECT_EQ(a, wa) << "pipeline " << where(d, plan, n, ScanKind::exclusive, true);
        EXPECT_EQ(b, wb) << "pipeline " << where(d, plan, n, ScanKind::exclusive, true);

        a = data;
        runtime(d).run(loop(pipeline(scan(A, scan_op::sum()), add1)).times(3), {{A, a}}, {.plan = plan}).get();
        wa = data;
        for (int it = 0; it < 3; ++it) {
          std::inclusive_scan(wa.begin(), wa.end(), wa.begin());
          for (auto& x : wa) x += 1;
        }
        EXPECT_EQ(a, wa) << "loop " << where(d, plan, n, ScanKind::inclusive, true);

        // Until the last prefix maximum passes a bound: the predicate's barrier and the scan's meet
        // in the same iteration.
        auto C = sinew::vector<cl_int>().name("c");
        auto top = result<cl_int>("top");
        std::vector<cl_int> c(n, 1);
        auto body = map_reduce(scan(C, scan_op::sum()), reduce::max(C, top));
        const auto report = runtime(d).run(loop(body).until(top, [](cl_int t) { return t > 100000; }).times(10),
                                           {{C, c}}, {.plan = plan}).get();
        std::vector<cl_int> wc(n, 1);
        std::size_t iterations = 0;
        do {
          std::inclusive_scan(wc.begin(), wc.end(), wc.begin());
          ++iterations;
        } while (wc.back() <= 100000 && iterations < 10);
        EXPECT_EQ(report.iterations, iterations) << where(d, plan, n, ScanKind::inclusive, true);
        EXPECT_EQ(c, wc) << "loop until " << where(d, plan, n, ScanKind::inclusive, true);
      }
}

// The scan's kernels are timed like any kernel's: in the report, under the scan's node.
TEST(Scan, KernelsAppearInTheReport) {
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> host(100000, 1);
  const auto r = runtime(false).run(scan(v, scan_op::sum()).name("prefix"), {{v, host}},
                                    {.plan = plans(false).front(), .profile = true}).get();
  bool found = false;
  for (const auto& k : r.kernels) found = found || k.node.find("prefix") != std::string::npos;
  EXPECT_TRUE(found) << r.str();
  EXPECT_EQ(host.back(), 100000);
}

// Bad operators are refused before any device work, naming the node, the argument and the fix.
TEST(Scan, BadOperatorsAreRefusedBeforeDeviceWork) {
  auto f4 = sinew::vector<cl_float4>().name("f4");
  std::vector<cl_float4> h4(8);
  try {
    runtime(false).run(scan(f4, scan_op::sum()), {{f4, h4}}).get();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scalar element types"), std::string::npos) << e.what();
    EXPECT_NE(e.node().find("scan"), std::string::npos) << e.what();
    EXPECT_FALSE(e.context().fix.empty());
  }
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> h(8, 3);
  try {
    runtime(false).run(scan(v, scan_op::custom_source<cl_long>(kUserOps, "bit_xor", 0)), {{v, h}}).get();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "scan identity") << e.what();
  }
  EXPECT_EQ(h, std::vector<cl_int>(8, 3));
}

// The discrete device's overlap queues each get a partition: carries cross queues of one device
// as well as devices.
TEST(Scan, OverlapQueuesSplitTheDiscreteDevice) {
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> host(10007, 1);
  const auto r = runtime(true).run(scan(v, scan_op::sum()), {{v, host}}, {.plan = plans(true).back()}).get();
  std::size_t discrete_parts = 0;
  for (const auto& p : r.partitions) discrete_parts += p.device == device_count() - 1;
  EXPECT_EQ(discrete_parts, 3u) << r.decomposition;
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], static_cast<cl_int>(i + 1)) << i;
}
