// Every sample at its small size on PoCL, through the same descriptor the sample program,
// the benchmarks and training use. On several devices (POCL_DEVICES) the samples also run split
// over all of them and must give the single-device answer.
#include "common/descriptors.hpp"
#include "common/sample.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace sinew;

class Samples : public ::testing::TestWithParam<std::string> {};

TEST_P(Samples, SmallSizeMatchesTheReference) {
  Runtime rt;
  auto s = samples::find(GetParam());
  ASSERT_TRUE(s) << GetParam();
  s->prepare(s->sizes().small);
  samples::Check c;
  for (const auto& dev : rt.devices()) {  // each device alone
    Report r = s->run(rt, RunOptions{.device = dev.index});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " on " << dev.id() << ": " << c.message << " (max error " << c.max_error
                      << ", tolerance " << c.tolerance << ")";
    EXPECT_GT(r.wall_ms, 0.0);
  }
  if (rt.devices().size() > 1) {
    Config cfg;
    cfg.shares.assign(rt.devices().size(), 1.0 / rt.devices().size());
    s->run(rt, RunOptions{.config = cfg});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " split: " << c.message;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Samples, ::testing::ValuesIn(samples::names()),
                         [](const auto& info) { return info.param; });

// The iterative samples train as the others do (bench_training, `sinew train`): the first run of
// each trains a plan over every device and runs it on the real data, which matches its reference.
TEST(SamplesRegistry, IterativeSamplesTrainAndMatchTheirReference) {
  RuntimeOptions o;
  o.kb_path = ":memory:";
  o.quiet = true;
  o.training.max_executions = 8;
  Runtime rt(o);
  for (const char* name : {"cg", "kmeans", "pagerank"}) {
    auto s = samples::find(name);
    ASSERT_TRUE(s) << name;
    s->prepare(s->sizes().small);
    const Report r = s->run(rt);
    EXPECT_EQ(r.provenance, Provenance::trained) << name;
    EXPECT_GT(r.iterations, 1u) << name;
    const samples::Check c = s->check();
    EXPECT_TRUE(c.ok) << name << " trained " << r.config.str() << ": " << c.message;
  }
}

TEST(SamplesRegistry, UnknownNameAndBadSize) {
  EXPECT_EQ(samples::find("no_such_sample"), nullptr);
  EXPECT_GE(samples::names().size(), 5u);
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  EXPECT_THROW(s->prepare(63), std::invalid_argument);  // the mirror needs an even side
  EXPECT_FALSE(s->check().ok);                           // nothing ran yet
}

// ----- filter_pipeline on non-square images ---------------------------------------------------
// WIDTHxHEIGHT reaches the sample through Sample::prepare(string), as `--size` and `sinew train
// --size` give it. Each shape is checked against the C++ reference, on each device alone and
// split half and half over two devices (POCL_DEVICES="pthread pthread"; skipped on one).

namespace {
// The shapes: wider than tall, taller than wide (with a line count no split divides evenly).
const char* const kShapes[] = {"96x40", "34x151"};

std::size_t width_of(const std::string& shape) { return std::stoul(shape.substr(0, shape.find('x'))); }
std::size_t height_of(const std::string& shape) { return std::stoul(shape.substr(shape.find('x') + 1)); }

std::size_t bound_pixels(samples::Sample& s) {
  auto b = s.bindings();
  return b.size() == 1 ? b.front().elements : 0;
}
}  // namespace

TEST(FilterPipelineShapes, NonSquareImageOnEachDeviceMatchesTheReference) {
  Runtime rt;
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* shape : kShapes) {
    s->prepare(std::string(shape));
    EXPECT_EQ(s->size_text(), shape);
    const std::size_t width = width_of(shape), height = height_of(shape);
    EXPECT_EQ(s->size(), width);
    EXPECT_EQ(bound_pixels(*s), width * height);
    for (const auto& dev : rt.devices()) {
      Report r = s->run(rt, RunOptions{.device = dev.index});
      samples::Check c = s->check();
      EXPECT_TRUE(c.ok) << shape << " on " << dev.id() << ": " << c.message;
      // One unit is one line of `width` pixels, all on this device (in one partition, or one per
      // fission sub-device or overlap queue at the level the runtime picked for the device alone).
      std::size_t units = 0;
      for (const auto& part : r.partitions) {
        EXPECT_EQ(part.device, dev.index);
        units += part.units;
      }
      EXPECT_EQ(units, height) << r.config.str();
    }
  }
  s->prepare(std::string("64"));  // a plain number stays a square
  EXPECT_EQ(s->size_text(), "64");
  EXPECT_EQ(bound_pixels(*s), 64u * 64u);
}

