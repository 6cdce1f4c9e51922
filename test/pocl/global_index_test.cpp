// Kernels written for the whole range (Kernel::global_indices) on however many PoCL devices the
// suite is given (1, 2 or 3), zero-copy and with the last device driven like a GPU, with the
// poison check: stencils that test their global row and column give the one-device result on every
// split and schedule, with halos of 1 and 2 rows; the errors before any device work.
#include "pocl/suite_runtime.hpp"
#include "pocl/trees.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>

using namespace sinew;
using namespace sinew::testing;

namespace {

// A Jacobi sweep as a benchmark suite writes it: its global row and column, a boundary test on
// them, neighbours at global positions. Integer arithmetic: every split must match bitwise.
const char* kGlobalKernels = R"CL(
__kernel void sweep(__global const int* t, __global int* next, uint rows, uint cols, uint r) {
  uint x = get_global_id(0), y = get_global_id(1);
  uint i = y * cols + x;
  if (y < r || y >= rows - r || x < r || x >= cols - r) { next[i] = t[i]; return; }
  int s = 3 * t[i];
  for (uint k = 1; k <= r; ++k) s += t[i - k * cols] + 2 * t[i + k * cols] + t[i - k] + t[i + k];
  next[i] = s % 1009;
}
// One dimension: element i reads i - 1 and i + 1.
__kernel void line(__global const int* a, __global int* b, uint n) {
  size_t i = get_global_id(0);
  b[i] = (i == 0 || i == n - 1) ? a[i] : a[i - 1] - 2 * a[i] + 3 * a[i + 1];
}
// The sweep written for slices: `t` from r rows before the slice, `next` the slice, the global row
// from offset(next).
__kernel void sweep_slices(__global const int* t, __global int* next, uint rows, uint cols, uint r, uint first) {
  uint x = get_global_id(0), row = get_global_id(1);
  uint y = first / cols + row, i = row * cols + x, h = (row + r) * cols + x;
  if (y < r || y >= rows - r || x < r || x >= cols - r) { next[i] = t[h]; return; }
  int s = 3 * t[h];
  for (uint k = 1; k <= r; ++k) s += t[h - k * cols] + 2 * t[h + k * cols] + t[h - k] + t[h + k];
  next[i] = s % 1009;
}
// A pointwise update with a boundary test on the global index, in both styles.
__kernel void bump(__global int* x, uint n) {
  uint i = get_global_id(0);
  if (i != 0 && i != n - 1) x[i] = (3 * x[i] + (int)i) % 1009;
}
__kernel void bump_slices(__global int* x, uint n, uint first) {
  uint i = get_global_id(0);
  if (first + i != 0 && first + i != n - 1) x[i] = (3 * x[i] + (int)(first + i)) % 1009;
}
#define MAKE(name) __kernel void name(__global int* v) { v[get_global_id(0)] = 1; }
MAKE(made)
__kernel void untyped(__global void* v, uint n) { }
__kernel void fixed(__global int* const v) { v[get_global_id(0)] = 1; }
)CL";

std::vector<int> sweep_reference(std::vector<int> t, std::size_t rows, std::size_t cols, std::size_t r,
                                 std::size_t steps) {
  std::vector<int> next(t.size());
  for (std::size_t s = 0; s < steps; ++s) {
    for (std::size_t y = 0; y < rows; ++y)
      for (std::size_t x = 0; x < cols; ++x) {
        const std::size_t i = y * cols + x;
        if (y < r || y >= rows - r || x < r || x >= cols - r) {
          next[i] = t[i];
          continue;
        }
        int v = 3 * t[i];
        for (std::size_t k = 1; k <= r; ++k) v += t[i - k * cols] + 2 * t[i + k * cols] + t[i - k] + t[i + k];
        next[i] = v % 1009;
      }
    t.swap(next);
  }
  return t;
}

// One runtime per mode for the binary, the poison check on (discrete: the last device driven like
// a GPU, every slice and halo buffer guarded).
Runtime& checked(bool discrete) {
  static std::map<bool, std::unique_ptr<Runtime>> made;
  auto& r = made[discrete];
  if (!r)
    r = std::make_unique<Runtime>(RuntimeOptions{
        .discrete = discrete ? std::to_string(device_count() - 1) : std::string(), .poison_check = true});
  return *r;
}

