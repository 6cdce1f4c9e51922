// Bad input is rejected before any device work, naming the node, the argument and the fix.
// These cases need no device: they exercise the analysis every run goes through first.
#include "tree/analysis.hpp"

#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;
using sinew::testing::expect_error;
using sinew::testing::Expect;

namespace {
const char* kSrc = R"(
__kernel void saxpy(__global const float* x, __global float* y, float a) {}
__kernel void img(__global uchar4* p, int threshold) {}
__kernel void nb(__global const float4* all, __global float4* mine, uint off, float dt) {}
__kernel void loc(__global float* v, __local float* tmp) {}
)";


void analyze(const Node& t, const std::vector<Binding>& b) { detail::analyze(*t.impl(), b); }

struct Data {
  Vector<cl_float> x = sinew::vector<cl_float>().name("x");
  Vector<cl_float> y = sinew::vector<cl_float>().name("y");
  std::vector<float> hx = std::vector<float>(64, 1.0f), hy = std::vector<float>(64, 2.0f);
  Kernel saxpy() { return kernel_source(kSrc, "saxpy", "s.cl").args(in(x), inout(y), scalar(2.0f)); }
};
}  // namespace

TEST(BadInput, WrongArgumentCount) {
  Data d;
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), inout(d.y));
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); },
               {"kernel 'saxpy' (s.cl)", "arguments", "has 3 parameters but 2 arguments"});
}

TEST(BadInput, VectorElementTypeDiffersFromParameter) {
  Data d;
  auto i = sinew::vector<cl_int>().name("ints");
  std::vector<cl_int> hi(64);
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(i), inout(d.y), scalar(2.0f));
  expect_error([&] { analyze(k, {{i, hi}, {d.y, d.hy}}); }, {"saxpy", "argument 0 'x'", "holds int"});
}

TEST(BadInput, ScalarTypeDiffersFromParameter) {
  Data d;
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), inout(d.y), scalar(2.0));
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); }, {"saxpy", "argument 2 'a'", "scalar of type double"});
}

TEST(BadInput, ScalarWherePointerExpected) {
  Data d;
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(scalar(1.0f), inout(d.y), scalar(2.0f));
  expect_error([&] { analyze(k, {{d.y, d.hy}}); }, {"saxpy", "argument 0 'x'", "scalar is passed where the kernel expects a pointer"});
}

TEST(BadInput, VectorWhereScalarExpected) {
  Data d;
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), inout(d.y), in(d.x));
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); }, {"saxpy", "argument 2 'a'", "a vector is passed"});
}

TEST(BadInput, WritingAConstParameter) {
  Data d;
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(out(d.x), inout(d.y), scalar(2.0f));
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); }, {"saxpy", "argument 0 'x'", "read-only"});
}

TEST(BadInput, LocalMemoryToGlobalParameter) {
  Data d;
  auto k = kernel_source(kSrc, "loc", "l.cl").args(local<float>(16), local<float>(16));
  expect_error([&] { analyze(k, {}); }, {"loc", "argument 0 'v'", "not __local"});
}

TEST(BadInput, SizeNotAWholeNumberOfUnits) {
  auto img = sinew::vector<cl_uchar4>().unit(10).name("img");
  std::vector<cl_uchar4> h(95);
  auto k = kernel_source(kSrc, "img", "f.cl").args(inout(img), scalar(cl_int(1)));
  expect_error([&] { analyze(k, {{img, h}}); }, {"vector 'img'", "size", "not a whole number of units of 10"});
}

TEST(BadInput, ChannelsWithDifferentUnitCounts) {
  Data d;
  auto z = sinew::vector<cl_float>(32).name("z");  // 32 units; x and y have 64
  auto k1 = d.saxpy();
  auto k2 = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.y), inout(z), scalar(1.0f));
  expect_error([&] { analyze(pipeline(k1, k2), {{d.x, d.hx}, {d.y, d.hy}}); },
               {"vector 'z'", "size", "has 32 units but 'x' has 64"});
}

TEST(BadInput, DeclaredSizeDiffersFromBinding) {
  auto x = sinew::vector<cl_float>(100).name("x");
  Data d;
  std::vector<float> hx(64);
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(x), inout(d.y), scalar(2.0f));
  expect_error([&] { analyze(k, {{x, hx}, {d.y, d.hy}}); }, {"bindings", "vector 'x'", "declared with 100 elements but bound to 64"});
}