TEST(FilterPipelineShapes, NonSquareImageSplitHalfAndHalfMatchesTheReference) {
  Runtime rt;
  if (rt.devices().size() < 2) GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\")";
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* shape : kShapes) {
    s->prepare(std::string(shape));
    Config cfg;
    cfg.shares.assign(rt.devices().size(), 0.0);
    cfg.shares[0] = cfg.shares[1] = 0.5;
    Report r = s->run(rt, RunOptions{.config = cfg});
    samples::Check c = s->check();
    EXPECT_TRUE(c.ok) << shape << " split 50/50: " << c.message;
    std::size_t lines = 0;
    std::set<std::size_t> devices;
    for (const auto& p : r.partitions) {
      lines += p.units;
      devices.insert(p.device);
    }
    EXPECT_EQ(lines, height_of(shape));
    EXPECT_EQ(devices.size(), 2u) << r.decomposition;
  }
}

TEST(FilterPipelineShapes, BadSizeTextIsRejectedClearly) {
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* bad : {"1024x", "x512", "1024x2048x2", "12ax4", "0x64", "64x0", "-4x8", "big"}) {
    try {
      s->prepare(std::string(bad));
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("filter_pipeline"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << "the message quotes the size: " << what;
    }
  }
  try {  // well formed, but the mirror needs an even width
    s->prepare(std::string("63x64"));
    ADD_FAILURE() << "an odd width was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("even"), std::string::npos) << e.what();
  }
  // A rejected size leaves the sample as it was: the last good size still runs and checks.
  s->prepare(std::string("32x8"));
  EXPECT_THROW(s->prepare(std::string("32x")), std::invalid_argument);
  EXPECT_EQ(s->size_text(), "32x8");
  // Other samples take plain numbers only, with a message that says so.
  auto saxpy = samples::find("saxpy");
  ASSERT_TRUE(saxpy);
  EXPECT_THROW(saxpy->prepare(std::string("1024x2")), std::invalid_argument);
}

// The knowledge base must tell shapes apart: 64x32 and 32x64 have as many pixels (the same
// image.size), but the width, a marked feature, differs, so the second is derived, not a hit.
TEST(FilterPipelineShapes, KnowledgeBaseTellsShapesOfOneSizeApart) {
  RuntimeOptions o;
  o.kb_path = ":memory:";
  o.quiet = true;
  o.unseen = UnseenPolicy::derive;
  o.training.max_executions = 8;
  Runtime rt(o);
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  s->prepare(std::string("64x32"));
  Report wide = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(wide.provenance, Provenance::trained);
  EXPECT_TRUE(s->check().ok);

  s->prepare(std::string("32x64"));
  Report tall = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(tall.provenance, Provenance::derived);
  EXPECT_EQ(tall.derived_from, wide.kb_entry);
  EXPECT_NE(tall.kb_entry, wide.kb_entry);
  EXPECT_TRUE(s->check().ok) << s->check().message;

  s->prepare(std::string("64x32"));
  Report again = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(again.provenance, Provenance::knowledge_base);
  EXPECT_EQ(again.kb_entry, wide.kb_entry);
}

