// Building trees and printing them.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

namespace {
const char* kSrc = R"(
__kernel void scale(__global float* v, float f) { v[get_global_id(0)] *= f; }
__kernel void shift(__global float* v, float f) { v[get_global_id(0)] += f; }
)";

Node make_tree(std::size_t unit, const char* second = "shift") {
  auto v = sinew::vector<cl_float>().unit(unit).name("v");
  auto a = kernel_source(kSrc, "scale", "k.cl").args(inout(v), scalar(2.0f));
  auto b = kernel_source(kSrc, second, "k.cl").args(inout(v), scalar(1.0f));
  return pipeline(a, loop(b).times(3));
}
}  // namespace

TEST(Tree, DumpShowsNodesArgumentsAndSettings) {
  auto v = sinew::vector<cl_uchar4>(64).unit(8).name("img");
  auto k = kernel_source("__kernel void f(__global uchar4* p, int t) {}", "f", "filters.cl")
               .args(inout(v), scalar(cl_int(3)))
               .elements_per_thread(2)
               .dims(2);
  auto t = pipeline(k, map(k));
  std::string d = t.dump();
  EXPECT_NE(d.find("pipeline"), std::string::npos);
  EXPECT_NE(d.find("kernel 'f' (filters.cl)"), std::string::npos);
  EXPECT_NE(d.find("elements_per_thread=2"), std::string::npos);
  EXPECT_NE(d.find("inout 'img'"), std::string::npos);
  EXPECT_NE(d.find("uchar4, unit 8, 64 elements"), std::string::npos);
  EXPECT_NE(d.find("  map"), std::string::npos);
  std::string dot = t.dot();
  EXPECT_EQ(dot.rfind("digraph sinew {", 0), 0u);
  EXPECT_NE(dot.find("n0 -> n1"), std::string::npos);
}

TEST(Tree, SignatureIsStructuralAndIgnoresSizes) {
  EXPECT_EQ(make_tree(1).signature(), make_tree(1).signature());
  EXPECT_EQ(make_tree(1).signature(), make_tree(4096).signature());  // unit/size are features
  EXPECT_NE(make_tree(1).signature(), make_tree(1, "scale").signature());
  auto v = sinew::vector<cl_float>();
  auto k = kernel_source(kSrc, "scale").args(inout(v), scalar(2.0f));
  EXPECT_NE(pipeline(k).signature(), map(k).signature());
}

TEST(Tree, EmbeddedKernelFilesAreFoundByName) {
  auto k = kernel("reduce.cl", "sinew_reduce");
  EXPECT_NE(k.dump().find("reduce.cl"), std::string::npos);
  try {
    kernel("no_such_file.cl", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::io));
    EXPECT_NE(std::string(e.what()).find("reduce.cl"), std::string::npos);  // lists what exists
  }
}