TEST(BadInput, LoopWithoutCountOrPredicate) {
  Data d;
  expect_error([&] { analyze(loop(d.saxpy()), {{d.x, d.hx}, {d.y, d.hy}}); }, {"loop", "", "neither .times(n) nor .until"});
}

TEST(BadInput, EmptyPipelineAndEmptyNodes) {
  expect_error([&] { pipeline(std::vector<Node>{}); }, {"pipeline", "", "pipeline with no stages"});
  expect_error([&] { map(Node()); }, {"map", "", "empty node"});
}

TEST(BadInput, ReadingAVectorNothingFills) {
  Data d;
  expect_error([&] { analyze(d.saxpy(), {{d.y, d.hy}}); }, {"vector 'x'", "data", "nothing gives it data"});
}

TEST(BadInput, ConstBindingOfAWrittenVector) {
  Data d;
  const std::vector<float>& cy = d.hy;
  expect_error([&] { analyze(d.saxpy(), {{d.x, d.hx}, {d.y, cy}}); }, {"bindings", "vector 'y'", "bound to const host data"});
}

TEST(BadInput, BindingAVectorTheTreeDoesNotUse) {
  Data d;
  auto stray = sinew::vector<cl_float>().name("stray");
  std::vector<float> hs(64);
  expect_error([&] { analyze(d.saxpy(), {{d.x, d.hx}, {d.y, d.hy}, {stray, hs}}); },
               {"bindings", "vector 'stray'", "not used by this tree"});
}

TEST(BadInput, BindingTwice) {
  Data d;
  expect_error([&] { analyze(d.saxpy(), {{d.x, d.hx}, {d.y, d.hy}, {d.x, d.hx}}); }, {"bindings", "vector 'x'", "bound twice"});
}

TEST(BadInput, ElementsPerThreadNotDividingTheData) {
  Data d;
  std::vector<float> hx(63, 1.0f), hy(63);
  auto k = d.saxpy().elements_per_thread(2);
  expect_error([&] { analyze(k, {{d.x, hx}, {d.y, hy}}); }, {"saxpy", "elements_per_thread", "not a multiple of 2"});
}

TEST(BadInput, LocalSizeNotDividingTheRange) {
  Data d;
  auto k = d.saxpy().local_size({48});
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); }, {"saxpy", "local_size", "does not divide"});
}

TEST(BadInput, ReadingWholeAndWritingSliceInOneLeaf) {
  auto pos = sinew::vector<cl_float4>().name("pos");
  std::vector<cl_float4> hp(16);
  auto k = kernel_source(kSrc, "nb", "nbody.cl").args(whole(pos), inout(pos), offset(pos), scalar(0.1f));
  expect_error([&] { analyze(k, {{pos, hp}}); }, {"nb", "vector 'pos'", "reads the vector whole and writes its slice"});
}

TEST(BadInput, UntilOnAResultOutsideTheLoop) {
  Data d;
  auto r = result<cl_float>("res");
  auto body = d.saxpy();
  auto outside = map_reduce(d.saxpy(), reduce::sum(d.y, r));
  auto t = pipeline(outside, loop(body).until(r, [](float v) { return v < 1; }));
  expect_error([&] { analyze(t, {{d.x, d.hx}, {d.y, d.hy}}); }, {"loop", "until(res)", "no map_reduce inside its body"});
}

TEST(BadInput, ReducingAVectorNobodyWrites) {
  Data d;
  auto r = result<cl_float>("res");
  auto t = map_reduce(d.saxpy(), reduce::sum(d.x, r));
  expect_error([&] { analyze(t, {{d.x, d.hx}, {d.y, d.hy}}); }, {"map_reduce", "reducer input 'x'", "not written by any leaf"});
}

TEST(BadInput, LibraryLeavesCheckTheirShapes) {
  auto a = sinew::vector<cl_float>().unit(8).name("A");
  auto b = sinew::vector<cl_float>().name("B");
  auto c = sinew::vector<cl_float>().unit(4).name("C");
  std::vector<float> ha(8 * 16), hb(8 * 5), hc(4 * 16);
  expect_error([&] { analyze(blas::gemm(1, a, b, 0, c, 8, 4), {{a, ha}, {b, hb}, {c, hc}}); },
               {"blas.gemm", "B 'B'", "not k*n = 32"});
  auto f = sinew::vector<cl_float2>().unit(17).name("sig");
  std::vector<cl_float2> hf(17 * 2);
  expect_error([&] { analyze(fft(f, FftDirection::forward), {{f, hf}}); }, {"fft", "unit", "cannot transform length 17"});
}