// ----- fft on several queues of one device and on fission sub-devices ----------------------------
// clFFT plans are bound to the device of the queue they were baked with, and a plan of a large
// length owns clFFT's intermediate buffer. A plan shared by a context's queues gave wrong results
// on a discrete device's overlap queues (two queues running one plan's passes at once) and
// CLFFT_DEVICE_MISMATCH on fission sub-devices (one context, several devices). 65536 points take
// clFFT's multi-pass path, which uses that buffer; 8 transforms give every queue (up to four)
// and every sub-device work. Both checks: the round trip, and the forward transform alone
// against the C++ FFT (a corrupted forward pass could in principle survive a round trip).

namespace {
constexpr std::size_t kFftTransforms = 8;

std::set<std::pair<unsigned, unsigned>> queues_used(const Report& r, std::size_t device) {
  std::set<std::pair<unsigned, unsigned>> q;
  for (const auto& p : r.partitions)
    if (p.device == device && p.units > 0) q.emplace(p.sub_device, p.queue);
  return q;
}

// Runs and checks; a failure (a clFFT error included) is reported with `what` and the next
// configuration still runs. Returns the report, or nothing when the run threw.
std::optional<Report> run_fft(samples::Fft& s, Runtime& rt, const Config& cfg, const std::string& what) {
  std::optional<Report> r;
  try {
    r = s.run(rt, RunOptions{.config = cfg});
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " (" << cfg.str() << "): " << e.what();
    return r;
  }
  samples::Check c = s.check();
  EXPECT_TRUE(c.ok) << what << " (" << cfg.str() << "): " << c.message;
  return r;
}
}  // namespace

// The last device driven as a discrete GPU with 1-4 overlap queues, alone (three runs each: the
// race was timing-dependent), then beside the first device under each of its fission configs.
TEST(FftQueues, DiscreteDeviceWithOneToFourOverlapQueuesMatchesTheReference) {
  const std::size_t count = Runtime().devices().size();
  for (std::optional<double> chunk_mb : {std::optional<double>(), std::optional<double>(0.5)}) {  // default chunks; one transform (512 KB) per partition
    Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1), .chunk_mb = chunk_mb});
    ASSERT_TRUE(rt.devices().back().discrete);
    for (bool roundtrip : {true, false}) {
      samples::Fft s;
      s.params.roundtrip = roundtrip;
      s.prepare(kFftTransforms);
      for (unsigned overlap = 1; overlap <= 4; ++overlap) {
        const std::string what = std::string(roundtrip ? "round trip" : "forward") + ", overlap " +
                                 std::to_string(overlap) + ", chunk_mb " + (chunk_mb ? std::to_string(*chunk_mb) : "default");
        Config cfg;
        cfg.shares.assign(count, 0.0);
        cfg.shares.back() = 1.0;
        cfg.overlap = overlap;
        for (int repeat = 0; repeat < 3; ++repeat) {
          auto r = run_fft(s, rt, cfg, what);
          if (r) EXPECT_EQ(queues_used(*r, count - 1).size(), overlap) << what << "\n" << r->decomposition;
        }
        if (count < 2) continue;
        cfg.shares.assign(count, 1.0 / count);
        for (const auto& fission : rt.devices()[0].fission_configs) {
          cfg.fission = fission.name;
          run_fft(s, rt, cfg, what + ", split");
        }
      }
    }
  }
}

// Every fission configuration of the first device, alone and (with several devices) split over
// all of them: each sub-device runs its own transforms.
TEST(FftQueues, EveryFissionConfigurationMatchesTheReference) {
  Runtime rt;
  const std::size_t count = rt.devices().size();
  for (bool roundtrip : {true, false}) {
    samples::Fft s;
    s.params.roundtrip = roundtrip;
    s.prepare(kFftTransforms);
    for (const auto& fission : rt.devices()[0].fission_configs) {
      std::vector<std::vector<double>> share_sets{std::vector<double>(count, 0.0)};
      share_sets[0][0] = 1.0;
      if (count > 1) share_sets.emplace_back(count, 1.0 / count);
      for (const auto& shares : share_sets) {
        Config cfg;
        cfg.shares = shares;
        cfg.fission = fission.name;
        auto r = run_fft(s, rt, cfg, roundtrip ? "round trip" : "forward");
        if (!r) continue;
        // Alone on a fissioned device, its transforms run on more than one sub-device.
        const auto used = queues_used(*r, 0).size();
        EXPECT_LE(used, fission.sub_devices()) << cfg.str() << "\n" << r->decomposition;
        if (shares[0] == 1.0 && fission.sub_devices() > 1) EXPECT_GE(used, 2u) << cfg.str() << "\n" << r->decomposition;
      }
    }
  }
}

