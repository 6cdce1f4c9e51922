// Reductions of vector types and structs, the parts that need no device: reading the struct's
// OpenCL C name and layout from the user's source, the host combine lane by lane, and the errors
// the tree check gives before any device work.
#include "exec/reduce.hpp"
#include "tree/analysis.hpp"
#include "tree/source_text.hpp"

#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace sinew;
using sinew::testing::expect_error;
using sinew::testing::Expect;
using detail::first_param_type;
using detail::opencl_type_layout;

namespace {

struct Hist {
  cl_uint bins[64];
};
struct ArgMax {
  cl_float value;
  cl_uint index;
};

const char* kStructs = R"CL(
// A 64-bin histogram: typedef of an anonymous struct.
typedef struct { uint bins[64]; } hist;
hist hist_merge(hist a, hist b) {
  for (int i = 0; i < 64; ++i) a.bins[i] += b.bins[i];
  return a;
}
/* a tagged struct with a typedef of the same name */
typedef struct argmax { float value; uint index; } argmax;
struct argmax argmax_pick(const struct argmax a, struct argmax b);  // a prototype first
struct argmax argmax_pick(const struct argmax a, struct argmax b) {
  if (a.value != b.value) return a.value > b.value ? a : b;
  return a.index <= b.index ? a : b;
}
struct padded { char c; float4 v; };
struct with3 { float3 p; unsigned int n; };
struct nested { struct argmax best; double weight; short tags[3]; };
typedef float2 pair;
struct of_pairs { pair a, b[2]; uchar u; };
#define N 8
struct by_macro { uint bins[N]; };
typedef struct { char c; int i; } __attribute__((packed)) packed_t;
__kernel void fill(__global hist* h) {}
__kernel void pairs(__global float4* p) {}
__kernel void tag(__global argmax* p) {}
)CL";

TEST(ReduceTypes, ReadsTheElementTypeFromTheFunctionsFirstParameter) {
  EXPECT_EQ(first_param_type(kStructs, "hist_merge"), "hist");
  EXPECT_EQ(first_param_type(kStructs, "argmax_pick"), "struct argmax");  // the definition, not the prototype
  EXPECT_EQ(first_param_type("float2 f(float2 a, float2 b) { return a + b; }", "f"), "float2");
  EXPECT_EQ(first_param_type("#define f(a, b) ((a) + (b))\nuint g(uint x) { return f(x, x); }", "f"), "");
  EXPECT_EQ(first_param_type("int f(__global int* a, int b) { return b; }", "f"), "");  // no value parameter
  EXPECT_EQ(first_param_type("int ff(int a, int b) { return a; }", "f"), "");
}

TEST(ReduceTypes, MeasuresStructsUnderOpenCLLayoutRules) {
  auto size = [](const std::string& type) -> long {
    auto l = opencl_type_layout(kStructs, type);
    return l ? static_cast<long>(l->size) : -1;
  };
  EXPECT_EQ(size("hist"), 256);
  EXPECT_EQ(size("argmax"), 8);
  EXPECT_EQ(size("struct argmax"), 8);
  EXPECT_EQ(size("struct padded"), 32);  // float4 aligned to 16
  EXPECT_EQ(size("struct with3"), 32);   // float3 is 16 bytes, the struct padded to 16
  EXPECT_EQ(size("struct nested"), 24);  // 8 + 8 + 3 * 2, padded to 8
  EXPECT_EQ(size("struct of_pairs"), 32);
  EXPECT_EQ(size("float16"), 64);
  EXPECT_EQ(size("struct by_macro"), -1);  // a macro bound: left to the kernel's compile-time check
  EXPECT_EQ(size("packed_t"), -1);         // attributes change the layout: not read
  EXPECT_EQ(size("struct missing"), -1);
  EXPECT_EQ(opencl_type_layout(kStructs, "struct padded")->align, 16u);
}

TEST(ReduceTypes, CombinesPartitionsLaneByLane) {
  auto bytes = [](auto v) {
    std::vector<unsigned char> b(sizeof(v));
    std::memcpy(b.data(), &v, sizeof(v));
    return b;
  };
  const cl_int4 a = {{1, -5, 7, 2147483647}}, b = {{4, 3, -9, 1}};
  const auto t = element_type<cl_int4>();
  auto sum = detail::combine_builtin(Reducer::Op::sum, {bytes(a), bytes(b)}, t).as<cl_int4>();
  auto mn = detail::combine_builtin(Reducer::Op::min, {bytes(a), bytes(b)}, t).as<cl_int4>();
  auto mx = detail::combine_builtin(Reducer::Op::max, {bytes(a), bytes(b)}, t).as<cl_int4>();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(sum.s[i], static_cast<cl_int>(static_cast<std::uint32_t>(a.s[i]) + static_cast<std::uint32_t>(b.s[i])));
    EXPECT_EQ(mn.s[i], std::min(a.s[i], b.s[i]));
    EXPECT_EQ(mx.s[i], std::max(a.s[i], b.s[i]));
  }
  // Identities fill every lane.
  auto id = detail::identity_of(Reducer::Op::min, element_type<cl_float16>());
  ASSERT_EQ(id.size(), sizeof(cl_float16));
  cl_float16 f;
  std::memcpy(&f, id.data(), sizeof f);
  for (float x : f.s) EXPECT_EQ(x, INFINITY);
}

