// Bad input through Runtime::run: errors are thrown before any device work and leave the
// user's data untouched; device-dependent limits are checked before data moves.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

namespace {
const char* kSrc = R"(
__kernel void scale(__global float* v, float f) { v[get_global_id(0)] *= f; }
__kernel __attribute__((reqd_work_group_size(4, 1, 1))) void fixed(__global float* v) { v[get_global_id(0)] = 1; }
)";
}

TEST(RunBadInput, ValidationThrowsSynchronouslyAndTouchesNothing) {
  Runtime rt;
  auto V = sinew::vector<cl_float>(10).name("v");
  std::vector<float> data(12, 3.0f);
  try {
    rt.run(kernel_source(kSrc, "scale", "k.cl").args(inout(V), scalar(2.0f)), {{V, data}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_EQ(e.argument(), "vector 'v'");
    EXPECT_NE(e.context().fix.find("10 elements"), std::string::npos) << e.what();
  }
  EXPECT_EQ(data, std::vector<float>(12, 3.0f));
}

TEST(RunBadInput, UnknownEntryNameNamesTheNode) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  std::vector<float> data(8, 1.0f);
  try {
    rt.run(kernel_source(kSrc, "scal", "k.cl").args(inout(V), scalar(2.0f)), {{V, data}}).get();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.node().find("kernel 'scal'"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("scal"), std::string::npos) << e.what();
  }
  EXPECT_EQ(data, std::vector<float>(8, 1.0f));
}

TEST(RunBadInput, WorkGroupLargerThanTheDeviceAllows) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  const std::size_t big = rt.devices()[0].max_work_group_size * 2;
  std::vector<float> data(big, 1.0f);
  try {
    rt.run(kernel_source(kSrc, "scale", "k.cl").args(inout(V), scalar(2.0f)).local_size({big}), {{V, data}}).get();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "local_size");
    EXPECT_NE(e.node().find("scale"), std::string::npos);
  }
  EXPECT_EQ(data, std::vector<float>(big, 1.0f));
}

TEST(RunBadInput, ConfigThatDoesNotFitTheDevices) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  std::vector<float> data(8, 1.0f);
  Config c;
  c.shares = std::vector<double>(rt.devices().size() + 1, 1.0);
  EXPECT_THROW(rt.run(kernel_source(kSrc, "scale").args(inout(V), scalar(2.0f)), {{V, data}}, {.config = c}), Error);
  EXPECT_THROW(rt.run(kernel_source(kSrc, "scale").args(inout(V), scalar(2.0f)), {{V, data}}, {.device = 99}), Error);
  EXPECT_THROW(rt.run(Node(), {}), Error);
}