// ----- histogram: odd shapes and uneven splits ------------------------------------------------
// One map_reduce over a 256-byte struct per row: every row count below, beside and above a
// work-group, on each device alone and split unevenly over all of them (POCL_DEVICES).
TEST(HistogramShapes, OddShapesAndUnevenSplitsMatchTheReference) {
  Runtime rt;
  samples::Histogram s;
  for (auto [width, height] : {std::pair<std::size_t, std::size_t>{50, 1}, {7, 37}, {129, 301}}) {
    s.params.height = height;
    s.prepare(width);
    for (const auto& dev : rt.devices()) {
      s.run(rt, RunOptions{.device = dev.index});
      auto c = s.check();
      EXPECT_TRUE(c.ok) << width << "x" << height << " on " << dev.id() << ": " << c.message;
    }
    if (rt.devices().size() > 1) {
      Config cfg;
      double sum = 0;
      for (std::size_t d = 0; d < rt.devices().size(); ++d) cfg.shares.push_back(0.137 + 0.31 * static_cast<double>(d));
      for (double x : cfg.shares) sum += x;
      for (double& x : cfg.shares) x /= sum;
      s.run(rt, RunOptions{.config = cfg});
      auto c = s.check();
      EXPECT_TRUE(c.ok) << width << "x" << height << " split " << cfg.str() << ": " << c.message;
    }
  }
}

// ----- the stencil samples (heat, sobel): halos ------------------------------------------------
// Split half and half over two devices, zero-copy and with device 1 driven as a discrete GPU
// (explicit transfers: a halo row that fails to arrive gives wrong cells, not a lucky read of
// host memory), each must match its reference, and each halo exchange must move the rows next
// to the one partition boundary only: one row each way.

namespace {
struct StencilCase {
  const char* name;
  std::size_t row_bytes_per_cell;
};
const StencilCase kStencils[] = {{"heat", sizeof(cl_float)}, {"sobel", sizeof(cl_uchar)}};
}  // namespace

TEST(StencilSamples, SplitOverTwoDevicesMovesOnlyBoundaryRows) {
  for (const char* discrete : {"", "cpu:1"}) {
    Runtime rt(RuntimeOptions{.discrete = std::string(discrete)});
    if (rt.devices().size() < 2) GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\")";
    for (const auto& sc : kStencils) {
      auto s = samples::find(sc.name);
      ASSERT_TRUE(s);
      s->prepare(s->sizes().small);
      Config cfg;
      cfg.shares.assign(rt.devices().size(), 0.0);
      cfg.shares[0] = cfg.shares[1] = 0.5;
      Report r = s->run(rt, RunOptions{.config = cfg});
      samples::Check c = s->check();
      EXPECT_TRUE(c.ok) << sc.name << " split 50/50, discrete '" << discrete << "': " << c.message;
      const std::uint64_t row = s->size() * sc.row_bytes_per_cell;
      ASSERT_FALSE(r.exchanges.empty()) << sc.name << ": a written vector read with a halo on two partitions";
      for (const auto& e : r.exchanges) {
        EXPECT_LE(e.bytes, 2 * row) << sc.name << ": exchange of " << e.vector << " before " << e.reader
                                    << " in iteration " << e.iteration;
        EXPECT_GT(e.bytes, 0u) << sc.name << ": exchange of " << e.vector;
      }
    }
  }
}

