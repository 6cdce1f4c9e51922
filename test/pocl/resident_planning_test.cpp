// Planning for resident arrays (docs/guide/resident-data.md, "What the planner and the balancer
// see"): a tree bound to resident arrays is trained on resident data — its training's timed runs
// move nothing between the host and the devices where each plan's runs move nothing — and its
// plan is kept apart from the same tree's host-bound plan. Run with the last PoCL device driven
// as a discrete one, on every device count the suite is registered for.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace sinew;

namespace {

const char* kKernels = R"CL(
__kernel void axpy(__global const float* x, __global float* y, float a) {
  size_t i = get_global_id(0); y[i] += a * x[i];
}
__kernel void burn(__global const float* x, __global float* y) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < 300; ++k) v = v * 0.999f + 0.001f;
  y[i] = v;
}
__kernel void halve(__global float* x, __global float* halves) {
  size_t i = get_global_id(0); x[i] *= 0.5f; halves[i] = x[i];
}
)CL";

constexpr std::size_t kN = 1 << 14;

RuntimeOptions discrete_last() {
  RuntimeOptions o;
  o.discrete = std::to_string(Runtime().devices().size() - 1);
  o.kb_path = ":memory:";
  o.quiet = true;
  o.training.max_executions = 12;
  return o;
}

std::vector<float> start_values(std::size_t seed) {
  std::vector<float> v(kN);
  for (std::size_t i = 0; i < kN; ++i) v[i] = static_cast<float>((i * 7 + seed * 3) % 11);
  return v;
}

struct Saxpy {
  Vector<cl_float> x = sinew::vector<cl_float>().name("x"), y = sinew::vector<cl_float>().name("y");
  Node tree = sinew::kernel_source(kKernels, "axpy").args(in(x), inout(y), scalar(2.0f));
};

// y after one run of the tree on the start values.
std::vector<float> one_run() {
  std::vector<float> y = start_values(2);
  const std::vector<float> x = start_values(1);
  for (std::size_t i = 0; i < kN; ++i) y[i] += 2.0f * x[i];
  return y;
}

}  // namespace

// An iterative tree (a loop until its residual falls below a target: a static plan's partitions
// meet each iteration, so no schedule that cuts chunks as it runs is measured).
TEST(ResidentPlanning, TrainingTimesRunsOnResidentData) {
  Runtime rt(discrete_last());
  auto v = sinew::vector<cl_float>().name("x");
  auto halves = sinew::vector<cl_float>().name("halves");  // a channel: never bound
  auto residual = sinew::result<cl_float>("residual");
  std::vector<float> start(kN);
  double sum = 0;
  for (std::size_t i = 0; i < kN; ++i) sum += start[i] = static_cast<float>((i * 37) % 128);
  const auto target = static_cast<float>(sum / 1000);
  auto tree = sinew::loop(sinew::map_reduce(sinew::kernel_source(kKernels, "halve").args(inout(v), out(halves)),
                                            sinew::reduce::sum(halves, residual)))
                  .times(100)
                  .until<cl_float>(residual, [target](cl_float r) { return r < target; });
  auto x = rt.array<cl_float>(start);
  const Report r = rt.run(tree, {{v, x}}).get();
  EXPECT_EQ(r.provenance, Provenance::trained);
  ASSERT_GT(r.training_executions, 0u);
  // Each plan's first run placed the array, untimed: its timed runs found it where its
  // decomposition wants it, restored to the caller's contents on the devices.
  EXPECT_EQ(r.training_copies.to_device.bytes, 0u) << r.str();
  EXPECT_EQ(r.training_copies.to_host.bytes, 0u) << r.str();
  // Training ran on a scratch copy: the array holds one run's result (start / 2^10 < target).
  EXPECT_EQ(r.iterations, 10u);
  const auto got = x.host();
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], start[i] / 1024.0f) << "at " << i;
  EXPECT_EQ(x.runs_completed(), 1u);
}

TEST(ResidentPlanning, HostBoundTrainingMovesTheData) {
  Runtime rt(discrete_last());
  Saxpy s;
  std::vector<float> x = start_values(1), y = start_values(2);
  const Report r = rt.run(s.tree, {{s.x, x}, {s.y, y}}).get();
  ASSERT_GT(r.training_executions, 0u);
  // The discrete device alone is among the plans measured: its runs upload and download.
  EXPECT_GT(r.training_copies.to_device.bytes, 0u) << r.str();
  EXPECT_EQ(y, one_run());
}

TEST(ResidentPlanning, ResidentAndHostBoundPlansAreKeptApart) {
  Runtime rt(discrete_last());
  Saxpy s;
  std::vector<float> hx = start_values(1), hy = start_values(2);
  const Report host = rt.run(s.tree, {{s.x, hx}, {s.y, hy}}).get();
  EXPECT_EQ(host.provenance, Provenance::trained);

  auto x = rt.array<cl_float>(start_values(1));
  auto y = rt.array<cl_float>(start_values(2));
  const Report resident = rt.run(s.tree, {{s.x, x}, {s.y, y}}).get();
  EXPECT_EQ(resident.provenance, Provenance::trained) << "a host-bound plan served resident data";
  EXPECT_NE(resident.kb_entry, host.kb_entry);

  const Report resident_again = rt.run(s.tree, {{s.x, x}, {s.y, y}}, {.balance = false}).get();
  EXPECT_EQ(resident_again.training_executions, 0u);
  EXPECT_EQ(resident_again.kb_entry, resident.kb_entry);
  // After the first, runs of a static resident plan move nothing between the host and the
  // devices (a dynamic schedule's use the host copy: training judged it with those moves).
  if (resident_again.config.schedule == "static")
    EXPECT_EQ(resident_again.copies.host_bytes(), 0u) << resident_again.str();

  std::vector<float> hx2 = start_values(1), hy2 = start_values(2);
  const Report host_again = rt.run(s.tree, {{s.x, hx2}, {s.y, hy2}}, {.balance = false}).get();
  EXPECT_EQ(host_again.training_executions, 0u);
  EXPECT_EQ(host_again.kb_entry, host.kb_entry);
  EXPECT_EQ(hy2, one_run());
}

