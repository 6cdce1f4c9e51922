// Reading kernel signatures from OpenCL C source.
#include "tree/nodes/kernel.hpp"

#include <gtest/gtest.h>

using sinew::detail::parse_kernel_params;

TEST(Parse, FindsParametersWithQualifiersAndComments) {
  const char* src = R"(
    // a comment mentioning kernel void solarise(int x)
    /* block */ __kernel void solarise(__global uchar4* img, const int threshold) { }
    kernel __attribute__((reqd_work_group_size(64,1,1))) void noise(global const float * restrict in,
        __global float* out, __local float* tmp, unsigned int n) {}
  )";
  auto p = parse_kernel_params(src, "solarise");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].type, "uchar4");
  EXPECT_TRUE((*p)[0].pointer);
  EXPECT_EQ((*p)[0].address_space, "global");
  EXPECT_EQ((*p)[0].name, "img");
  EXPECT_EQ((*p)[1].type, "int");
  EXPECT_FALSE((*p)[1].pointer);
  EXPECT_EQ((*p)[1].name, "threshold");

  auto q = parse_kernel_params(src, "noise");
  ASSERT_TRUE(q);
  ASSERT_EQ(q->size(), 4u);
  EXPECT_TRUE((*q)[0].is_const);
  EXPECT_EQ((*q)[0].type, "float");
  EXPECT_FALSE((*q)[1].is_const);
  EXPECT_EQ((*q)[2].address_space, "local");
  EXPECT_EQ((*q)[3].type, "uint");
}

TEST(Parse, IgnoresHelperFunctionsAndMissingKernels) {
  const char* src = "float helper(float a) { return a; }\n__kernel void k(void) {}\n";
  EXPECT_FALSE(parse_kernel_params(src, "helper"));
  EXPECT_FALSE(parse_kernel_params(src, "absent"));
  auto k = parse_kernel_params(src, "k");
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->empty());
}

TEST(Parse, PointerConstVersusConstPointer) {
  auto p = parse_kernel_params("__kernel void f(__global float* const p, __global const float* q) {}", "f");
  ASSERT_TRUE(p);
  EXPECT_FALSE((*p)[0].is_const);  // the pointer is const, the data is not
  EXPECT_TRUE((*p)[1].is_const);
}
