// Reductions of OpenCL vector types (the built-in sum, min and max lane by lane) and of user
// structs (a 64-bin histogram, an argmax pair; the reducer from a file and from source text),
// against plain C++ references, on every PoCL device this process sees (1, 2 or 3: the suite is
// registered once per count), for many splits, zero-copy and with the last device discrete.
// Values are small integers, so float sums are exact and every comparison is bitwise.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <memory>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace sinew;

namespace {

const std::string kStructFile = SINEW_TEST_DATA_DIR "/struct_reducers.cl";

struct Hist {
  cl_uint bins[64];
};
struct ArgMax {
  cl_float value;
  cl_uint index;
};

// The same structs as struct_reducers.cl spells them, spelled otherwise: a reducer given as text.
const char* kStructText = R"CL(
struct histogram { uint bins[64]; };
struct histogram add_histograms(struct histogram a, struct histogram b) {
  for (int i = 0; i < 64; ++i) a.bins[i] += b.bins[i];
  return a;
}
typedef struct { float v; uint i; } best_t;
best_t best_of(best_t a, best_t b) { return a.v > b.v || (a.v == b.v && a.i < b.i) ? a : b; }
)CL";

// One runtime per device setting: all devices zero-copy, or the last one discrete.
struct Setup {
  std::string name;
  RuntimeOptions options;
};
std::vector<Setup> setups() {
  const std::size_t count = Runtime().devices().size();
  return {{"zero_copy", {}}, {"discrete", RuntimeOptions{.discrete = std::to_string(count - 1)}}};
}

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

// Runs `run(rt, options, what)` for every setup and split.
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

// b = a + a over any OpenCL type, its source made for the type's name.
Kernel twice(const VectorRef& a, const VectorRef& b) {
  const std::string t = a.type().name;
  const std::string fp64 = a.type().scalar == ScalarKind::f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
  return kernel_source(fp64 + "__kernel void twice(__global const " + t + "* a, __global " + t +
                           "* b) { size_t i = get_global_id(0); b[i] = a[i] + a[i]; }",
                       "twice", "twice_" + t + ".cl")
      .args(in(a), out(b));
}

template <class V>
std::string lanes_text(const V& v) {
  std::ostringstream s;
  for (unsigned i = 0; i < element_type<V>().lanes; ++i) s << (i ? ", " : "(") << +v.s[i];
  return s.str() + ")";
}

// sum (read from the Report), min (bound to host memory) and max (a loop predicate's value) of
// 2a over n elements of the vector type V, each lane against a C++ reference.
template <class V>
void check_builtins(std::size_t n) {
  using L = std::remove_reference_t<decltype(V{}.s[0])>;
  const unsigned lanes = element_type<V>().lanes;
  std::vector<V> a(n);
  for (std::size_t i = 0; i < n; ++i)
    for (unsigned l = 0; l < lanes; ++l) {
      const long x = static_cast<long>((i * 7919 + l * 104729) % 61);
      a[i].s[l] = static_cast<L>(std::is_signed_v<L> ? x - 30 : x);
    }
  V sum{}, mn{}, mx{};
  for (unsigned l = 0; l < lanes; ++l) {
    L s = 0, lo = static_cast<L>(2 * a[0].s[l]), hi = lo;
    for (const V& v : a) {
      const L x = static_cast<L>(v.s[l] + v.s[l]);
      s = static_cast<L>(s + x);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    sum.s[l] = s, mn.s[l] = lo, mx.s[l] = hi;
  }

  auto A = sinew::vector<V>().name("a");
  auto B = sinew::vector<V>().name("b"), C = sinew::vector<V>().name("c"), D = sinew::vector<V>().name("d");
  auto rsum = result<V>("sum"), rmin = result<V>("min"), rmax = result<V>("max");
  V seen_max{};
  std::size_t predicate_calls = 0;
  auto tree = pipeline(map_reduce(twice(A, B), reduce::sum(B, rsum)), map_reduce(twice(A, C), reduce::min(C, rmin)),
                       loop(map_reduce(twice(A, D), reduce::max(D, rmax))).until(rmax, [&](const V& v) {
                         seen_max = v;
                         return ++predicate_calls == 2;
                       }).times(5));
  const std::string type = element_type<V>().name;
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    V bound_min{};
    predicate_calls = 0;
    Report report = rt.run(tree, {{A, a}, {rmin, &bound_min}}, options).get();
    const V got_sum = report.value(rsum);
    for (unsigned l = 0; l < lanes; ++l) {
      ASSERT_EQ(got_sum.s[l], sum.s[l]) << type << " n=" << n << " " << what << " sum lane " << l << ": got "
                                        << lanes_text(got_sum) << " want " << lanes_text(sum);
      ASSERT_EQ(bound_min.s[l], mn.s[l]) << type << " n=" << n << " " << what << " min lane " << l;
      ASSERT_EQ(seen_max.s[l], mx.s[l]) << type << " n=" << n << " " << what << " max lane " << l;
    }
    ASSERT_EQ(report.iterations, 2u) << what;
    // The report's text shows the vector lane by lane: "(a, b, ...)".
    const std::string text = report.str();
    const std::size_t at = text.find("result sum = (");
    ASSERT_NE(at, std::string::npos) << text;
    const std::string line = text.substr(at, text.find('\n', at) - at);
    ASSERT_EQ(static_cast<unsigned>(std::count(line.begin(), line.end(), ',')), lanes - 1) << line;
  });
}

