// Halos (sinew::halo) on however many PoCL devices the suite is given (1, 2 or 3), zero-copy and
// with the last device driven like a GPU: what the exchanges move, per iteration, in the Report
// and the trace; results against the C++ reference for aligned and unaligned rows; the errors
// before any device work.
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace sinew;
using namespace sinew::testing;

namespace {

// loop(pipeline(stencil_rows(halo(img, 1, 1, constant 5) -> out), copy(out -> img))) over `rows`
// rows of `width` ints, run `iterations` times with `config`; returns the report and checks the
// result against the reference.
Report run_heat_like(Runtime& rt, std::size_t rows, std::size_t width, std::size_t iterations, const Config& config) {
  HeatLike h(rows, width, iterations);
  auto want = h.img;
  Report r = h.run(rt, config);
  for (std::size_t it = 0; it < iterations; ++it) want = stencil_reference(want, width, 1, 1, Boundary::constant, 5);
  EXPECT_EQ(compare_int(h.img, want), "") << config.str() << " width " << width;
  return r;
}

Config even(const Runtime& rt) {
  Config c;
  c.shares.assign(rt.devices().size(), 1.0 / static_cast<double>(rt.devices().size()));
  return c;
}

}  // namespace

// Each exchange moves one row each way across every boundary between partitions: nothing
// else, whether the rows' bytes allow the slice inside the halo buffer (32 ints: 128 bytes, PoCL's
// base address alignment) or not (5 ints: the slice is copied in first, on its own device).
TEST(Halo, ExchangesMoveOnlyTheHaloRowsEachIteration) {
  Runtime rt;
  for (std::size_t width : {32u, 5u}) {
    const Report r = run_heat_like(rt, 64, width, 4, even(rt));
    const std::size_t partitions = r.partitions.size();
    ASSERT_GE(partitions, 1u);
    if (partitions == 1) {
      // One device: the constant boundary was written with the upload; nothing moves.
      for (const auto& e : r.exchanges) EXPECT_EQ(e.bytes + e.host_bytes + e.boundary_bytes, 0u);
      continue;
    }
    // Iteration 0 reads the halo uploaded from the host; 1, 2 and 3 read what the copy wrote.
    ASSERT_EQ(r.exchanges.size(), 3u) << r.str();
    for (std::size_t i = 0; i < r.exchanges.size(); ++i) {
      const auto& e = r.exchanges[i];
      EXPECT_EQ(e.vector, "img");
      EXPECT_EQ(e.iteration, i + 1);
      EXPECT_NE(e.reader.find("stencil_rows"), std::string::npos) << e.reader;
      EXPECT_EQ(e.bytes, 2 * (partitions - 1) * width * sizeof(cl_int)) << r.str();
      EXPECT_LE(e.host_bytes, e.bytes);  // devices in different contexts exchange through the host
      EXPECT_EQ(e.boundary_bytes, 0u);
    }
    EXPECT_NE(r.str().find("halo exchanges: 3"), std::string::npos) << r.str();
  }
}

// The copy that ends the loop's body swaps the two vectors' buffers instead (Analysis::
// swap_copies), for odd and even iteration counts, with the slice inside the halo buffer (32 ints
// a row) and outside (5 ints). With `out` a vector of the device's own (unbound, as in the heat
// sample) the copy runs once per partition, at the loop's end. Bound, `out` must end as copies
// would leave it, the last sweep's values (on a zero-copy device its slice is the user's memory:
// with the slice inside the halo buffer there, the copy stays a copy).
TEST(Halo, LoopCopySwapsBuffersAndKeepsCopySemantics) {
  Runtime rt;
  for (bool bound : {false, true})
    for (std::size_t width : {32u, 5u})
      for (std::size_t iterations : {1u, 2u, 3u, 4u}) {
        const std::size_t rows = 24;
        std::vector<int> img(rows * width), result(rows * width, 0);
        for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<int>((i * 31) % 17) - 8;
        auto want = img;
        for (std::size_t it = 0; it < iterations; ++it)
          want = stencil_reference(want, width, 1, 1, Boundary::constant, 5);
        auto I = sinew::vector<cl_int>().unit(width).name("img");
        auto O = sinew::vector<cl_int>().unit(width).name("out");
        auto sweep = kernel_source(kTestKernels, "stencil_rows", "t.cl")
                         .args(halo(I, 1, 1, cl_int(5)), out(O), scalar(cl_uint(width)), scalar(cl_uint(1)),
                               scalar(cl_uint(1)))
                         .range_of(O)  // sizes the NDRange: not a read of O
                         .dims(2);
        auto tree = loop(pipeline(sweep, copy(O, I))).times(iterations);
        std::vector<Binding> bindings{{I, img}};
        if (bound) bindings.emplace_back(O, result);
        const Report r = rt.run(tree, bindings, RunOptions{.config = even(rt), .profile = true}).get();
        const std::string where = std::string(bound ? "bound" : "unbound") + " out, width " + std::to_string(width) +
                                  ", " + std::to_string(iterations) + " iterations";
        EXPECT_EQ(compare_int(img, want), "") << where;
        if (bound) EXPECT_EQ(compare_int(result, want), "") << where;
        std::size_t copies = 0;
        for (const auto& k : r.kernels) {
          if (k.node.find("copy") == std::string::npos) continue;
          ++copies;
          if (!bound)
            EXPECT_EQ(k.launches, 1u) << where << ": " << k.node;
          else
            EXPECT_TRUE(k.launches == 1 || k.launches == iterations) << where << ": " << k.launches;
        }
        EXPECT_EQ(copies, r.partitions.size()) << where;
        if (r.partitions.size() == 1)  // the twin's constant boundary came with the upload too
          for (const auto& e : r.exchanges) EXPECT_EQ(e.bytes + e.host_bytes + e.boundary_bytes, 0u) << where;
      }
}