// docs/decisions/178: a discrete device's share of host data is streamed in chunks (their transfers
// overlap the kernels), but a resident array's slices stay on the device between runs, so its
// share is one partition per queue: every later run would pay each chunk's launch.
TEST(ResidentPlanning, ResidentDataIsNotCutIntoStreamingChunks) {
  RuntimeOptions o = discrete_last();
  o.chunk_mb = 0.004;  // host data: a chunk of about 1000 floats, some 16 chunks a vector
  Runtime rt(o);
  const std::size_t gpu = rt.devices().size() - 1;
  Config c = Config::single(gpu, rt.devices().size());
  c.overlap = 2;
  Saxpy s;
  std::vector<float> hx = start_values(1), hy = start_values(2);
  const Report host = rt.execute(s.tree, {{s.x, hx}, {s.y, hy}}, {.config = c});
  EXPECT_GT(host.partitions.size(), 2u) << host.decomposition;
  EXPECT_EQ(hy, one_run());

  auto x = rt.array<cl_float>(start_values(1));
  auto y = rt.array<cl_float>(start_values(2));
  for (int run = 0; run < 2; ++run) {
    const Report resident = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, {.config = c});
    EXPECT_EQ(resident.partitions.size(), 2u) << "one partition per queue\n" << resident.decomposition;
    if (run == 1) EXPECT_EQ(resident.copies.host_bytes(), 0u) << resident.str();
  }
  std::vector<float> expected = one_run();
  for (std::size_t i = 0; i < kN; ++i) expected[i] += 2.0f * start_values(1)[i];
  const auto got = y.host();
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), expected);
}

namespace {
// Units a report's partitions ran on `device`.
std::size_t units_on(const Report& r, std::size_t device) {
  std::size_t units = 0;
  for (const auto& p : r.partitions)
    if (p.device == device) units += p.units;
  return units;
}
}  // namespace

// A balancer's move over resident data: the run after it moves exactly the units the move gave
// the discrete device (x's; y is only written), or nothing where it took units away, so that
// run's times, which the balancer judges the move by, include the move's transfers; the runs
// after it move nothing. Compute-bound, so
// a skewed plan is moved (as test/pocl/balancer_runtime_test.cpp's).
TEST(ResidentPlanning, ABalancerMoveMovesOnlyWhatItChanged) {
  RuntimeOptions o = discrete_last();
  Runtime rt(o);
  if (rt.devices().size() < 2) GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\")";
  constexpr std::size_t n = 1 << 19;
  auto vx = sinew::vector<cl_float>().name("x"), vy = sinew::vector<cl_float>().name("y");
  Node tree = sinew::kernel_source(kKernels, "burn").args(in(vx), out(vy)).label("burn");
  std::vector<float> start(n), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = start[i] = static_cast<float>(i % 1000) / 1000.0f;
    for (int k = 0; k < 300; ++k) v = v * 0.999f + 0.001f;
    want[i] = v;
  }
  auto x = rt.array<cl_float>(start);
  auto y = rt.array<cl_float>(n);
  const std::size_t discrete = rt.devices().size() - 1;
  Config skewed;
  skewed.shares.assign(rt.devices().size(), 0.0);
  skewed.shares[0] = 0.9;
  skewed.shares[discrete] = 0.1;
  std::optional<Report> before_move;
  // As the balancer's own tests: the first move waits for estimates tight enough to see past the
  // noise, which a busy machine makes wider.
  for (int i = 0; i < 200; ++i) {
    const Report r = rt.run(tree, {{vx, x}, {vy, y}}, {.config = skewed, .balance = true}).get();
    if (before_move) {
      // The first run of the moved plan.
      // Either way: what the discrete device gained of x comes from the host, what it kept from
      // its own piece (a device copy); what it gave up the host copy holds already.
      const std::size_t after = units_on(r, discrete), earlier = units_on(*before_move, discrete);
      EXPECT_NE(after, earlier) << r.str();
      const std::size_t gained = after - std::min(after, earlier);
      EXPECT_EQ(r.copies.to_device.bytes, gained * sizeof(cl_float)) << r.str();
      EXPECT_EQ(r.copies.to_host.bytes, 0u) << r.str();
      const Report next = rt.run(tree, {{vx, x}, {vy, y}}, {.config = skewed, .balance = true}).get();
      if (next.config == r.config) EXPECT_EQ(next.copies.host_bytes(), 0u) << next.str();
      break;
    }
    if (r.balance) before_move = r;
  }
  ASSERT_TRUE(before_move) << "no rebalance in 200 runs of a 90/10 plan";
  const auto got = y.host();
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], want[i], 1e-4f) << "at " << i;
}