// Sizes below one work-group, odd ones, and more than the first pass's 64 groups of 256.
const std::size_t kSizes[] = {1, 7, 255, 1001, 20011};

TEST(VectorReduction, Float4) { for (auto n : kSizes) check_builtins<cl_float4>(n); }
TEST(VectorReduction, Int2) { for (auto n : kSizes) check_builtins<cl_int2>(n); }
TEST(VectorReduction, Uint16) { for (auto n : kSizes) check_builtins<cl_uint16>(n); }
TEST(VectorReduction, Float16) { for (auto n : kSizes) check_builtins<cl_float16>(n); }
TEST(VectorReduction, Uchar8WrapsLikeTheDevice) { for (auto n : {7u, 1001u}) check_builtins<cl_uchar8>(n); }
TEST(VectorReduction, Double2AndLong4) {
  for (auto n : {7u, 1001u}) {
    check_builtins<cl_double2>(n);
    check_builtins<cl_long4>(n);
  }
}

// A grey image of `rows` rows, the reference histogram (bin = pixel / 4) and the per-row body.
struct Image {
  std::size_t width, rows;
  std::vector<cl_uchar> pixels;
  Hist want{};
  Image(std::size_t w, std::size_t r) : width(w), rows(r), pixels(w * r) {
    std::uint32_t s = 7;
    for (auto& p : pixels) {
      s = s * 1664525u + 1013904223u;
      p = static_cast<cl_uchar>(s >> 24);
      want.bins[p >> 2]++;
    }
  }
};

void check_histogram(const std::string& how, std::size_t width, std::size_t rows) {
  Image img(width, rows);
  auto P = sinew::vector<cl_uchar>().unit(width).name("pixels");
  auto H = sinew::vector<Hist>().name("partial");
  auto total = result<Hist>("histogram");
  auto body = kernel(kStructFile, "row_hist").args(in(P), out(H), scalar(cl_uint(width))).range_of(H);
  const Hist zero{};
  Reducer r = how == "file" ? reduce::custom(H, total, kStructFile, "hist_add", zero)
                            : reduce::custom_source(H, total, kStructText, "add_histograms", zero, "histogram.cl");
  auto tree = map_reduce(body, r);
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    std::vector<Hist> partial(rows);
    Hist bound{};
    auto report = rt.run(tree, {{P, img.pixels}, {H, partial}, {total, &bound}}, options).get();
    const Hist got = report.value(total);
    for (int b = 0; b < 64; ++b) {
      ASSERT_EQ(got.bins[b], img.want.bins[b]) << how << " " << width << "x" << rows << " " << what << " bin " << b;
      ASSERT_EQ(bound.bins[b], img.want.bins[b]) << how << " " << what << " bin " << b;
    }
  });
}

TEST(StructReduction, HistogramByFile) {
  for (auto [w, r] : {std::pair<std::size_t, std::size_t>{16, 1}, {33, 7}, {64, 301}, {5, 2000}})
    check_histogram("file", w, r);
}
TEST(StructReduction, HistogramBySourceText) {
  for (auto [w, r] : {std::pair<std::size_t, std::size_t>{16, 1}, {33, 7}, {64, 301}}) check_histogram("text", w, r);
}

void check_argmax(const std::string& how, std::size_t n) {
  std::vector<cl_float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 997);
  // The largest value appears several times when n is large: the lowest index wins.
  ArgMax want{x[0], 0};
  for (std::size_t i = 1; i < n; ++i)
    if (x[i] > want.value) want = {x[i], static_cast<cl_uint>(i)};
  auto X = sinew::vector<cl_float>().name("x");
  auto T = sinew::vector<ArgMax>().name("tagged");
  auto best = result<ArgMax>("best");
  const ArgMax identity{-INFINITY, 0xffffffffu};
  Reducer r = how == "file" ? reduce::custom(T, best, kStructFile, "argmax_pick", identity)
                            : reduce::custom_source(T, best, kStructText, "best_of", identity, "best.cl");
  auto tree = map_reduce(kernel(kStructFile, "tag").args(in(X), out(T), offset(X)), r);
  for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
    const ArgMax got = rt.run(tree, {{X, x}}, options).get().value(best);
    ASSERT_EQ(got.value, want.value) << how << " n=" << n << " " << what;
    ASSERT_EQ(got.index, want.index) << how << " n=" << n << " " << what;
  });
}