TEST(BadInput, DivideAndConquerChecksItsSettingsVectorAndKernels) {
  const char* src = R"CL(
__kernel void leaf(__global SINEW_T* d, uint n, uint leaf) {}
__kernel void merge(__global const SINEW_T* s, __global SINEW_T* d, uint n, uint run, uint k) {}
__kernel void three(__global uint* d, uint n, uint leaf) {}
)CL";
  auto leaf = [&] { return kernel_source(src, "leaf", "dc.cl"); };
  auto merge = [&] { return kernel_source(src, "merge", "dc.cl"); };
  auto v = sinew::vector<cl_uint>().name("v");
  std::vector<cl_uint> hv(64);
  expect_error([&] { analyze(divide_and_conquer(v, leaf(), merge(), {.fanout = 0}), {{v, hv}}); },
               {"divide_and_conquer", "fanout", "fan-out of 0"});
  expect_error([&] { analyze(divide_and_conquer(v, leaf(), merge(), {.leaf_size = 0}), {{v, hv}}); },
               {"divide_and_conquer", "leaf_size", "a leaf of 0 elements"});
  auto u = sinew::vector<cl_uint>().unit(2).name("u");
  expect_error([&] { analyze(divide_and_conquer(u, leaf(), merge()), {{u, hv}}); },
               {"divide_and_conquer", "vector 'u'", "units of 2"});
  struct Pair { cl_int a, b; };
  auto ps = sinew::vector<Pair>().name("pairs");
  std::vector<Pair> hp(64);
  expect_error([&] { analyze(divide_and_conquer(ps, leaf(), merge()), {{ps, hp}}); },
               {"divide_and_conquer", "vector 'pairs'", "opaque"});
  expect_error([&] { analyze(divide_and_conquer(v, leaf(), kernel_source(src, "three", "dc.cl")), {{v, hv}}); },
               {"combine", "parameters", "has 3 parameters, not the skeleton's 5"});
  expect_error([&] { analyze(divide_and_conquer(v, merge(), merge()), {{v, hv}}); },
               {"leaf", "parameters", "has 5 parameters, not the skeleton's 3 or 4"});
  EXPECT_NO_THROW(analyze(divide_and_conquer(v, leaf(), merge(), {.fanout = 3, .leaf_size = 7}), {{v, hv}}));
}

TEST(BadInput, ScanChecksItsOperatorAndVectors) {
  const char* ops = "int pick(int a, int b) { return a > b ? a : b; }";
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> hv(64);
  // Built-in operators on a non-scalar type.
  auto f4 = sinew::vector<cl_float4>().name("f4");
  std::vector<cl_float4> h4(64);
  expect_error([&] { analyze(scan(f4, scan_op::max()), {{f4, h4}}); },
               {"scan", "vector 'f4'", "built-in max scan works on scalar element types, not float4"});
  // A user function on a type OpenCL C cannot name.
  struct Pair { cl_int a, b; };
  auto ps = sinew::vector<Pair>().name("pairs");
  std::vector<Pair> hp(64);
  expect_error([&] { analyze(scan(ps, scan_op::custom_source<Pair>(ops, "pick", Pair{0, 0})), {{ps, hp}}); },
               {"scan", "vector 'pairs'", "the vector's type is opaque"});
  // An identity of another size, a function the source does not define.
  expect_error([&] { analyze(scan(v, scan_op::custom_source<cl_long>(ops, "pick", 0)), {{v, hv}}); },
               {"scan", "scan identity", "the identity has 8 bytes"});
  expect_error([&] { analyze(scan(v, scan_op::custom_source<cl_int>(ops, "choose", 0, "ops.cl")), {{v, hv}}); },
               {"scan", "scan function 'choose'", "not defined in 'ops.cl'"});
  // Input and output of different types or units.
  auto f = sinew::vector<cl_float>().name("f");
  std::vector<float> hf(64);
  expect_error([&] { analyze(scan(v, f, scan_op::sum()), {{v, hv}, {f, hf}}); },
               {"scan", "vector 'f'", "another element type (float) than its input 'v' (int)"});
  auto u = sinew::vector<cl_int>().unit(2).name("u");
  std::vector<cl_int> hu(128);
  expect_error([&] { analyze(scan(u, v, scan_op::sum()), {{u, hu}, {v, hv}}); },
               {"scan", "'u' -> 'v'", "the same unit"});
  // The same vector in and out is the in-place scan; a const binding cannot be scanned in place.
  const std::vector<cl_int> hc(64);
  expect_error([&] { analyze(scan(v, v, scan_op::sum()), {{v, hc}}); }, {"bindings", "vector 'v'", "const host data"});
  EXPECT_NO_THROW(analyze(scan(v, v, scan_op::sum(), ScanKind::exclusive), {{v, hv}}));
}

