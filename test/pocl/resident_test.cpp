// Resident arrays (Runtime::array): device copies kept between runs. Across runs of one tree
// (bytes moved counted: none for an unchanged decomposition), of two trees whose vectors have
// different units, across a changed plan, with host writes between runs, after a failed run, and
// the misuses refused. Every result is compared with a C++ reference on every PoCL device this
// process sees (1, 2 or 3: the suite is registered once per count), for several splits,
// zero-copy and with the last device discrete. Values are small integers: float sums are exact.
#include <sinew/sinew.hpp>

#include "pocl/resident_setups.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

using namespace sinew;

namespace {

const char* kKernels = R"CL(
__kernel void axpy(__global const float* x, __global float* y, float a) {
  size_t i = get_global_id(0); y[i] += a * x[i];
}
__kernel void twice(__global float* y) {
  size_t i = get_global_id(0); y[i] = 2.0f * y[i] - 1.0f;
}
__kernel void fill(__global float* y, float v) {
  size_t i = get_global_id(0); y[i] = v;
}
)CL";

constexpr std::size_t kN = 1 << 12;

using Setup = sinew::testing::ResidentSetup;
using sinew::testing::checked;
std::vector<Setup> setups() { return sinew::testing::resident_setups(); }

// Shares over `devices`: each alone, an even split, an uneven one.
std::vector<std::vector<double>> share_sets(std::size_t devices) {
  std::vector<std::vector<double>> out;
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<double> s(devices, 0.0);
    s[d] = 1.0;
    out.push_back(s);
  }
  if (devices > 1) {
    out.emplace_back(devices, 1.0 / static_cast<double>(devices));
    std::vector<double> odd(devices);
    double sum = 0;
    for (std::size_t d = 0; d < devices; ++d) sum += odd[d] = 0.137 + 0.31 * static_cast<double>(d);
    for (double& x : odd) x /= sum;
    out.push_back(odd);
  }
  return out;
}

RunOptions plan(const std::vector<double>& shares) { return sinew::testing::shares_plan(shares); }

std::vector<float> start_values(std::size_t seed) { return sinew::testing::start_values(kN, seed); }

struct Saxpy {
  Vector<cl_float> x = sinew::vector<cl_float>().name("x"), y = sinew::vector<cl_float>().name("y");
  Node tree = sinew::kernel_source(kKernels, "axpy").args(in(x), inout(y), scalar(2.0f));
};

using sinew::testing::discrete_only;

// `f` throws a sinew::Error of `code` whose message holds `text` and that proposes a fix.
template <class F>
void expect_error(F&& f, errc code, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error for: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_FALSE(e.context().fix.empty()) << e.what();
  }
}

}  // namespace

TEST(Resident, UnchangedDecompositionMovesNothing) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      for (const bool keep : {true, false}) {
        const std::string what = setup.name + " " + plan(shares).config->str() + (keep ? " keep" : " no keep");
        Saxpy s;
        auto x = rt.array<cl_float>(start_values(1), {.keep_last_good = keep});
        auto y = rt.array<cl_float>(start_values(2), {.keep_last_good = keep});
        std::vector<float> ref = start_values(2);
        const std::vector<float> xs = start_values(1);
        for (int run = 0; run < 4; ++run) {
          const Report r = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
          for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
          if (run == 0 || checked(rt)) continue;
          EXPECT_EQ(r.copies.host_bytes(), 0u) << what << " run " << run;
          // A slice the run reads and writes, held nowhere else, is copied on its device first
          // where the last good contents are kept.
          if (!keep) EXPECT_EQ(r.copies.device.bytes, 0u) << what << " run " << run;
        }
        const auto got = y.host();
        for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
        EXPECT_EQ(y.runs_completed(), 4u) << what;
      }
    }
  }
}