TEST(StructReduction, ArgmaxByFileAndBySourceText) {
  for (std::size_t n : {1u, 9u, 1001u, 20011u}) {
    check_argmax("file", n);
    check_argmax("text", n);
  }
}

// A struct far larger than a kernel argument may be (1 KiB on PoCL) and than a 256-item group's
// local memory: 16 KiB. The reduction's groups shrink to what local memory holds (PoCL: 1 MiB,
// groups of 64); a type that does not fit even a group of one is refused, naming the sizes.
namespace big {
constexpr std::size_t kWords = 4096;
struct Big {
  cl_uint w[kWords];
};
const char* kSource = R"CL(
typedef struct { uint w[4096]; } big;
big big_add(big a, big b) {
  for (int k = 0; k < 4096; ++k) a.w[k] += b.w[k];
  return a;
}
__kernel void big_fill(__global big* out, uint off) {
  const uint i = off + (uint)get_global_id(0);
  for (uint k = 0; k < 4096; ++k) out[get_global_id(0)].w[k] = (i * 31u + k) % 7u;
}
)CL";
}  // namespace big

TEST(StructReduction, LargerThanAKernelArgumentAndAGroupsLocalMemory) {
  using big::Big;
  for (std::size_t n : {1u, 70u, 333u}) {
    auto B = sinew::vector<Big>(n).name("big");
    auto total = result<Big>("total");
    auto tree = map_reduce(kernel_source(big::kSource, "big_fill", "big.cl").args(out(B), offset(B)),
                           reduce::custom_source(B, total, big::kSource, "big_add", Big{}, "big.cl"));
    std::vector<cl_uint> want(big::kWords, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < big::kWords; ++k) want[k] += static_cast<cl_uint>((i * 31 + k) % 7);
    for_every_plan([&](Runtime& rt, const RunOptions& options, const std::string& what) {
      auto got = std::make_unique<Big>();
      rt.run(tree, {{total, got.get()}}, options).get();
      for (std::size_t k = 0; k < big::kWords; ++k) ASSERT_EQ(got->w[k], want[k]) << "n=" << n << " " << what << " word " << k;
    });
  }
}

TEST(StructReduction, ATypeLargerThanLocalMemoryIsRefused) {
  struct Huge {
    cl_uint w[(4u << 20) / 4 + 1];  // 4 MiB + 4 bytes
  };
  Runtime rt;
  for (const auto& d : rt.devices())
    if (d.local_memory >= sizeof(Huge)) GTEST_SKIP() << d.id() << " has " << d.local_memory << " bytes of local memory";
  const std::string source = "typedef struct { uint w[" + std::to_string(sizeof(Huge) / 4) + "]; } huge;\n" +
                             "huge huge_add(huge a, huge b) { a.w[0] += b.w[0]; return a; }\n" +
                             "__kernel void huge_fill(__global huge* out) { out[get_global_id(0)].w[0] = 1; }\n";
  auto H = sinew::vector<Huge>(2).name("h");
  Reducer r = reduce::custom_source_bytes(H, result<Huge>("sum"), source, "huge_add", "huge.cl");
  r.identity.assign(sizeof(Huge), 0);
  try {
    rt.run(map_reduce(kernel_source(source, "huge_fill", "huge.cl").args(out(H)), r), {}).get();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the device's"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(sizeof(Huge)) + " bytes"), std::string::npos) << e.what();
    EXPECT_EQ(e.argument(), "reducer") << e.what();
    EXPECT_FALSE(e.context().fix.empty());
  }
}

// A struct the host-side reader cannot measure (a macro as the array bound) whose size differs
// from the C++ one: the reduction kernels refuse to compile, and the build error says why.
TEST(StructReduction, ASizeMismatchTheReaderCannotSeeFailsTheKernelBuild) {
  struct Four {
    cl_uint w[4];
  };
  const std::string source = "#define WORDS 8\ntypedef struct { uint w[WORDS]; } eight;\n"
                             "eight eight_add(eight a, eight b) { a.w[0] += b.w[0]; return a; }\n"
                             "__kernel void four_fill(__global uint4* out) { out[get_global_id(0)] = (uint4)(1); }\n";
  auto F = sinew::vector<Four>(4).name("f");
  auto tree = map_reduce(kernel_source(source, "four_fill", "eight.cl").args(out(F)),
                         reduce::custom_source(F, result<Four>("sum"), source, "eight_add", Four{}, "eight.cl"));
  Runtime rt;
  try {
    rt.run(tree, {}).get();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'eight' as 'eight.cl' defines it is not 16 bytes"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.argument(), "reducer input 'f'") << e.what();
    EXPECT_FALSE(e.context().fix.empty());
    EXPECT_NE(e.node().find("map_reduce"), std::string::npos) << e.what();
  }
}

}  // namespace