// --- errors before device work -----------------------------------------------------------------


void analyze(const Node& t, const std::vector<Binding>& b = {}) { detail::analyze(*t.impl(), b); }

Kernel fill(const VectorRef& h) { return kernel_source(kStructs, "fill", "s.cl").args(out(h)); }

TEST(ReduceTypes, ABuiltInOperatorOnAStructAsksForACustomFunction) {
  auto h = sinew::vector<Hist>(8).name("h");
  auto r = result<Hist>("total");
  expect_error([&] { analyze(map_reduce(fill(h), reduce::sum(h, r))); },
               {"map_reduce", "reducer input 'h'", "built-in sum works on OpenCL scalar and vector types"});
  EXPECT_NO_THROW(analyze(map_reduce(fill(h), reduce::custom_source(h, r, kStructs, "hist_merge", Hist{}, "s.cl"))));
}

TEST(ReduceTypes, TheIdentityMustHaveTheElementsSize) {
  auto h = sinew::vector<Hist>(8).name("h");
  auto r = result<Hist>("total");
  Reducer red = reduce::custom_source_bytes(h, r, kStructs, "hist_merge", "s.cl");
  red.identity.assign(4, 0);
  expect_error([&] { analyze(map_reduce(fill(h), red)); }, {"map_reduce", "reducer identity", "the identity is 4 bytes"});
}

TEST(ReduceTypes, TheResultMustHaveTheVectorsElementType) {
  auto p = sinew::vector<cl_float4>(8).name("p");
  auto body = kernel_source(kStructs, "pairs", "s.cl").args(out(p));
  auto wrong = result<cl_float>("s");
  expect_error([&] { analyze(map_reduce(body, reduce::sum(p, wrong))); },
               {"map_reduce", "result 's'", "differs from the reduced vector's element type (float4)"});
  auto same_size = result<cl_int4>("s4");  // as many bytes, another type
  expect_error([&] { analyze(map_reduce(body, reduce::max(p, same_size))); },
               {"map_reduce", "result 's4'", "result<cl_float4>"});
  EXPECT_NO_THROW(analyze(map_reduce(body, reduce::min(p, result<cl_float4>("ok")))));
}

TEST(ReduceTypes, AStructOfAnotherSizeInOpenCLIsRefused) {
  struct Wide {
    cl_float value;
    cl_uint index;
    cl_uint extra;
  };
  auto a = sinew::vector<Wide>(8).name("a");
  auto body = kernel_source(kStructs, "tag", "s.cl").args(out(a));
  expect_error([&] { analyze(map_reduce(body, reduce::custom_source(a, result<Wide>("best"), kStructs, "argmax_pick",
                                                                    Wide{}, "s.cl"))); },
               {"map_reduce", "reducer input 'a'", "'struct argmax' is 8 bytes in OpenCL C ('s.cl') but 12 bytes in C++"});
  auto good = sinew::vector<ArgMax>(8).name("g");
  EXPECT_NO_THROW(analyze(map_reduce(kernel_source(kStructs, "tag", "s.cl").args(out(good)),
                                     reduce::custom_source(good, result<ArgMax>("best"), kStructs, "argmax_pick",
                                                           ArgMax{}, "s.cl"))));
}

TEST(ReduceTypes, AStructThatCannotBeNamedIsRefused) {
  const std::string by_macro = std::string(kStructs) + "#define merge(a, b) hist_merge(a, b)\n";
  auto h = sinew::vector<Hist>(8).name("h");
  expect_error([&] { analyze(map_reduce(fill(h), reduce::custom_source(h, result<Hist>("t"), by_macro, "merge", Hist{},
                                                                       "m.cl"))); },
               {"map_reduce", "reducer input 'h'", "its OpenCL C name cannot be read"});
  // Naming it explicitly is the way out.
  Reducer named = reduce::custom_source(h, result<Hist>("t2"), by_macro, "merge", Hist{}, "m.cl");
  named.type_name = "hist";
  EXPECT_NO_THROW(analyze(map_reduce(fill(h), named)));
  EXPECT_NE(detail::reduce_source(named, h.type()).find("#define SINEW_T hist"), std::string::npos);
}

}  // namespace