// A copy that cannot swap keeps copying every iteration: here the source is read before the
// sweep overwrites it (its old values feed the sweep), so the copy's destination must hold them.
TEST(Halo, LoopCopyWhoseSourceIsReadFirstStillCopies) {
  Runtime rt;
  const std::size_t n = 1000, iterations = 3;
  std::vector<int> a(n), b(n, 1);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<int>(i % 13);
  auto A = sinew::vector<cl_int>().name("a");
  auto B = sinew::vector<cl_int>().name("b");
  // a += b (b read first), then b = a * 2 (b overwritten), then copy(b, a).
  const char* add_into = "__kernel void add_into(__global int* a, __global const int* b) {\n"
                         "  a[get_global_id(0)] += b[get_global_id(0)];\n}\n";
  auto tree = loop(pipeline(kernel_source(add_into, "add_into", "add_into.cl").args(inout(A), in(B)),
                            kernel_source(kTestKernels, "mul2", "t.cl").args(in(A), out(B)), copy(B, A)))
                  .times(iterations);
  std::vector<int> wa = a, wb = b;
  for (std::size_t it = 0; it < iterations; ++it)
    for (std::size_t i = 0; i < n; ++i) {
      wa[i] += wb[i];
      wb[i] = wa[i] * 2;
      wa[i] = wb[i];
    }
  const Report r = rt.run(tree, {{A, a}, {B, b}}, RunOptions{.config = even(rt), .profile = true}).get();
  EXPECT_EQ(compare_int(a, wa), "");
  EXPECT_EQ(compare_int(b, wb), "");
  for (const auto& k : r.kernels)
    if (k.node.find("copy") != std::string::npos) EXPECT_EQ(k.launches, iterations) << k.node;
}

// The last device driven like a GPU: its partitions live in a context of their own, so their
// halo rows go through the host; the results stay right on every overlap level.
TEST(Halo, DiscreteDeviceExchangesThroughTheHost) {
  const std::size_t count = Runtime().devices().size();
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1)});
  for (unsigned overlap = 1; overlap <= 3; ++overlap) {
    Config c = even(rt);
    c.overlap = overlap;
    const Report r = run_heat_like(rt, 48, 32, 3, c);
    if (r.partitions.size() < 2) continue;
    ASSERT_EQ(r.exchanges.size(), 2u) << r.str();
    for (const auto& e : r.exchanges) {
      EXPECT_EQ(e.bytes, 2 * (r.partitions.size() - 1) * 32 * sizeof(cl_int)) << r.str();
      if (count > 1) EXPECT_GT(e.host_bytes, 0u) << r.str();
    }
  }
}