TEST(Analyze, AScanJoinsThePartitions) {
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> hv(64);
  EXPECT_FALSE(detail::analyze(*scan(v, scan_op::sum()).impl(), {{v, hv}}).streamable);
}

TEST(Analyze, ChannelsTakeTheirNeighboursSizeAndFeaturesAreCollected) {
  Data d;
  auto t = sinew::vector<cl_float>().name("t");  // unbound channel
  auto k1 = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), out(t), scalar(2.0f).as_feature("alpha"));
  auto k2 = kernel_source(kSrc, "saxpy", "s.cl").args(in(t), inout(d.y), scalar(1.0f));
  auto tree = pipeline(k1, k2);
  auto an = detail::analyze(*tree.impl(), {{d.x, d.hx}, {d.y, d.hy}});
  EXPECT_EQ(an.units, 64u);
  EXPECT_EQ(an.use(t.state()).elements, 64u);
  EXPECT_FALSE(an.use(t.state()).bound());
  const auto features = detail::input_features(*tree.impl(), an);
  ASSERT_EQ(features.size(), 3u);
  EXPECT_EQ(features[2].first, "alpha");
  EXPECT_EQ(features[2].second, 2.0);
}

// ----- Mistakes that used to pass without a word, and errors that misled -------------------------

// copy(a, b) moves raw bytes: float bits into ints would be wrong values, not an error.
TEST(BadInput, CopyBetweenVectorsOfAnotherElementTypeOrUnit) {
  auto f = sinew::vector<cl_float>().name("f");
  auto i = sinew::vector<cl_int>().name("i");
  std::vector<float> hf(64);
  std::vector<cl_int> hi(64);
  expect_error([&] { analyze(copy(f, i), {{f, hf}, {i, hi}}); }, {"copy", "'f' -> 'i'", "float"});
  try {
    analyze(copy(f, i), {{f, hf}, {i, hi}});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("int"), std::string::npos) << e.what();
  }
  auto a = sinew::vector<cl_float>().unit(2).name("a");
  auto b = sinew::vector<cl_float>().unit(4).name("b");
  std::vector<float> ha(64), hb(128);  // 32 units each
  expect_error([&] { analyze(copy(a, b), {{a, ha}, {b, hb}}); }, {"copy", "'a' -> 'b'", "unit"});
  auto g = sinew::vector<cl_float>().name("g");
  std::vector<float> hg(64);
  EXPECT_NO_THROW(analyze(copy(f, g), {{f, hf}, {g, hg}}));
}

// The combine reads `src` while other work-items write `dst`: a non-const src is a kernel that
// may write what the skeleton treats as its input.
TEST(BadInput, DivideAndConquerCombineWithAWritableSource) {
  const char* src = R"CL(
__kernel void leaf(__global SINEW_T* d, uint n, uint leaf) {}
__kernel void merge(__global SINEW_T* s, __global SINEW_T* d, uint n, uint run, uint k) {}
)CL";
  auto v = sinew::vector<cl_uint>().name("v");
  std::vector<cl_uint> hv(64);
  expect_error(
      [&] { analyze(divide_and_conquer(v, kernel_source(src, "leaf", "dc.cl"), kernel_source(src, "merge", "dc.cl")), {{v, hv}}); },
      {"combine", "argument 0 's'", "not const"});
}