TEST(Resident, TwoTreesWithDifferentUnits) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Saxpy s;
      auto rows = sinew::vector<cl_float>().name("rows").unit(64);
      Node doubling = sinew::kernel_source(kKernels, "twice").args(inout(rows));
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      const std::vector<float> xs = start_values(1);
      for (int step = 0; step < 4; ++step) {
        const Report a = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
        for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
        const Report b = rt.execute(doubling, {{rows, y}}, plan(shares));
        for (std::size_t i = 0; i < kN; ++i) ref[i] = 2.0f * ref[i] - 1.0f;
        // One partition holds everything in both trees: nothing moves after the first step.
        if (step > 0 && a.partitions.size() == 1 && !checked(rt)) {
          EXPECT_EQ(a.copies.host_bytes(), 0u) << what;
          EXPECT_EQ(b.copies.host_bytes(), 0u) << what;
        }
      }
      const auto got = y.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
    }
  }
}

// Two trees whose plans put different partitions on one discrete device (one queue against two
// overlapping ones): what a partition lacks comes from the other tree's pieces on the device, never
// through the host.
TEST(Resident, DifferentPartitionsOnOneDeviceMoveOnTheDevice) {
  const std::size_t count = Runtime().devices().size();
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1)});
  std::vector<double> last(count, 0.0);
  last.back() = 1.0;
  RunOptions one = plan(last), two = plan(last);
  two.config->overlap = 2;
  Saxpy s;
  auto rows = sinew::vector<cl_float>().name("rows").unit(64);
  Node doubling = sinew::kernel_source(kKernels, "twice").args(inout(rows));
  auto x = rt.array<cl_float>(start_values(1));
  auto y = rt.array<cl_float>(start_values(2));
  std::vector<float> ref = start_values(2);
  const std::vector<float> xs = start_values(1);
  for (int step = 0; step < 3; ++step) {
    const Report a = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, one);
    for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
    const Report b = rt.execute(doubling, {{rows, y}}, two);
    for (std::size_t i = 0; i < kN; ++i) ref[i] = 2.0f * ref[i] - 1.0f;
    ASSERT_EQ(b.partitions.size(), 2u);
    if (step == 0 || checked(rt)) continue;
    EXPECT_EQ(a.copies.host_bytes(), 0u) << "step " << step;
    EXPECT_EQ(b.copies.host_bytes(), 0u) << "step " << step;
    EXPECT_EQ(a.copies.device.bytes, kN * sizeof(float)) << "y gathered from two pieces, step " << step;
  }
  const auto got = y.host();
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << i;
}

// A run of an unchanged plan on one discrete device, at one queue and at several: after the
// first run it moves nothing between the host and the device and launches its kernel once per
// partition (no extra pass); ArrayOptions::keep_last_good copies on the device exactly what its
// rule names, the slices read and written that only the device holds (y, not x: one array's
// bytes per run), and nothing where it is off.
TEST(Resident, RunsOnOneDeviceMoveWhatTheRulePromises) {
  const std::size_t count = Runtime().devices().size();
  Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1)});
  std::vector<double> last(count, 0.0);
  last.back() = 1.0;
  for (const unsigned overlap : {1u, 2u, 4u}) {
    for (const bool keep : {true, false}) {
      const std::string what = "overlap " + std::to_string(overlap) + (keep ? " keep" : " no keep");
      RunOptions o = plan(last);
      o.config->overlap = overlap;
      o.profile = true;
      Saxpy s;
      auto x = rt.array<cl_float>(start_values(1), {.keep_last_good = keep});
      auto y = rt.array<cl_float>(start_values(2), {.keep_last_good = keep});
      std::vector<float> ref = start_values(2);
      const std::vector<float> xs = start_values(1);
      for (int run = 0; run < 4; ++run) {
        const Report r = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, o);
        for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
        ASSERT_GE(r.partitions.size(), overlap) << what;
        std::size_t launches = 0;
        for (const KernelTiming& k : r.kernels) launches += k.launches;
        EXPECT_EQ(launches, r.partitions.size()) << what << " run " << run;
        if (run == 0) continue;
        EXPECT_EQ(r.copies.host_bytes(), 0u) << what << " run " << run;
        EXPECT_EQ(r.copies.device.bytes, keep ? kN * sizeof(float) : 0u) << what << " run " << run;
        EXPECT_EQ(r.copies.device.count, keep ? r.partitions.size() : 0u) << what << " run " << run;
      }
      const auto got = y.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
    }
  }
}