std::vector<Config> plans() {
  const std::size_t n = device_count();
  std::vector<Config> out;
  Config even;
  even.shares.assign(n, 1.0 / static_cast<double>(n));
  out.push_back(even);
  Config lopsided = even;  // the first device most, the rest shares what is left
  for (std::size_t d = 0; d < n; ++d) lopsided.shares[d] = n == 1 ? 1.0 : d == 0 ? 0.7 : 0.3 / double(n - 1);
  lopsided.overlap = 3;
  out.push_back(lopsided);
  for (std::size_t d = 0; d < n; ++d) out.push_back(Config::single(d, n));
  // The CPUs cut into sub-devices, each a partition of its own.
  for (const auto& f : runtime(false).devices().front().fission_configs)
    if (!f.is_none()) {
      Config fissioned = even;
      fissioned.fission = f.name;
      out.push_back(fissioned);
    }
  return out;
}

std::vector<int> start_grid(std::size_t size) {
  std::vector<int> g(size);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<int>((i * 37) % 101) - 50;
  return g;
}

// loop(pipeline(sweep(halo(t, r, r) -> next), copy(next -> t))) over a rows x cols grid, `steps`
// times, through `rt` with plan `c`: "" where the grid equals the one-device reference, else the
// first difference.
std::string run_sweep(Runtime& rt, const Config& c, std::size_t rows, std::size_t cols, std::size_t r,
                      std::size_t steps) {
  auto grid = start_grid(rows * cols);
  const auto want = sweep_reference(grid, rows, cols, r, steps);
  auto t = sinew::vector<cl_int>().unit(cols).name("t");
  auto next = sinew::vector<cl_int>().unit(cols).name("next");
  const auto halo_width = static_cast<std::ptrdiff_t>(r);
  auto step = kernel_source(kGlobalKernels, "sweep", "global.cl")
                  .args(halo(t, halo_width, halo_width), out(next), scalar(cl_uint(rows)), scalar(cl_uint(cols)),
                        scalar(cl_uint(r)))
                  .dims(2)
                  .global_indices();
  rt.run(loop(pipeline(step, copy(next, t))).times(steps), {{t, grid}}, RunOptions{.config = c}).get();
  return compare_int(grid, want);
}

// The sweep in either style through `rt`, trained there (RunOptions::train): the grid after
// `steps` steps, and the plan training chose.
std::pair<std::vector<int>, Config> trained_sweep(Runtime& rt, bool global, std::size_t rows, std::size_t cols,
                                                  std::size_t r, std::size_t steps) {
  auto grid = start_grid(rows * cols);
  auto t = sinew::vector<cl_int>().unit(cols).name("t");
  auto next = sinew::vector<cl_int>().unit(cols).name("next");
  const auto halo_width = static_cast<std::ptrdiff_t>(r);
  auto step = global ? kernel_source(kGlobalKernels, "sweep", "global.cl")
                           .args(halo(t, halo_width, halo_width), out(next), scalar(cl_uint(rows)),
                                 scalar(cl_uint(cols)), scalar(cl_uint(r)))
                           .dims(2)
                           .global_indices()
                     : kernel_source(kGlobalKernels, "sweep_slices", "global.cl")
                           .args(halo(t, halo_width, halo_width), out(next), scalar(cl_uint(rows)),
                                 scalar(cl_uint(cols)), scalar(cl_uint(r)), offset(next))
                           .dims(2);
  const Report rep =
      rt.run(loop(pipeline(step, copy(next, t))).times(steps), {{t, grid}}, RunOptions{.train = true}).get();
  EXPECT_GT(rep.training_executions, 0u) << rep.str();
  return {grid, rep.config};
}

}  // namespace

class GlobalIndices : public ::testing::TestWithParam<bool> {};

// loop(pipeline(sweep(halo(t, r, r) -> next), copy(next -> t))): halos of 1 and 2 rows, the
// kernel's boundary test on its global row and column, the one-device result on every plan.
TEST_P(GlobalIndices, SweepWithBoundaryTestsGivesTheOneDeviceResult) {
  Runtime& rt = checked(GetParam());
  const std::size_t rows = 29, cols = 12, steps = 4;
  for (std::size_t r : {1u, 2u})
    for (const Config& c : plans()) {
      EXPECT_EQ(run_sweep(rt, c, rows, cols, r, steps), "") << "halo " << r << ", plan " << c.str();
    }
}

// On a discrete device without the poison check, a partition at the range's start runs the
// user's own kernel (its halo buffer presented from the range's start where a unit's bytes are a
// multiple of the device's base address alignment, here 64 ints), the others the launched one:
// the discrete device alone at overlap 1 and 3 (one queue launching both kinds), halos of 1 and 2
// rows, and an even split; the one-device result every time.
TEST(GlobalIndicesPlainLaunch, PartitionAtTheStartRunsTheUsersKernel) {
  const std::size_t last = device_count() - 1;
  Runtime rt(RuntimeOptions{.discrete = std::to_string(last)});
  const std::size_t rows = 40, cols = 64, steps = 3;
  Config alone = Config::single(last, device_count()), alone3 = alone, even;
  alone3.overlap = 3;
  even.shares.assign(device_count(), 1.0 / static_cast<double>(device_count()));
  for (std::size_t r : {1u, 2u})
    for (const Config& c : {alone, alone3, even}) {
      EXPECT_EQ(run_sweep(rt, c, rows, cols, r, steps), "") << "halo " << r << ", plan " << c.str();
    }
}

