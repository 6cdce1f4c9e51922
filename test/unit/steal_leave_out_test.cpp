// Which device the runs of one steal plan leave out (decompose/schedules/steal/leave_out.hpp):
// the arithmetic on its own, and runs of a plan on a simulated clock (unit/steal_simulation.hpp)
// where a CPU's work slows the GPU beside it (left out, every unit still run once), where it does
// not (kept, tried again less and less often), and where the slowdown ends (taken back).
#include "decompose/decompose.hpp"
#include "decompose/schedules/steal/leave_out.hpp"
#include "decompose/schedules/steal/ranges.hpp"
#include "unit/device_infos.hpp"
#include "unit/expect_error.hpp"
#include "unit/steal_simulation.hpp"

#include <sinew/config.hpp>
#include <sinew/options.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace sinew;
using namespace sinew::detail;
using sinew::testing::expect_error;
using sinew::testing::Simulated;
using sinew::testing::simulate;

namespace {

DeviceInfo cpu(std::size_t index) { return sinew::testing::synthetic_cpu(index); }
DeviceInfo gpu(std::size_t index) { return sinew::testing::synthetic_gpu(index); }

constexpr std::size_t kUnits = 100000;

// A CPU (`cpu_rate` units a ms) beside a GPU (10 units a ms) whose pieces take `slowdown` times
// longer once the CPU has begun work in the run. One run of the plan on the simulated clock.
Simulated run_beside(const Decomposition& dec, StealMemory& memory, double cpu_rate, double slowdown) {
  bool cpu_works = false;
  return simulate(dec, &memory, [&](std::size_t q, Chunk c, double) {
    const std::size_t device = steal_plan(dec).queues[q].device;
    if (device == 0) cpu_works = true;
    const double rate = device == 0 ? cpu_rate : 10.0 / (cpu_works ? slowdown : 1.0);
    return 0.01 + static_cast<double>(c.units) / rate;
  });
}

std::size_t wrong_visits(const Simulated& s) {
  return static_cast<std::size_t>(std::count_if(s.visits.begin(), s.visits.end(), [](int v) { return v != 1; }));
}

Decomposition plan(const std::vector<DeviceInfo>& devices) {
  return decompose(kUnits, 1, Config::parse("cpu=0.1,schedule=steal", devices), devices);
}

}  // namespace

// Every split is slower than the GPU alone (the CPU's work halves the GPU's rate): after three
// runs with the CPU and three without it, the runs leave it out; a run with it again now and then
// (less often each time it loses, the CPU starting at its least range) ends its trial; every unit
// runs exactly once each run.
TEST(StealLeaveOut, ADeviceWhoseWorkSlowsTheOthersIsLeftOut) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  const Decomposition dec = plan(devices);
  StealMemory memory;
  std::size_t without = 0, back = 0;
  double last_ms = 0;
  for (int run = 0; run < 40; ++run) {
    const Simulated s = run_beside(dec, memory, 1.0, 2.0);
    ASSERT_EQ(wrong_visits(s), 0u) << "run " << run;
    if (without > 0 && !s.pieces[0].empty()) {
      // A run that takes the CPU back starts it at its least range.
      ++back;
      EXPECT_LE(s.pieces[0].front().units, steal_plan(dec).least_units + 1) << "run " << run;
    }
    without += s.pieces[0].empty();
    last_ms = s.end_ms;
  }
  EXPECT_GE(back, 2u);
  EXPECT_EQ(memory.leave_out.kept(), std::optional<std::size_t>{0});
  EXPECT_GE(without, 32u);
  EXPECT_NEAR(last_ms, static_cast<double>(kUnits) / 10.0, 2.0);  // the GPU alone's time
  // The CPU's part of the runs with it is kept, for the runs that try it again.
  EXPECT_GT(memory.shares.at(0), 0.0);
  EXPECT_NEAR(memory.shares.at(0) + memory.shares.at(1), 1.0, 1e-9);
}

// Without the slowdown a CPU of a fifth of the GPU's rate adds its rate: the trials without it
// lose at their first run, and come at doubling intervals; the plan keeps every device.
TEST(StealLeaveOut, ADeviceThatAddsItsRateIsKept) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  const Decomposition dec = plan(devices);
  StealMemory memory;
  std::vector<int> left_out_runs;
  for (int run = 0; run < 60; ++run) {
    const Simulated s = run_beside(dec, memory, 2.0, 1.0);
    ASSERT_EQ(wrong_visits(s), 0u) << "run " << run;
    if (s.pieces[0].empty()) left_out_runs.push_back(run);
  }
  EXPECT_EQ(memory.leave_out.kept(), std::nullopt);
  // Each trial's first run is slower than every kept run: ended there, after 3, 6, 12 and 24 runs
  // with every device.
  const std::vector<int> expected = {3, 10, 23, 48};
  EXPECT_EQ(left_out_runs, expected);
}