// A run whose slices are all resident on one discrete device, at several queues, has nothing to
// stage: the calling thread enqueues every queue's partitions at once, as a hand-written loop does,
// instead of a thread per queue handing over on every run (docs/decisions/144). The run's Chrome
// trace shows it: every queue's "enqueue" begins at one time.
TEST(Resident, ResidentRunOnSeveralQueuesIsFedByOneThread) {
  const std::size_t count = Runtime().devices().size();
  // The first run writes `first`, the second `second` ("-1" appended where the file exists).
  const std::string first = ::testing::TempDir() + "resident_one_feeder.json",
                    second = ::testing::TempDir() + "resident_one_feeder-1.json";
  std::remove(first.c_str()), std::remove(second.c_str());
  std::vector<double> last(count, 0.0);
  last.back() = 1.0;
  RunOptions o = plan(last);
  o.config->overlap = 3;
  Saxpy s;
  {
    Runtime rt(RuntimeOptions{.discrete = std::to_string(count - 1), .trace = first});
    auto x = rt.array<cl_float>(start_values(1));
    auto y = rt.array<cl_float>(start_values(2));
    rt.execute(s.tree, {{s.x, x}, {s.y, y}}, o);  // the arrays' first run: the pieces made
    rt.execute(s.tree, {{s.x, x}, {s.y, y}}, o);
  }
  std::ifstream in(second);
  ASSERT_TRUE(in) << second;
  std::vector<double> starts;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"name\":\"enqueue\"") == std::string::npos) continue;
    const auto at = line.find("\"ts\":");
    ASSERT_NE(at, std::string::npos) << line;
    starts.push_back(std::stod(line.substr(at + 5)));
  }
  ASSERT_EQ(starts.size(), 3u);
  for (double t : starts) EXPECT_EQ(t, starts.front());
  std::remove(first.c_str()), std::remove(second.c_str());
}

TEST(Resident, ChangedPlanMovesWhatChanged) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    const auto sets = share_sets(rt.devices().size());
    Saxpy s;
    auto x = rt.array<cl_float>(start_values(1));
    auto y = rt.array<cl_float>(start_values(2));
    std::vector<float> ref = start_values(2);
    const std::vector<float> xs = start_values(1);
    for (std::size_t k = 0; k < 2 * sets.size(); ++k) {
      const auto& shares = sets[k % sets.size()];
      rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
      for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
      // The same plan again moves nothing between the host and the devices.
      const Report again = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
      for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
      if (!checked(rt)) EXPECT_EQ(again.copies.host_bytes(), 0u) << setup.name << " " << again.config.str();
    }
    const auto got = y.host();
    for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << setup.name << " at " << i;
  }
}

TEST(Resident, HostWritesBetweenRuns) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Saxpy s;
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      const std::vector<float> xs = start_values(1);
      for (int step = 0; step < 3; ++step) {
        rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
        for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
        const std::size_t first = 100 + 37 * static_cast<std::size_t>(step), count = 300;
        auto part = y.write(first, count);
        for (std::size_t i = 0; i < count; ++i) part[i] = ref[first + i] = static_cast<float>(step + i % 5);
        const Report r = rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
        for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
        // On discrete devices only what the host wrote goes back to them.
        if (discrete_only(rt, shares) && !checked(rt)) EXPECT_EQ(r.copies.to_device.bytes, count * sizeof(float)) << what;
      }
      const auto got = y.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
    }
  }
}