TEST(StencilSamples, HeatStopsAtItsTolerance) {
  Runtime rt;
  samples::Heat heat(samples::HeatParams{.tolerance = 0.5f});
  heat.prepare(heat.sizes().small);
  heat.run(rt, RunOptions{.device = 0});
  samples::Check c = heat.check();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_GT(heat.iterations_run(), 1u);
  EXPECT_LT(heat.iterations_run(), samples::Heat::default_iterations(heat.size()));
  EXPECT_LT(heat.residual(), 0.5f);

  samples::Heat never(samples::HeatParams{.iterations = 7, .tolerance = 0});  // 0: runs every sweep
  never.prepare(never.sizes().small);
  const Report r = never.run(rt, RunOptions{.device = 0, .profile = true});
  c = never.check();
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_EQ(never.iterations_run(), 7u);
  // Its copy(unew, u) swaps buffers each sweep: the copy runs once, at the loop's end.
  bool copy_seen = false;
  for (const auto& k : r.kernels)
    if (k.node.find("copy") != std::string::npos) {
      EXPECT_EQ(k.launches, 1u) << k.node;
      copy_seen = true;
    }
  EXPECT_TRUE(copy_seen) << r.str();
}

// ----- samples under the dynamic schedule (issue 18) ---------------------------------------------
namespace {
// Over every device and on each alone, zero copy and with the last device discrete, a prepared
// sample's run under the dynamic schedule equals its reference and its (last) run's chunks cover
// its `rows` units once.
void expect_dynamic_runs_match(samples::Sample& s, std::size_t rows) {
  Runtime zero_copy;
  Runtime discrete(RuntimeOptions{.discrete = std::to_string(zero_copy.devices().size() - 1)});
  for (Runtime* rt : {&zero_copy, &discrete}) {
    std::vector<std::string> plans = {"schedule=dynamic", "schedule=dynamic,min_chunk=5"};
    for (std::size_t d = 0; d < rt->devices().size(); ++d)
      plans.push_back(std::to_string(d) + "=1,schedule=dynamic");
    for (const auto& plan : plans) {
      const Report r = s.run(*rt, RunOptions{.plan = plan});
      const samples::Check c = s.check();
      EXPECT_TRUE(c.ok) << s.name() << ", " << plan << ": " << c.message;
      std::size_t units = 0;
      for (auto u : r.chunk_units) units += u;
      EXPECT_EQ(units, rows) << s.name() << ", " << plan;
      EXPECT_EQ(r.config.schedule, "dynamic") << s.name() << ", " << plan;
    }
  }
}
}  // namespace

// Mandelbrot's irregular rows dealt out as guided chunks.
TEST(MandelbrotDynamic, GuidedChunksMatchTheReference) {
  samples::Mandelbrot m;
  m.params.max_iter = 200;
  m.prepare(std::size_t{96});
  expect_dynamic_runs_match(m, 96);
}

// Tascell's 2D stencil: one-sweep runs reading the other grid's halo, so their partitions are
// independent and chunks of rows may go anywhere; every sweep of a run takes its own chunks.
TEST(Stencil2dDynamic, ChunksOfRowsMatchTheReference) {
  samples::Stencil2d st;
  st.params.sweeps = 5;
  st.prepare(std::size_t{96});
  expect_dynamic_runs_match(st, 96);
}

// ----- mandelbrot and stencil2d under schedule=steal, as SINEW_CONFIG=schedule=steal gives it --
namespace {
// Runs that name no plan on a runtime whose RuntimeOptions::config ($SINEW_CONFIG, as the samples'
// headers document) is schedule=steal, zero copy and with the last device discrete: the
// reference, and the (last) run's pieces cover its `rows` units once.
void expect_steal_runs_match(samples::Sample& s, std::size_t rows) {
  const std::size_t count = Runtime().devices().size();
  for (bool discrete : {false, true}) {
    Runtime rt(RuntimeOptions{.discrete = discrete ? std::to_string(count - 1) : std::string(),
                              .config = "schedule=steal"});
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second starts where the first's work ended
      const Report r = s.run(rt);
      const samples::Check c = s.check();
      EXPECT_TRUE(c.ok) << s.name() << (discrete ? " discrete: " : " zero-copy: ") << c.message;
      EXPECT_EQ(r.config.schedule, "steal") << s.name();
      std::size_t units = 0;
      for (auto u : r.chunk_units) units += u;
      EXPECT_EQ(units, rows) << s.name();
    }
  }
}
}  // namespace

TEST(MandelbrotSteal, SinewConfigScheduleStealMatchesTheReference) {
  samples::Mandelbrot m;
  m.params.max_iter = 200;
  m.prepare(std::size_t{96});
  expect_steal_runs_match(m, 96);
}

TEST(Stencil2dSteal, SinewConfigScheduleStealMatchesTheReference) {
  samples::Stencil2d st;
  st.params.sweeps = 3;
  st.prepare(std::size_t{96});
  expect_steal_runs_match(st, 96);
}

// ----- blockmm: per-device variants (gemm on GPU-variant devices, the blocked kernel elsewhere) --
// The last device runs the GPU variant (RuntimeOptions::variant_gpu); each implementation alone
// and both together under schedule=steal, zero copy and with the last device discrete: the
// reference within the sample's stated tolerance every time, partitions in whole blocks of rows
// wherever the blocked kernel (whose work-groups are block x block tiles) is in the tree.
TEST(BlockmmVariants, GemmAndTheBlockedKernelAgreeAloneAndStealingTogether) {
  const std::size_t count = Runtime().devices().size();
  const std::string last = std::to_string(count - 1);
  for (bool discrete : {false, true}) {
    Runtime rt(RuntimeOptions{.discrete = discrete ? last : std::string(), .variant_gpu = last});
    for (const char* variants : {"both", "gemm", "blocked"}) {
      samples::Blockmm m;
      m.params.variants = variants;
      m.params.block = 8;
      m.prepare(std::size_t{96});
      std::vector<RunOptions> runs;
      for (std::size_t d = 0; d < count; ++d) runs.push_back(RunOptions{.device = d});
      runs.push_back(RunOptions{.plan = "schedule=steal"});
      for (const RunOptions& o : runs) {
        const Report r = m.run(rt, o);
        const samples::Check c = m.check();
        EXPECT_TRUE(c.ok) << variants << (discrete ? " discrete " : " zero-copy ") << r.config.str() << ": " << c.message;
        if (std::string(variants) == "gemm") continue;  // no tiles: any rows
        for (const auto& p : r.partitions) {
          if (p.first + p.units == 96) continue;  // the last piece ends with the rows
          EXPECT_EQ(p.units % 8, 0u) << variants << " " << r.config.str();
        }
      }
    }
  }
}

// ----- matmul under the dynamic schedule: blocks of rows through CLBlast's gemm ----------------
TEST(MatmulDynamic, BlocksOfRowsMatchTheReference) {
  Runtime rt;
  samples::Matmul m;
  m.prepare(std::size_t{96});
  for (const char* plan : {"schedule=dynamic,min_chunk=16", "schedule=dynamic"}) {
    const Report r = m.run(rt, RunOptions{.plan = plan});
    const samples::Check c = m.check();
    EXPECT_TRUE(c.ok) << plan << ": " << c.message;
    std::size_t rows = 0;
    for (auto u : r.chunk_units) rows += u;
    EXPECT_EQ(rows, 96u) << plan;
  }
}

