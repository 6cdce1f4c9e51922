// Bad input through Runtime::run: errors are thrown before any device work and leave the
// user's data untouched; device-dependent limits are checked before data moves.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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

// A runtime keeps each tree's checked analysis for the next request with bindings of the same
// shapes; a builder call between runs, or other shapes, must be checked anew.
TEST(RunBadInput, TreeChangedBetweenRunsIsCheckedAgain) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  auto k = kernel_source(kSrc, "scale", "k.cl");
  k.args(inout(V), scalar(2.0f));
  std::vector<float> data(64, 1.0f);
  rt.execute(k, {{V, data}});
  rt.execute(k, {{V, data}});  // the kept analysis
  EXPECT_EQ(data, std::vector<float>(64, 4.0f));

  k.args(inout(V));  // one argument short of the kernel's two
  try {
    rt.execute(k, {{V, data}});
    FAIL() << "a changed tree ran on its old analysis";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "arguments") << e.what();
  }
  EXPECT_EQ(data, std::vector<float>(64, 4.0f));

  k.args(inout(V), scalar(0.5f));  // a new scalar is used, not the kept one
  rt.execute(k, {{V, data}});
  EXPECT_EQ(data, std::vector<float>(64, 2.0f));

  V.unit(48);  // 64 elements are no whole number of units of 48
  try {
    rt.execute(k, {{V, data}});
    FAIL() << "a changed vector unit was not checked";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "size") << e.what();
  }
  EXPECT_EQ(data, std::vector<float>(64, 2.0f));
}

TEST(RunBadInput, OtherBindingShapesAreCheckedAgain) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  auto k = kernel_source(kSrc, "scale", "k.cl").args(inout(V), scalar(3.0f));
  std::vector<float> a(40, 1.0f), b(24, 2.0f);
  rt.execute(k, {{V, a}});
  rt.execute(k, {{V, b}});  // another size, another array: its own analysis
  rt.execute(k, {{V, a}});  // the first shape again, now at its kept analysis
  EXPECT_EQ(a, std::vector<float>(40, 9.0f));
  EXPECT_EQ(b, std::vector<float>(24, 6.0f));
  const std::vector<float> c(40, 1.0f);  // const data the tree writes: refused though the size matches
  try {
    rt.execute(k, {{V, c}});
    FAIL() << "const host data passed to a written vector";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "vector 'v'") << e.what();
  }
  float* null_data = nullptr;
  try {
    rt.execute(k, {{V, std::span<float>(null_data, 40)}});
    FAIL() << "a null binding passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("null"), std::string::npos) << e.what();
  }
}

// A plan's shares must add up to 1: the run fails before any device work, naming the shares and
// their sum (they used to be normalised silently while the Report printed the given numbers).
TEST(RunBadInput, SharesThatDoNotAddUpToOneAreRefused) {
  Runtime rt;
  auto V = sinew::vector<cl_float>().name("v");
  std::vector<float> data(64, 3.0f);
  Config c = Config::single(0, rt.devices().size());
  c.shares[0] = 0.7;
  try {
    rt.run(kernel_source(kSrc, "scale", "k.cl").args(inout(V), scalar(2.0f)), {{V, data}}, {.config = c});
    FAIL() << "accepted " << c.str();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    const std::string what = e.what();
    EXPECT_NE(what.find("0.7"), std::string::npos) << what;
    EXPECT_NE(what.find("add up to"), std::string::npos) << what;
  }
  EXPECT_EQ(data, std::vector<float>(64, 3.0f));
}

// A plan in SINEW_CONFIG that does not read is an error naming the variable (and the setting a
// program gives it through), when the Runtime is made.
TEST(RunBadInput, ABadDefaultPlanNamesItsVariable) {
  const char* old = std::getenv("SINEW_CONFIG");
  const std::string saved = old ? old : "";
  ::setenv("SINEW_CONFIG", "cpu=abc", 1);
  try {
    Runtime rt;
    ADD_FAILURE() << "SINEW_CONFIG=cpu=abc accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("SINEW_CONFIG"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu=abc"), std::string::npos) << e.what();
  }
  if (old) ::setenv("SINEW_CONFIG", saved.c_str(), 1);
  else ::unsetenv("SINEW_CONFIG");
  RuntimeOptions o;
  o.config = "cpu=abc";
  try {
    Runtime rt(o);
    ADD_FAILURE() << "RuntimeOptions::config cpu=abc accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RuntimeOptions::config"), std::string::npos) << e.what();
  }
}

