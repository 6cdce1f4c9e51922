// Kernels whose element types are typedefs, #defines or -D macros run as they are written, on
// however many PoCL devices the suite is given, zero-copy and with the last device discrete.
#include "pocl/suite_runtime.hpp"

#include <gtest/gtest.h>

using namespace sinew;
using namespace sinew::testing;

namespace {
const char* kTypedKernels = R"CL(
typedef float DATA_TYPE;
#ifndef REAL
#define REAL float
#endif
__kernel void scale_typedef(__global const DATA_TYPE* a, __global DATA_TYPE* b, DATA_TYPE s) {
  b[get_global_id(0)] = a[get_global_id(0)] * s;
}
__kernel void scale_define(__global const REAL* a, __global REAL* b, REAL s) {
  b[get_global_id(0)] = a[get_global_id(0)] * s;
}
)CL";
// ELEM exists only as a build option.
const char* kOptionKernel = R"CL(
__kernel void scale_option(__global const ELEM* a, __global ELEM* b, ELEM s) {
  b[get_global_id(0)] = a[get_global_id(0)] * s;
}
)CL";
}  // namespace

class TypedKernels : public ::testing::TestWithParam<bool> {};

TEST_P(TypedKernels, TypedefDefineAndOptionTypesRun) {
  Runtime& rt = runtime(GetParam());
  const std::size_t n = 1000;
  Config even;
  even.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
  std::vector<float> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>(i % 37) - 3.0f;
  for (const char* entry : {"scale_typedef", "scale_define"}) {
    std::vector<float> b(n, 0.0f);
    auto va = sinew::vector<cl_float>().name("a"), vb = sinew::vector<cl_float>().name("b");
    rt.run(kernel_source(kTypedKernels, entry, "typed.cl").args(in(va), out(vb), scalar(2.5f)), {{va, a}, {vb, b}},
           RunOptions{.config = even})
        .get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], a[i] * 2.5f) << entry << " at " << i;
  }
  // The same source with REAL and ELEM given as build options: double and int.
  std::vector<double> d(n), dd(n, 0);
  std::vector<cl_int> k(n), kk(n, 0);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<double>(i) / 3, k[i] = static_cast<cl_int>(i) - 500;
  auto vd = sinew::vector<cl_double>().name("d"), vdd = sinew::vector<cl_double>().name("dd");
  rt.run(kernel_source(kTypedKernels, "scale_define", "typed.cl").build_options("-DREAL=double")
             .args(in(vd), out(vdd), scalar(3.0)),
         {{vd, d}, {vdd, dd}}, RunOptions{.config = even})
      .get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dd[i], d[i] * 3.0) << i;
  auto vk = sinew::vector<cl_int>().name("k"), vkk = sinew::vector<cl_int>().name("kk");
  rt.run(kernel_source(kOptionKernel, "scale_option", "typed.cl").build_options("-D ELEM=int")
             .args(in(vk), out(vkk), scalar(cl_int(-7))),
         {{vk, k}, {vkk, kk}}, RunOptions{.config = even})
      .get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(kk[i], k[i] * -7) << i;
}

// The wrong type for an option's macro is refused before any device work, naming both spellings.
TEST_P(TypedKernels, AWrongOptionTypeIsRefused) {
  Runtime& rt = runtime(GetParam());
  std::vector<float> a(64, 1.0f), b(64, 0.0f);
  auto va = sinew::vector<cl_float>().name("a"), vb = sinew::vector<cl_float>().name("b");
  try {
    rt.run(kernel_source(kOptionKernel, "scale_option", "typed.cl").build_options("-DELEM=int")
               .args(in(va), out(vb), scalar(2.0f)),
           {{va, a}, {vb, b}})
        .get();
    FAIL() << "a float vector ran as int";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds float but the kernel parameter is ELEM (int as the compiler sees it: "
                                         "-DELEM=int)*"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.context().fix.find("sinew::vector<cl_int>"), std::string::npos) << e.context().fix;
  }
  EXPECT_EQ(b, std::vector<float>(64, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Modes, TypedKernels, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });
