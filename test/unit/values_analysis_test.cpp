// Results as arguments (sinew::value) in the analysis every run goes through first, with no device:
// which map_reduce produces each value, which arguments take it through a pointer, that the tree is
// no longer streamable, the refusals of parameters that cannot take it, and the signature.
// (The refusals of a value read before its producer, of a type mismatch and of a writable pointer
// run on a device too: test/pocl/values_test.cpp.)
#include "tree/analysis.hpp"

#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;
using sinew::testing::expect_error;

namespace {

const char* kSrc = R"(
typedef struct { float lo; float hi; } pair_t;
__kernel void part(__global const float* x, __global float* p) {}
__kernel void pairs(__global const float* x, __global pair_t* p) {}
__kernel void by_value(__global const float* x, __global float* y, float s) {}
__kernel void by_pointer(__global const float* x, __global float* y, __global const float* s) {}
__kernel void two(__global const float* x, __global float* y, float a, __constant float* b) {}
__kernel void local_value(__global const float* x, __global float* y, __local float* s) {}
__kernel void wide_pair(__global const float* x, __global float* y, pair_t p) {}
#define MAKE(name) __kernel void name(__global const float* x, __global float* y, float s) {}
MAKE(hidden)
)";

struct Pair {
  cl_float lo, hi;
};
struct WrongPair {
  cl_double lo, hi;
};

Kernel k(const std::string& entry) { return kernel_source(kSrc, entry, "v.cl"); }

struct Data {
  Vector<cl_float> x = sinew::vector<cl_float>().name("x"), p = sinew::vector<cl_float>().name("p"),
                   y = sinew::vector<cl_float>().name("y");
  Result<cl_float> s = result<cl_float>("s");
  std::vector<float> hx = std::vector<float>(64, 1.0f), hy = std::vector<float>(64, 0.0f);
  Node produce() { return map_reduce(k("part").args(in(x), out(p)), reduce::sum(p, s)); }
  std::vector<Binding> bindings() { return {{x, hx}, {y, hy}}; }
};

detail::Analysis analyze(const Node& t, const std::vector<Binding>& b) { return detail::analyze(*t.impl(), b); }

}  // namespace

TEST(ValueAnalysis, NamesTheProducerAndThePointerArguments) {
  Data d;
  auto producer = d.produce();
  auto a = k("by_value").args(in(d.x), out(d.y), value(d.s));
  auto b = k("two").args(in(d.x), out(d.y), value(d.s), value(d.s));
  const auto an = analyze(pipeline(producer, a, b), d.bindings());
  ASSERT_EQ(an.value_sources.size(), 1u);
  EXPECT_EQ(an.value_sources.begin()->second.producer, producer.impl().get());
  EXPECT_FALSE(an.value_sources.begin()->second.user_combined);
  const std::set<std::pair<const detail::NodeImpl*, std::size_t>> pointers{{b.impl().get(), 3}};
  EXPECT_EQ(an.values_through_pointers, pointers);
  EXPECT_FALSE(an.streamable);
  EXPECT_NE(an.joined.why.find("as a value"), std::string::npos) << an.joined.why;
  EXPECT_NE(an.joined.node.find("by_value"), std::string::npos) << an.joined.node;
}

// A value every kernel reads through a pointer and no predicate judges stays on the devices; one a
// kernel takes by value, or a loop predicate judges, or any value under a predicate on the loop's
// state (it may look up every result) goes to the host.
TEST(ValueAnalysis, KnowsTheValuesOnlyPointersRead) {
  Data d;
  auto producer = d.produce();
  auto pointer = [&] { return k("by_pointer").args(in(d.x), out(d.y), value(d.s)); };
  EXPECT_EQ(analyze(pipeline(producer, pointer()), d.bindings()).values_only_on_devices,
            std::set<const detail::NodeImpl*>{producer.impl().get()});
  auto by_value = k("by_value").args(in(d.x), out(d.y), value(d.s));
  EXPECT_TRUE(analyze(pipeline(producer, pointer(), by_value), d.bindings()).values_only_on_devices.empty());
  auto judged = loop(pipeline(producer, pointer())).times(3).until(d.s, [](cl_float) { return false; });
  EXPECT_TRUE(analyze(judged, d.bindings()).values_only_on_devices.empty());
  auto state = loop(pipeline(producer, pointer())).times(3).until([](const LoopState&) { return false; });
  EXPECT_TRUE(analyze(state, d.bindings()).values_only_on_devices.empty());
}

TEST(ValueAnalysis, ATreeWithoutValuesStaysStreamable) {
  Data d;
  const auto an = analyze(k("part").args(in(d.x), out(d.y)), {{d.x, d.hx}, {d.y, d.hy}});
  EXPECT_TRUE(an.streamable);
  EXPECT_TRUE(an.value_sources.empty());
}

TEST(ValueAnalysis, AValueAfterTheLoopThatProducesIt) {
  Data d;
  auto tree = pipeline(loop(d.produce()).times(3), k("by_pointer").args(in(d.x), out(d.y), value(d.s)));
  EXPECT_EQ(analyze(tree, d.bindings()).value_sources.size(), 1u);
}

TEST(ValueAnalysis, RefusesALocalParameter) {
  Data d;
  auto tree = pipeline(d.produce(), k("local_value").args(in(d.x), out(d.y), value(d.s)));
  expect_error([&] { analyze(tree, d.bindings()); },
               {"local_value", "value of result 's'", "neither a value nor a __global or __constant pointer"});
}

TEST(ValueAnalysis, RefusesParametersItCannotRead) {
  Data d;
  auto tree = pipeline(d.produce(), k("hidden").args(in(d.x), out(d.y), value(d.s)));
  expect_error([&] { analyze(tree, d.bindings()); }, {"hidden", "value of result 's'", "cannot be read from its source"});
}

TEST(ValueAnalysis, RefusesAStructOfAnotherSize) {
  Data d;
  auto pairs = sinew::vector<WrongPair>().name("pairs");
  auto r = result<WrongPair>("r");
  const char* reducer = "typedef struct { double lo; double hi; } wide_t;\n"
                        "wide_t widen(wide_t a, wide_t b) { return a; }\n";
  auto tree = pipeline(
      map_reduce(kernel_source("typedef struct { double lo; double hi; } wide_t;\n"
                               "__kernel void pairs(__global const float* x, __global wide_t* p) {}",
                               "pairs", "w.cl")
                     .args(in(d.x), out(pairs)),
                 reduce::custom_source(pairs, r, reducer, "widen", WrongPair{0, 0}, "w.cl")),
      k("wide_pair").args(in(d.x), out(d.y), value(r)));
  expect_error([&] { analyze(tree, d.bindings()); }, {"wide_pair", "value of result 'r'", "is a struct of 16 bytes"});
}

TEST(ValueAnalysis, TheSignatureTellsAValueFromAScalar) {
  Data d;
  auto m = result<cl_float>("m");
  auto q = sinew::vector<cl_float>().name("q");
  auto tree = [&] {
    return pipeline(d.produce(), map_reduce(k("part").args(in(d.x), out(q)), reduce::max(q, m)),
                    k("two").args(in(d.x), out(d.y), value(d.s), value(m)));
  };
  EXPECT_EQ(tree().signature(), tree().signature());
  auto plain = pipeline(d.produce(), map_reduce(k("part").args(in(d.x), out(q)), reduce::max(q, m)),
                        k("two").args(in(d.x), out(d.y), scalar(1.0f), value(m)));
  EXPECT_NE(tree().signature(), plain.signature());
}