TEST(Resident, FailedRunKeepsLastGoodContents) {
  for (const auto& setup : setups()) {
    Runtime rt(setup.options);
    for (const auto& shares : share_sets(rt.devices().size())) {
      const std::string what = setup.name + " " + plan(shares).config->str();
      Saxpy s;
      // The loop's body writes y, then its predicate throws: the run fails after its kernels ran.
      Node failing = sinew::loop(s.tree).until([](const LoopState&) -> bool { throw std::runtime_error("stop"); });
      auto x = rt.array<cl_float>(start_values(1));
      auto y = rt.array<cl_float>(start_values(2));
      std::vector<float> ref = start_values(2);
      const std::vector<float> xs = start_values(1);
      rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
      for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
      EXPECT_THROW(rt.execute(failing, {{s.x, x}, {s.y, y}}, plan(shares)), std::exception) << what;
      // (The poison check's first run, on host copies, fails before the array is used.)
      if (!checked(rt)) EXPECT_NE(y.last_failure().find("after 1 runs completed"), std::string::npos) << y.last_failure();
      EXPECT_EQ(y.runs_completed(), 1u) << what;
      auto got = y.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;
      // And it runs on from there.
      rt.execute(s.tree, {{s.x, x}, {s.y, y}}, plan(shares));
      for (std::size_t i = 0; i < kN; ++i) ref[i] += 2.0f * xs[i];
      got = y.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ref[i]) << what << " at " << i;

      // Without the last good copy, the written ranges are lost until the host writes them; a run
      // refused before its kernels (one that does not build) loses nothing.
      if (checked(rt)) continue;
      auto kept = rt.array<cl_float>(start_values(2), {.keep_last_good = false});
      rt.execute(s.tree, {{s.x, x}, {s.y, kept}}, plan(shares));
      Node broken = sinew::kernel_source("__kernel void axpy(__global float* y) { y[0] = undefined; }", "axpy")
                        .args(inout(s.y));
      EXPECT_THROW(rt.execute(broken, {{s.y, kept}}, plan(shares)), Error) << what;
      const auto intact = kept.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(intact[i], start_values(2)[i] + 2.0f * xs[i]) << what << " at " << i;
      auto z = rt.array<cl_float>(start_values(2), {.keep_last_good = false});
      rt.execute(s.tree, {{s.x, x}, {s.y, z}}, plan(shares));
      EXPECT_THROW(rt.execute(failing, {{s.x, x}, {s.y, z}}, plan(shares)), std::exception) << what;
      expect_error([&] { (void)z.host(); }, errc::invalid_argument, "lost by a failed run");
      expect_error([&] { rt.execute(s.tree, {{s.x, x}, {s.y, z}}, plan(shares)); }, errc::invalid_argument,
                   "lost by a failed run");
      auto all = z.write();
      for (std::size_t i = 0; i < kN; ++i) all[i] = 1.0f;
      rt.execute(s.tree, {{s.x, x}, {s.y, z}}, plan(shares));
      const auto back = z.host();
      for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(back[i], 1.0f + 2.0f * xs[i]) << what << " at " << i;
    }
  }
}

TEST(Resident, MisuseIsRefused) {
  Saxpy s;
  Runtime rt;
  auto x = rt.array<cl_float>(start_values(1));
  expect_error([&] { rt.execute(s.tree, {{s.x, x}, {s.y, x}}); }, errc::invalid_argument,
               "bound to two vectors");
  Array<cl_float> empty;
  expect_error([&] { rt.execute(s.tree, {{s.x, x}, {s.y, empty}}); }, errc::invalid_argument, "empty Array");
  Array<cl_float> orphan;
  {
    Runtime other;
    orphan = other.array<cl_float>(start_values(2));
    expect_error([&] { rt.execute(s.tree, {{s.x, x}, {s.y, orphan}}); }, errc::invalid_argument,
                 "made by another Runtime");
    auto other_x = other.array<cl_float>(start_values(1));
    other.execute(s.tree, {{s.x, other_x}, {s.y, orphan}}, {.device = 0});
  }
  // Its runtime is gone: the contents are home, and runs are refused.
  const auto home = orphan.host();
  const auto xs = start_values(1), ys = start_values(2);
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(home[i], ys[i] + 2.0f * xs[i]) << i;
  expect_error([&] { rt.execute(s.tree, {{s.x, x}, {s.y, orphan}}); }, errc::invalid_argument,
               "runtime was destroyed");
}

