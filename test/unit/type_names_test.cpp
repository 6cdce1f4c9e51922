// Element types as the compiler sees them: typedefs, #defines and -D macros followed before the
// signature check; a wrong type refused naming the type as written and as resolved.
#include "tree/analysis.hpp"
#include "tree/source_text.hpp"

#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;
using sinew::detail::TypeNames;
using sinew::testing::expect_error;

TEST(TypeNames, FollowsTypedefsDefinesAndBuildOptions) {
  const char* src = R"(
typedef float DATA_TYPE;      // a typedef
#define REAL double /* a define */
typedef REAL real_t;
typedef unsigned int index_t;
#ifndef ELEM
#define ELEM int
#endif
#ifdef WIDE
typedef long acc_t;
#else
typedef short acc_t;
#endif
#if __OPENCL_VERSION__ >= 200
typedef half maybe_t;
#endif
typedef struct { float x, y; } point;
#define CALL(x) x
)";
  const TypeNames plain(src, "");
  EXPECT_EQ(plain.resolve("DATA_TYPE"), "float");
  EXPECT_EQ(plain.resolve("REAL"), "double");
  EXPECT_EQ(plain.resolve("real_t"), "double");
  EXPECT_EQ(plain.how("real_t"), "typedef REAL real_t, #define REAL double");
  EXPECT_EQ(plain.resolve("index_t"), "uint");
  EXPECT_EQ(plain.resolve("ELEM"), "int");
  EXPECT_EQ(plain.resolve("acc_t"), "short");
  EXPECT_EQ(plain.resolve("maybe_t"), "");  // under an #if: the compiler decides
  EXPECT_EQ(plain.resolve("point"), "point");
  EXPECT_EQ(plain.resolve("float4"), "float4");
  EXPECT_EQ(plain.resolve("CALL"), "CALL");  // a function-like macro is no type
  EXPECT_EQ(plain.how("float"), "");

  const TypeNames given(src, "-cl-fast-relaxed-math -DELEM=float4 -D WIDE -D DATA_TYPE=uchar");
  EXPECT_EQ(given.resolve("ELEM"), "float4");  // the option wins over the #ifndef default
  EXPECT_EQ(given.how("ELEM"), "-DELEM=float4");
  EXPECT_EQ(given.resolve("acc_t"), "long");
  EXPECT_EQ(given.resolve("DATA_TYPE"), "uchar");  // the macro replaces the name before the typedef
}

namespace {
const char* kTyped = R"(
typedef float DATA_TYPE;
#define REAL double
__kernel void typed(__global const DATA_TYPE* a, __global DATA_TYPE* b, DATA_TYPE s) {}
__kernel void defined(__global REAL* a) {}
__kernel void optioned(__global ELEM* a) {}
__kernel void unsure(__global T* a) {}
typedef struct { float x, y, z; } vec3;
__kernel void structs(__global vec3* a) {}
)";
void analyze(const Node& t, const std::vector<Binding>& b) { detail::analyze(*t.impl(), b); }
}  // namespace

TEST(TypeNames, AliasedParametersAcceptTheirResolvedType) {
  auto a = sinew::vector<cl_float>().name("a"), b = sinew::vector<cl_float>().name("b");
  std::vector<float> ha(16), hb(16);
  EXPECT_NO_THROW(analyze(kernel_source(kTyped, "typed", "t.cl").args(in(a), out(b), scalar(2.0f)), {{a, ha}, {b, hb}}));
  auto d = sinew::vector<cl_double>().name("d");
  std::vector<double> hd(16);
  EXPECT_NO_THROW(analyze(kernel_source(kTyped, "defined", "t.cl").args(inout(d)), {{d, hd}}));
  auto i = sinew::vector<cl_int>().name("i");
  std::vector<cl_int> hi(16);
  EXPECT_NO_THROW(analyze(kernel_source(kTyped, "optioned", "t.cl").build_options("-DELEM=int").args(inout(i)), {{i, hi}}));
  // A name the check cannot see defined (a header's, an #if's) is as before: its own spelling.
  struct Opaque { float x, y, z; };
  auto o = sinew::vector<Opaque>().name("o");
  std::vector<Opaque> ho(16);
  EXPECT_NO_THROW(analyze(kernel_source(kTyped, "structs", "t.cl").args(inout(o)), {{o, ho}}));
}

TEST(TypeNames, AWrongTypeIsRefusedNamingBothSpellings) {
  auto i = sinew::vector<cl_int>().name("ints");
  std::vector<cl_int> hi(16);
  expect_error([&] { analyze(kernel_source(kTyped, "typed", "t.cl").args(in(i), out(i), scalar(2.0f)), {{i, hi}}); },
               {"typed", "argument 0 'a'", "holds int but the kernel parameter is DATA_TYPE (float as the compiler "
                                           "sees it: typedef float DATA_TYPE)*"});
  try {
    analyze(kernel_source(kTyped, "defined", "t.cl").args(inout(i)), {{i, hi}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("REAL (double as the compiler sees it: #define REAL double)"), std::string::npos)
        << e.what();
    EXPECT_NE(e.context().fix.find("sinew::vector<cl_double>"), std::string::npos) << e.context().fix;
  }
  expect_error([&] {
    analyze(kernel_source(kTyped, "optioned", "t.cl").build_options("-DELEM=float").args(inout(i)), {{i, hi}});
  }, {"optioned", "argument 0 'a'", "ELEM (float as the compiler sees it: -DELEM=float)"});
  auto f = sinew::vector<cl_float>().name("f");
  std::vector<float> hf(16);
  expect_error([&] {
    analyze(kernel_source(kTyped, "typed", "t.cl").args(in(f), out(f), scalar(2.0)), {{f, hf}});
  }, {"typed", "argument 2 's'", "scalar of type double passed to a parameter of type DATA_TYPE (float"});
  // An opaque element of another size than the source's struct.
  struct Pair { float x, y; };
  auto p = sinew::vector<Pair>().name("pairs");
  std::vector<Pair> hp(16);
  expect_error([&] { analyze(kernel_source(kTyped, "structs", "t.cl").args(inout(p)), {{p, hp}}); },
               {"structs", "argument 0 'a'", "holds elements of 8 bytes"});
}