// Slices of one row each, and a halo wider than a partition: the halo gathers its rows from
// several neighbours.
TEST(Halo, PartitionsNarrowerThanTheHaloGatherFromSeveralNeighbours) {
  Runtime rt;
  const std::size_t devices = rt.devices().size();
  const std::size_t rows = devices + 2, width = 3;
  for (Boundary b : {Boundary::none, Boundary::clamp, Boundary::zero, Boundary::constant}) {
    std::vector<int> a(rows * width), t(rows * width), result(rows * width, 0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i * 13 % 11);
    auto I = sinew::vector<cl_int>().unit(width).name("a");
    auto T = sinew::vector<cl_int>().unit(width).name("t");
    auto O = sinew::vector<cl_int>().unit(width).name("o");
    const std::size_t before = 3, after = 2;
    Arg h = b == Boundary::constant ? halo(T, before, after, cl_int(-7)) : halo(T, before, after, b);
    auto tree = pipeline(kernel_source(kTestKernels, "mul2", "t.cl").args(in(I), out(T)),
                         kernel_source(kTestKernels, "stencil_rows", "t.cl")
                             .args(h, out(O), scalar(cl_uint(width)), scalar(cl_uint(before)), scalar(cl_uint(after)))
                             .dims(2));
    Config c;
    c.shares.assign(devices, 1.0 / static_cast<double>(devices));
    rt.run(tree, {{I, a}, {T, t}, {O, result}}, RunOptions{.config = c}).get();
    auto twice = a;
    for (auto& x : twice) x *= 2;
    if (b == Boundary::none) {
      // Beyond the edges the halo holds whatever was there: only rows far enough inside count.
      const auto want = stencil_reference(twice, width, before, after, Boundary::zero);
      for (std::size_t y = before; y + after < rows; ++y)
        for (std::size_t x = 0; x < width; ++x) EXPECT_EQ(result[y * width + x], want[y * width + x]) << y;
    } else {
      EXPECT_EQ(compare_int(result, stencil_reference(twice, width, before, after, b, -7)), "") << static_cast<int>(b);
    }
  }
}