TEST(Resident, ConcurrentRunsAreOrdered) {
  Saxpy s;
  Runtime rt;
  auto x = rt.array<cl_float>(start_values(1));
  auto y = rt.array<cl_float>(start_values(2));
  std::vector<std::future<Report>> runs;
  for (int i = 0; i < 12; ++i) runs.push_back(rt.run(s.tree, {{s.x, x}, {s.y, y}}, {.device = 0}));
  // host() waits for the runs admitted before it.
  const auto got = y.host();
  const auto xs = start_values(1), ys = start_values(2);
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ys[i] + 24.0f * xs[i]) << i;
  for (auto& r : runs) r.get();
}

// Runs submitted over resident arrays wait for their turns without a thread each and start as the
// use before them ends (ThreadPool::run_next): every use, submitted, executed from another thread,
// a host write, a failed run, follows every use admitted before it, and every future is answered.
TEST(Resident, SubmittedRunsFollowEveryUseAdmittedBefore) {
  Saxpy s;
  Runtime rt;
  Node failing = sinew::loop(s.tree).until([](const LoopState&) -> bool { throw std::runtime_error("stop"); });
  auto x = rt.array<cl_float>(start_values(1));
  auto y = rt.array<cl_float>(start_values(2));
  auto other = rt.array<cl_float>(kN);  // runs of another thread over x and another array
  std::vector<std::future<Report>> runs;
  for (int i = 0; i < 40; ++i) runs.push_back(rt.run(s.tree, {{s.x, x}, {s.y, y}}, {.device = 0}));
  auto beside = std::async(std::launch::async, [&] {
    for (int i = 0; i < 20; ++i) rt.execute(s.tree, {{s.x, x}, {s.y, other}}, {.device = 0});
  });
  {
    auto all = x.write();  // after the 40 runs: they read the old x
    for (std::size_t i = 0; i < kN; ++i) all[i] = 1.0f;
  }
  std::future<Report> failed = rt.run(failing, {{s.x, x}, {s.y, y}}, {.device = 0});
  for (int i = 0; i < 40; ++i) runs.push_back(rt.run(s.tree, {{s.x, x}, {s.y, y}}, {.device = 0}));
  const auto got = y.host();
  const auto xs = start_values(1), ys = start_values(2);
  // 40 runs with the first x, the failed one's write undone (keep_last_good), 40 with x = 1.
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], ys[i] + 80.0f * xs[i] + 80.0f) << i;
  for (auto& r : runs) EXPECT_NO_THROW(r.get());
  EXPECT_THROW(failed.get(), std::exception);
  beside.get();
  EXPECT_EQ(y.runs_completed(), 80u);
}

// Two threads run trees that bind the same two arrays in opposite orders, and a third reads them:
// the turns are taken in one order for all, so none waits on another for ever.
TEST(Resident, OppositeBindingOrdersNeverDeadlock) {
  Saxpy s;
  Runtime rt;
  auto a = rt.array<cl_float>(kN);
  auto b = rt.array<cl_float>(kN);
  auto forwards = [&] {
    for (int i = 0; i < 20; ++i) rt.execute(s.tree, {{s.x, a}, {s.y, b}}, {.device = 0});
  };
  auto backwards = [&] {
    for (int i = 0; i < 20; ++i) rt.execute(s.tree, {{s.y, a}, {s.x, b}}, {.device = 0});
  };
  auto reader = [&] {
    for (int i = 0; i < 20; ++i) EXPECT_EQ(a.host()[i], 0.0f);
  };
  auto f1 = std::async(std::launch::async, forwards);
  auto f2 = std::async(std::launch::async, backwards);
  auto f3 = std::async(std::launch::async, reader);
  f1.get();
  f2.get();
  f3.get();
  for (float v : b.host()) ASSERT_EQ(v, 0.0f);
  EXPECT_EQ(a.runs_completed(), 40u);
}