// Training a global-index tree weighs its overlap levels by the partitions that run the kernel as
// written (docs/decisions/170): whatever plan it keeps, with the poison check on, the result is
// the one-device result and that of the same tree written for slices, trained the same way: a
// stencil that exchanges halos (a discrete device's share on one queue) and a pointwise update
// in a loop with a predicate (one partition per overlap queue).
TEST_P(GlobalIndices, TrainedPlansGiveTheResultOfTheSlicesStyle) {
  Runtime rt(RuntimeOptions{.discrete = GetParam() ? std::to_string(device_count() - 1) : std::string(),
                            .poison_check = true,
                            .kb_path = ":memory:",
                            .training = TrainingSettings{.max_executions = 16},
                            .quiet = true});
  const std::size_t rows = 48, cols = 64, steps = 3;
  for (std::size_t r : {1u, 2u}) {
    const auto want = sweep_reference(start_grid(rows * cols), rows, cols, r, steps);
    const auto [global, global_plan] = trained_sweep(rt, true, rows, cols, r, steps);
    const auto [slices, slices_plan] = trained_sweep(rt, false, rows, cols, r, steps);
    EXPECT_EQ(compare_int(global, want), "") << "halo " << r << ", global indices, trained " << global_plan.str();
    EXPECT_EQ(compare_int(slices, want), "") << "halo " << r << ", slices, trained " << slices_plan.str();
    EXPECT_EQ(global, slices) << "halo " << r;
  }
  // A loop with a predicate over a pointwise update: a discrete device's share is one partition
  // per overlap queue, the ones off the range's start running the launched kernel.
  const std::size_t n = 4099, iterations = 4;
  auto bumped = [&](bool global) {
    auto values = start_grid(n);
    auto x = sinew::vector<cl_int>().name("x");
    auto leaf = global ? kernel_source(kGlobalKernels, "bump", "global.cl").args(inout(x), size(x)).global_indices()
                       : kernel_source(kGlobalKernels, "bump_slices", "global.cl").args(inout(x), size(x), offset(x));
    auto tree = loop(leaf).until([&](const LoopState& s) { return s.iteration >= iterations; });
    const Report rep = rt.run(tree, {{x, values}}, RunOptions{.train = true}).get();
    EXPECT_GT(rep.training_executions, 0u) << rep.str();
    return std::pair{values, rep.config};
  };
  auto want = start_grid(n);
  for (std::size_t k = 0; k < iterations; ++k)
    for (std::size_t i = 1; i + 1 < n; ++i) want[i] = (3 * want[i] + static_cast<int>(i)) % 1009;
  const auto [global, global_plan] = bumped(true);
  const auto [slices, slices_plan] = bumped(false);
  EXPECT_EQ(compare_int(global, want), "") << "bump, global indices, trained " << global_plan.str();
  EXPECT_EQ(compare_int(slices, want), "") << "bump, slices, trained " << slices_plan.str();
}

// A stencil over a vector the tree only reads (it streams): the static split, streamed chunks on a
// discrete device (overlap 3) and the dynamic schedule, in one and two dimensions; a 1D length no
// multiple of the work-group multiple is launched in two parts, both at global positions.
TEST_P(GlobalIndices, StreamedAndDynamicSchedules) {
  Runtime& rt = checked(GetParam());
  const std::size_t rows = 64, cols = 16, n = 1031;
  std::vector<Config> configs = plans();
  Config dynamic = configs.front();
  dynamic.schedule = "dynamic";
  configs.push_back(dynamic);
  for (const Config& c : configs) {
    const auto grid = start_grid(rows * cols);
    std::vector<int> next(grid.size(), 0);
    auto t = sinew::vector<cl_int>().unit(cols).name("t");
    auto nx = sinew::vector<cl_int>().unit(cols).name("next");
    auto step = kernel_source(kGlobalKernels, "sweep", "global.cl")
                    .args(halo(t, 1, 1), out(nx), scalar(cl_uint(rows)), scalar(cl_uint(cols)), scalar(cl_uint(1)))
                    .dims(2)
                    .global_indices();
    rt.run(step, {{t, grid}, {nx, next}}, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(next, sweep_reference(grid, rows, cols, 1, 1)), "") << "2D, plan " << c.str();

    const auto line = start_grid(n);
    std::vector<int> got(n, 0), want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = i == 0 || i == n - 1 ? line[i] : line[i - 1] - 2 * line[i] + 3 * line[i + 1];
    auto a = sinew::vector<cl_int>().name("a");
    auto b = sinew::vector<cl_int>().name("b");
    auto k = kernel_source(kGlobalKernels, "line", "global.cl")
                 .args(halo(a, 1, 1), out(b), scalar(cl_uint(n)))
                 .global_indices();
    rt.run(k, {{a, line}, {b, got}}, RunOptions{.config = c}).get();
    EXPECT_EQ(compare_int(got, want), "") << "1D, plan " << c.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GlobalIndices, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "discrete" : "zero_copy"; });