TEST(Halo, TraceShowsTheExchanges) {
  const auto path = std::filesystem::temp_directory_path() / ("sinew_halo_trace_" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  Runtime rt(RuntimeOptions{.trace = path.string()});
  const Report r = run_heat_like(rt, 32, 32, 3, even(rt));
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  if (r.partitions.size() > 1) {
    EXPECT_NE(text.str().find("halo 'img'"), std::string::npos);
  }
  EXPECT_NE(text.str().find("stencil_rows"), std::string::npos);
  std::filesystem::remove(path);
}

// ----- errors before any device work -----------------------------------------------------------

TEST(HaloErrors, NegativeWidthNamesTheSide) {
  auto I = sinew::vector<cl_int>().name("img");
  try {
    (void)halo(I, -1, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "before");
    EXPECT_NE(std::string(e.what()).find("img"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)halo(I, 0, -2, Boundary::clamp), Error);
}

namespace {
// Runs `tree` over 8 rows of 4 ints and returns the error it gives; the host data must be unchanged.
Error refused(const Node& tree, const Vector<cl_int>& I, const Vector<cl_int>& O) {
  Runtime rt;
  std::vector<int> a(32, 1), o(32, 9);
  try {
    rt.run(tree, {{I, a}, {O, o}}).get();
  } catch (const Error& e) {
    EXPECT_EQ(a, std::vector<int>(32, 1));
    EXPECT_EQ(o, std::vector<int>(32, 9));
    return e;
  }
  ADD_FAILURE() << "the tree ran";
  return Error(make_error_code(errc::invalid_argument), "none", {});
}
Kernel stencil(Arg in, const VectorRef& out) {
  return kernel_source(kTestKernels, "stencil_rows", "t.cl")
      .args(std::move(in), sinew::out(out), scalar(cl_uint(4)), scalar(cl_uint(1)), scalar(cl_uint(1)))
      .dims(2);
}
}  // namespace

TEST(HaloErrors, ALeafThatWritesWhatItReadsWithAHalo) {
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  const Error e = refused(pipeline(copy(I, O), stencil(halo(O, 1, 1), O)), I, O);
  EXPECT_NE(std::string(e.what()).find("halo"), std::string::npos) << e.what();
  EXPECT_NE(e.node().find("stencil_rows"), std::string::npos) << e.node();
  EXPECT_NE(e.context().fix.find("copy"), std::string::npos) << e.context().fix;
}

TEST(HaloErrors, TwoDifferentHalosOfOneVector) {
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  auto T = sinew::vector<cl_int>().unit(4).name("tmp");
  const Error e = refused(pipeline(stencil(halo(I, 1, 1), T), stencil(halo(I, 2, 1), O)), I, O);
  EXPECT_NE(std::string(e.what()).find("another halo"), std::string::npos) << e.what();
  EXPECT_NE(e.context().fix.find("same halo"), std::string::npos) << e.context().fix;
}

TEST(HaloErrors, AHaloWiderThanTheVector) {
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  const Error e = refused(stencil(halo(I, 9, 1), O), I, O);  // 8 rows
  EXPECT_EQ(e.argument(), "halo");
  EXPECT_NE(std::string(e.what()).find("wider than the vector"), std::string::npos) << e.what();
}

TEST(HaloErrors, AHaloPassedToAScalarParameter) {
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  auto k = kernel_source(kTestKernels, "stencil_rows", "t.cl")
               .args(in(I), out(O), halo(I, 1, 1), scalar(cl_uint(1)), scalar(cl_uint(1)))
               .dims(2);
  const Error e = refused(k, I, O);
  EXPECT_NE(e.argument().find("halo 'img'"), std::string::npos) << e.argument();
}

TEST(HaloErrors, DumpAndSignatureShowTheHalo) {
  auto I = sinew::vector<cl_int>().unit(4).name("img");
  auto O = sinew::vector<cl_int>().unit(4).name("out");
  const std::string d = stencil(halo(I, 2, 1, Boundary::clamp), O).dump();
  EXPECT_NE(d.find("halo 'img' (2 before, 1 after, clamped)"), std::string::npos) << d;
  EXPECT_NE(stencil(halo(I, 1, 1), O).signature(), stencil(halo(I, 1, 2), O).signature());
  EXPECT_NE(stencil(halo(I, 1, 1), O).signature(), stencil(halo(I, 1, 1, Boundary::clamp), O).signature());
}

// ----- the poison check ------------------------------------------------------------------------

namespace {
// The stencil over rows of 4 ints with in() (`wrong`) or with a halo; on the last device driven
// like a GPU, in two partitions at least (two overlap queues).
struct PoisonRun {
  std::vector<int> img, result, want;
  Report report;
};
PoisonRun run_stencil(bool poison_check, bool wrong) {
  const std::size_t count = Runtime().devices().size(), width = 4, rows = 37;
  RuntimeOptions o;
  o.discrete = std::to_string(count - 1);
  o.poison_check = poison_check;
  Runtime rt(o);
  PoisonRun r;
  r.img.resize(rows * width);
  for (std::size_t i = 0; i < r.img.size(); ++i) r.img[i] = static_cast<int>(i % 23) - 11;
  r.result.assign(r.img.size(), 0);
  auto I = sinew::vector<cl_int>().unit(width).name("img");
  auto O = sinew::vector<cl_int>().unit(width).name("out");
  auto k = wrong ? kernel_source(kTestKernels, "stencil_past_slice", "t.cl").args(in(I), out(O), scalar(cl_uint(width)), offset(O), size(O))
                 : kernel_source(kTestKernels, "stencil_edges", "t.cl").args(halo(I, 1, 1), out(O), scalar(cl_uint(width)), offset(O), size(O));
  Config c;
  c.shares.assign(count, 1.0 / static_cast<double>(count));
  c.overlap = 2;
  r.report = rt.run(k.dims(2), {{I, r.img}, {O, r.result}}, RunOptions{.config = c}).get();
  r.want.resize(r.img.size());
  for (std::size_t y = 0; y < rows; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      int s = 2 * r.img[y * width + x];
      if (y > 0) s += r.img[(y - 1) * width + x];
      if (y + 1 < rows) s += 3 * r.img[(y + 1) * width + x];
      r.want[y * width + x] = s;
    }
  return r;
}
}  // namespace

// The mistake of the issue: reading the rows around the slice through in(). On a discrete device
// it reads whatever lies past its buffer; the poison check makes that an error naming the vector.
TEST(PoisonCheck, CatchesAKernelReadingPastItsSlice) {
  try {
    (void)run_stencil(true, true);
    FAIL() << "the poison check let a kernel read past its slice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_tree));
    EXPECT_EQ(e.argument(), "vector 'out'");
    EXPECT_NE(std::string(e.what()).find("poison"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("partition"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("sinew::halo"), std::string::npos) << e.context().fix;
  }
  // Without the check the same run gives wrong rows at the partitions' boundaries, silently.
  const PoisonRun quiet = run_stencil(false, true);
  EXPECT_NE(quiet.result, quiet.want);
}

TEST(PoisonCheck, AcceptsTheSameStencilWithAHalo) {
  const PoisonRun r = run_stencil(true, false);
  EXPECT_EQ(compare_int(r.result, r.want), "");
}

// Every halo case of the shared trees (exchanges in pipelines and loops, every boundary) passes
// the check on a discrete device and gives the reference result.
TEST(PoisonCheck, HaloTreesPass) {
  const std::size_t count = Runtime().devices().size();
  RuntimeOptions o;
  o.discrete = std::to_string(count - 1);
  o.poison_check = true;
  Runtime rt(o);
  for (const char* name : {"halo_clamp", "halo_none", "halo_pipeline_zero", "halo_loop_constant"}) {
    for (unsigned overlap : {1u, 3u}) {
      Holder h;
      Case c = make_case(name, 9, h);
      Config cfg;
      cfg.shares.assign(count, 1.0 / static_cast<double>(count));
      cfg.overlap = overlap;
      c.report = rt.run(c.tree, c.bindings, RunOptions{.config = cfg}).get();
      EXPECT_EQ(c.check(), "") << name << " overlap " << overlap;
    }
  }
}