// Hotspot's coefficients keep the explicit step monotone at every grid side (each cell a convex
// combination of itself, its neighbours and the ambient), and are Rodinia's where its
// precision-derived step already does: float steps with the coefficients of a 4096 x 4096 grid
// (each cell's constants; the grid's size enters only through them) from a checkerboard of 300 K
// and 350 K stay within those temperatures, where Rodinia's step grew the checkerboard to NaN.
TEST(HotspotCoefficients, TheExplicitStepStaysMonotoneAtEverySide) {
  for (std::size_t side : {2u, 64u, 512u, 1024u, 1536u, 2048u, 4096u, 16384u, 65535u}) {
    const auto c = samples::HotspotCoefficients::of(side, side);
    const double diagonal = double(c.step_div_cap) * (2 * double(c.rx_inv) + 2 * double(c.ry_inv) + double(c.rz_inv));
    EXPECT_GT(c.step_div_cap, 0.0f) << side;
    EXPECT_LE(diagonal, 0.5 * (1 + 1e-6)) << side;
  }
  // Rodinia's: step 0.001 / (3e6 / (0.5 x 0.0005 m x 1.75e6)) over a cell's capacity.
  EXPECT_NEAR(samples::HotspotCoefficients::of(64, 64).step_div_cap, 0.0053333, 1e-6);
  EXPECT_NEAR(samples::HotspotCoefficients::of(512, 512).step_div_cap, 0.341333, 1e-5);

  const auto c = samples::HotspotCoefficients::of(4096, 4096);
  const std::size_t n = 32;
  std::vector<float> t(n * n), next(n * n);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = (i / n + i % n) % 2 ? 350.0f : 300.0f;
  for (int step = 0; step < 200; ++step) {
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t col = 0; col < n; ++col) {
        const std::size_t i = r * n + col;
        const float v = t[i], north = r == 0 ? v : t[i - n], south = r == n - 1 ? v : t[i + n];
        const float west = col == 0 ? v : t[i - 1], east = col == n - 1 ? v : t[i + 1];
        next[i] = v + c.step_div_cap * ((south + north - 2.0f * v) * c.ry_inv + (east + west - 2.0f * v) * c.rx_inv +
                                        (c.amb - v) * c.rz_inv);
      }
    t.swap(next);
  }
  for (float v : t) {
    EXPECT_GE(v, c.amb);
    ASSERT_LE(v, 350.0f);
  }
  EXPECT_NEAR(t[0], 325.0f, 1.0f) << "the checkerboard evens out to its mean";
}

// The samples of existing kernels (issue 40): hotspot (global indices) and periodic (a leaf that
// runs whole), zero-copy and with the last device discrete, with the poison check, each device
// alone and split evenly and lopsided: the reference every time; periodic's stencil split by the
// plan and its wrap leaf run whole on the device with the plan's largest share once a step.
TEST(ExistingKernelSamples, HotspotAndPeriodicOnEveryPlanWithThePoisonCheck) {
  const std::size_t count = Runtime().devices().size();
  for (bool discrete : {false, true}) {
    Runtime rt(RuntimeOptions{.discrete = discrete ? std::to_string(count - 1) : std::string(), .poison_check = true});
    std::vector<Config> plans;
    for (std::size_t d = 0; d < count; ++d) plans.push_back(Config::single(d, count));
    Config even;
    even.shares.assign(count, 1.0 / static_cast<double>(count));
    plans.push_back(even);
    Config lopsided = even;
    for (std::size_t d = 0; d < count; ++d) lopsided.shares[d] = count == 1 ? 1.0 : d == 0 ? 0.8 : 0.2 / double(count - 1);
    lopsided.overlap = 2;
    plans.push_back(lopsided);
    for (const char* name : {"hotspot", "periodic"}) {
      auto s = samples::find(name);
      ASSERT_TRUE(s) << name;
      s->prepare(s->sizes().small);
      for (const Config& c : plans) {
        const Report r = s->run(rt, RunOptions{.config = c});
        const samples::Check check = s->check();
        EXPECT_TRUE(check.ok) << name << (discrete ? " discrete " : " zero-copy ") << c.str() << ": " << check.message;
        std::size_t working = 0, sharing = 0;
        for (const auto& p : r.partitions) working += p.units > 0;
        for (double share : c.shares) sharing += share > 0;
        if (std::string(name) != "periodic") continue;
        EXPECT_GE(working, sharing) << c.str();
        if (working == 1) {
          EXPECT_TRUE(r.whole_leaves.empty()) << c.str();  // one partition of every unit: whole already
          continue;
        }
        ASSERT_EQ(r.whole_leaves.size(), 1u) << c.str() << "\n" << r.str();
        const auto largest = std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin();
        EXPECT_EQ(r.whole_leaves.front().device, static_cast<std::size_t>(largest)) << c.str();
        EXPECT_EQ(r.whole_leaves.front().launches, r.iterations) << c.str();
      }
    }
  }
}