// A kernel that reads one row past each end of its slice (right where the slice is the host
// memory itself, wrong on a GPU).
const char* const kPastSlice = R"CL(
__kernel void past(__global const int* in, __global int* out, uint width, uint off, uint total) {
  size_t x = get_global_id(0), y = get_global_id(1);
  uint row = off / width + (uint)y, rows = total / width;
  const __global int* c = in + y * width + x;
  int s = 2 * c[0];
  if (row > 0) s += c[-(int)width];
  if (row + 1 < rows) s += 3 * c[width];
  out[y * width + x] = s;
}
)CL";

// The poison check's error names the partition's device by its id ("cpu:0"), which tells two
// devices of one name apart, beside its OpenCL name.
TEST(RunBadInput, ThePoisonCheckNamesTheDeviceById) {
  const char* past = kPastSlice;
  const std::size_t count = Runtime().devices().size(), width = 4, rows = 37;
  RuntimeOptions o;
  o.discrete = std::to_string(count - 1);
  o.poison_check = true;
  Runtime rt(o);
  std::vector<int> img(rows * width), result(rows * width, 0);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<int>(i % 23) - 11;
  auto I = sinew::vector<cl_int>().unit(width).name("img");
  auto O = sinew::vector<cl_int>().unit(width).name("out");
  auto k = kernel_source(past, "past", "past.cl")
               .args(in(I), out(O), scalar(cl_uint(width)), offset(O), size(O))
               .dims(2);
  Config c;
  c.shares.assign(count, 1.0 / static_cast<double>(count));
  c.overlap = 2;
  try {
    rt.run(k, {{I, img}, {O, result}}, RunOptions{.config = c}).get();
    FAIL() << "the poison check let a kernel read past its slice";
  } catch (const Error& e) {
    const std::string what = e.what();
    ASSERT_NE(what.find("poison"), std::string::npos) << what;
    bool named = false;
    for (const auto& d : rt.devices()) named = named || what.find(" on " + d.id() + " ") != std::string::npos;
    EXPECT_TRUE(named) << "no device id (cpu:N) in: " << what;
  }
}

// Under the dynamic schedule each of the poison check's two runs cuts its own chunks: the element
// that differs lies next to an edge of a chunk of one of them, and the error names that chunk
// (every partition it names is given as "units [a, b)"; one of them has the unit at an edge).
TEST(RunBadInput, ThePoisonCheckNamesTheChunkWhoseEdgeReadPoison) {
  const std::size_t count = Runtime().devices().size(), width = 4, rows = 211;
  RuntimeOptions o;
  o.discrete = std::to_string(count - 1);
  o.poison_check = true;
  Runtime rt(o);
  auto I = sinew::vector<cl_int>().unit(width).name("img");
  auto O = sinew::vector<cl_int>().unit(width).name("out");
  auto k = kernel_source(kPastSlice, "past", "past.cl")
               .args(in(I), out(O), scalar(cl_uint(width)), offset(O), size(O))
               .dims(2);
  // The first device (zero copy) and the last (discrete, where the poison lies) take chunks.
  Config c;
  c.shares.assign(count, 0.0);
  c.shares.front() = count > 1 ? 0.3 : 1.0;
  c.shares.back() = count > 1 ? 0.7 : 1.0;
  c.overlap = 2;
  c.schedule = "dynamic";
  c.items["min_chunk"] = "3";
  std::size_t detected = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::vector<int> img(rows * width), result(rows * width, 0);
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<int>(i % 23) - 11;
    try {
      rt.run(k, {{I, img}, {O, result}}, RunOptions{.config = c}).get();  // the discrete device took no chunk
    } catch (const Error& e) {
      ++detected;
      const std::string what = e.what();
      const auto at = what.find("(unit ");
      ASSERT_NE(at, std::string::npos) << what;
      const std::size_t unit = std::stoul(what.substr(at + 6));
      bool at_edge = false;
      for (auto p = what.find("units ["); p != std::string::npos; p = what.find("units [", p + 1)) {
        const std::size_t first = std::stoul(what.substr(p + 7));
        const std::size_t end = std::stoul(what.substr(what.find(", ", p) + 2));
        at_edge = at_edge || unit == first || unit + 1 == end;
      }
      EXPECT_TRUE(at_edge) << "no named chunk has unit " << unit << " at its edge: " << what;
    }
  }
  EXPECT_GT(detected, 0u) << "the poison check let a kernel read past its slice";
}