// A kernel writes a vector that nothing binds and no later leaf reads: the result would be lost.
TEST(BadInput, WrittenVectorThatNothingReadsOrReceives) {
  Data d;
  auto lost = sinew::vector<cl_float>().name("lost");
  auto k = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), out(lost), scalar(2.0f));
  expect_error([&] { analyze(k, {{d.x, d.hx}}); }, {"saxpy", "argument 1 'y' (out 'lost')", "bound to nothing"});
  // In a pipeline: the last stage's output is lost, the first's is a channel.
  auto t = sinew::vector<cl_float>().name("t");
  auto k1 = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.x), out(t), scalar(2.0f));
  auto k2 = kernel_source(kSrc, "saxpy", "s.cl").args(in(t), out(lost), scalar(1.0f));
  expect_error([&] { analyze(pipeline(k1, k2), {{d.x, d.hx}}); }, {"pipeline/1", "out 'lost'", "bound to nothing"});
  // Channels that a later leaf, a copy or a reducer reads are no loss.
  auto k3 = kernel_source(kSrc, "saxpy", "s.cl").args(in(t), inout(d.y), scalar(1.0f));
  EXPECT_NO_THROW(analyze(pipeline(k1, k3), {{d.x, d.hx}, {d.y, d.hy}}));
  EXPECT_NO_THROW(analyze(pipeline(k1, copy(t, d.y)), {{d.x, d.hx}, {d.y, d.hy}}));
  auto r = result<cl_float>("r");
  EXPECT_NO_THROW(analyze(map_reduce(k1, reduce::sum(t, r)), {{d.x, d.hx}}));
  // A loop's next iteration reads what its last stage wrote.
  auto k4 = kernel_source(kSrc, "saxpy", "s.cl").args(in(d.y), out(t), scalar(2.0f));
  EXPECT_NO_THROW(analyze(loop(pipeline(k4, copy(t, d.y))).times(2), {{d.y, d.hy}}));
}

TEST(BadInput, HaloOnAWritableKernelParameter) {
  const char* src = "__kernel void st(__global int* in, __global int* out, uint w) {}";
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  std::vector<cl_int> hi(64), ho(64);
  auto k = kernel_source(src, "st", "h.cl").args(halo(I, 1, 1), out(O), scalar(cl_uint(4))).range_of(O).dims(2);
  expect_error([&] { analyze(k, {{I, hi}, {O, ho}}); }, {"st", "argument 0 'in'", "halo"});
}

TEST(BadInput, RangeOfAVectorTheLeafDoesNotTake) {
  Data d;
  auto other = sinew::vector<cl_float>(64).name("other");
  auto k = d.saxpy().range_of(other);
  expect_error([&] { analyze(k, {{d.x, d.hx}, {d.y, d.hy}}); }, {"saxpy", "range_of", "'other'"});
  EXPECT_NO_THROW(analyze(d.saxpy().range_of(d.y), {{d.x, d.hx}, {d.y, d.hy}}));
}

TEST(BadInput, LoopOfZeroIterations) {
  Data d;
  expect_error([&] { loop(d.saxpy()).times(0); }, {"loop", "times", "at least 1"});
}

TEST(BadInput, VectorBoundToNoElements) {
  Data d;
  std::vector<float> none;
  // Alone: it used to read "neither bound nor declared".
  auto k = kernel_source(kSrc, "img", "f.cl");
  auto p = sinew::vector<cl_uchar4>().name("pixels");
  std::vector<cl_uchar4> no_pixels;
  expect_error([&] { analyze(k.args(inout(p), scalar(cl_int(1))), {{p, no_pixels}}); },
               {"bindings", "vector 'pixels'", "empty"});
  // Beside a bound vector: it used to take its neighbour's size and read past the empty array.
  expect_error([&] { analyze(d.saxpy(), {{d.x, none}, {d.y, d.hy}}); }, {"bindings", "vector 'x'", "empty"});
}

// A user function of a scan or a reduction combines two elements: one of another arity fails to
// compile inside a generated file unless it is refused here.
TEST(BadInput, CustomOperatorOfOneParameter) {
  const char* ops = "int first(int a) { return a; }\nint pick(int a, int b) { return a > b ? a : b; }";
  auto v = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> hv(64);
  expect_error([&] { analyze(scan(v, scan_op::custom_source<cl_int>(ops, "first", 0, "ops.cl")), {{v, hv}}); },
               {"scan", "scan function 'first'", "1 parameter"});
  EXPECT_NO_THROW(analyze(scan(v, scan_op::custom_source<cl_int>(ops, "pick", 0, "ops.cl")), {{v, hv}}));
  Data d;
  auto r = result<cl_float>("r");
  const char* fops = "float first(float a) { return a; }";
  expect_error([&] { analyze(map_reduce(d.saxpy(), reduce::custom_source<cl_float>(d.y, r, fops, "first", 0.0f, "f.cl")),
                             {{d.x, d.hx}, {d.y, d.hy}}); },
               {"map_reduce", "reducer function 'first'", "1 parameter"});
}