// A kernel whose definition is no text of its own, or whose pointers cannot be moved, is refused
// before any device work, naming the node, the argument and the fix.
TEST(GlobalIndicesErrors, RefusedBeforeDeviceWork) {
  Runtime& rt = runtime(false);
  std::vector<int> v(64, 7);
  const auto before = v;
  auto x = sinew::vector<cl_int>().name("x");
  auto expect_refused = [&](Kernel k, const std::string& argument, const std::string& words) {
    try {
      rt.run(k.global_indices(), {{x, v}}).get();
      ADD_FAILURE() << "ran: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_FALSE(e.context().fix.empty());
      EXPECT_NE(e.context().node.find("kernel"), std::string::npos) << e.context().node;
    }
    EXPECT_EQ(v, before) << "no device work before the error";
  };
  expect_refused(kernel_source(kGlobalKernels, "made", "global.cl").args(inout(x)), "global_indices", "macro");
  expect_refused(kernel_source(kGlobalKernels, "untyped", "global.cl").args(inout(x), size(x)),
                 "argument 0 'v' (inout 'x')", "void*");
  expect_refused(kernel_source(kGlobalKernels, "fixed", "global.cl").args(inout(x)), "argument 0 'v' (inout 'x')",
                 "pointer itself is const");
}

// The origins change the kernel's source and launch, not its meaning elsewhere: the tree's
// signature tells the two styles apart, its dump says which.
TEST(GlobalIndicesErrors, SignatureAndDumpTellTheStyles) {
  auto a = sinew::vector<cl_int>().name("a");
  auto b = sinew::vector<cl_int>().name("b");
  auto slices = kernel_source(kGlobalKernels, "line", "global.cl").args(halo(a, 1, 1), out(b), scalar(cl_uint(8)));
  auto global = kernel_source(kGlobalKernels, "line", "global.cl").args(halo(a, 1, 1), out(b), scalar(cl_uint(8)));
  global.global_indices();
  EXPECT_NE(slices.signature(), global.signature());
  EXPECT_NE(global.dump().find("global_indices"), std::string::npos) << global.dump();
  EXPECT_EQ(slices.dump().find("global_indices"), std::string::npos) << slices.dump();
}

// A global-index leaf's buffers are those of any leaf: under a memory cap they cannot fit (a loop
// cannot be dragged through in chunks), the plan that puts the tree there is refused before any
// device work, naming the vector and the cap.
TEST(GlobalIndicesErrors, MemoryCapRefusedBeforeDeviceWork) {
  const std::size_t rows = 256, cols = 64, last = device_count() - 1;
  Runtime rt(RuntimeOptions{.discrete = std::to_string(last), .memory_cap = std::to_string(last) + "=16KB"});
  auto grid = start_grid(rows * cols);
  const auto before = grid;
  auto t = sinew::vector<cl_int>().unit(cols).name("t");
  auto next = sinew::vector<cl_int>().unit(cols).name("next");
  auto step = kernel_source(kGlobalKernels, "sweep", "global.cl")
                  .args(halo(t, 1, 1), out(next), scalar(cl_uint(rows)), scalar(cl_uint(cols)), scalar(cl_uint(1)))
                  .dims(2)
                  .global_indices();
  try {
    rt.run(loop(pipeline(step, copy(next, t))).times(3), {{t, grid}}, RunOptions{.device = last}).get();
    FAIL() << "a tree four times the device's memory ran on it";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << what;
    EXPECT_NE(what.find("vector '"), std::string::npos) << what;
    EXPECT_NE(what.find("memory cap of 16.0 KB"), std::string::npos) << what;
    EXPECT_NE(e.context().fix.find("SINEW_MEMORY_CAP"), std::string::npos) << e.context().fix;
  }
  EXPECT_EQ(grid, before) << "no device work before the error";
}