// A slowdown that ends (a load on the CPU gone: it runs twice as fast, and slows the GPU no more):
// the trials with every device again find it, and the plan takes the CPU back.
TEST(StealLeaveOut, ALeftOutDeviceIsTakenBackWhenItsWorkNoLongerSlowsTheOthers) {
  const std::vector<DeviceInfo> devices = {cpu(0), gpu(1)};
  const Decomposition dec = plan(devices);
  StealMemory memory;
  for (int run = 0; run < 20; ++run) ASSERT_EQ(wrong_visits(run_beside(dec, memory, 1.0, 2.0)), 0u);
  ASSERT_EQ(memory.leave_out.kept(), std::optional<std::size_t>{0});
  int back = -1;
  for (int run = 0; run < 80 && back < 0; ++run) {
    ASSERT_EQ(wrong_visits(run_beside(dec, memory, 2.0, 1.0)), 0u);
    if (!memory.leave_out.kept()) back = run;
  }
  EXPECT_GE(back, 0) << "the CPU was not taken back in 80 runs";
  const Simulated s = run_beside(dec, memory, 2.0, 1.0);
  EXPECT_FALSE(s.pieces[0].empty());
  EXPECT_LT(s.end_ms, static_cast<double>(kUnits) / 10.0);  // faster than the GPU alone
}

// Who is tried: the device with the least part, under the part setting, among two or more that
// ran; never with the setting at 0. A trial run slower than every kept run ends the trial; one
// within them goes on.
TEST(StealLeaveOut, WhoIsTriedAndWhenATrialEnds) {
  const LeaveOut::Settings s{.part = 0.25, .runs = 2, .interval = 8};
  LeaveOut l;
  for (int i = 0; i < 6; ++i) l.ran(s, std::nullopt, {0.3, 0.7}, 10);  // no part under 0.25
  EXPECT_EQ(l.for_next_run(), std::nullopt);
  for (int i = 0; i < 2; ++i) l.ran(s, std::nullopt, {0.8, 0.0, 0.2}, 10);
  EXPECT_EQ(l.for_next_run(), std::optional<std::size_t>{2});
  l.ran(s, 2, {0.0, 0.0, 1.0}, 10);  // as fast as the kept runs: the trial goes on
  EXPECT_EQ(l.for_next_run(), std::optional<std::size_t>{2});
  l.ran(s, 2, {0.0, 0.0, 1.0}, 16);  // slower than every kept run: the trial ends
  EXPECT_EQ(l.for_next_run(), std::nullopt);
  EXPECT_EQ(l.other_best_ms(), 10);  // the ended trial's least time
  LeaveOut never;
  for (int i = 0; i < 10; ++i) never.ran({.part = 0}, std::nullopt, {0.01, 0.99}, 10);
  EXPECT_EQ(never.for_next_run(), std::nullopt);
  LeaveOut alone;  // one device that ran: nothing to leave out
  for (int i = 0; i < 10; ++i) alone.ran(s, std::nullopt, {0.0, 1.0}, 10);
  EXPECT_EQ(alone.for_next_run(), std::nullopt);
}

TEST(StealLeaveOut, TunedDefaultsAndTheirRanges) {
  const ScheduleTuning t;
  EXPECT_EQ(t.steal.leave_out_part, 0.5);
  EXPECT_EQ(t.steal.leave_out_runs, 3u);
  EXPECT_EQ(t.steal.leave_out_interval, 64u);
  ScheduleTuning bad;
  bad.steal.leave_out_part = 1;
  expect_error([&] { checked_tuning(bad); }, {"", "schedule_tuning.steal.leave_out_part", "[0, 1)"});
  bad = {};
  bad.steal.leave_out_runs = 0;
  expect_error([&] { checked_tuning(bad); }, {"", "schedule_tuning.steal.leave_out_runs", "at least 1"});
  bad = {};
  bad.steal.leave_out_interval = 2;
  expect_error([&] { checked_tuning(bad); }, {"", "schedule_tuning.steal.leave_out_interval", "leave_out_runs"});
}
