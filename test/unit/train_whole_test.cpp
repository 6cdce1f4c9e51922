// Training's choice of the device a leaf marked whole_range() runs on (schedule/train_whole.hpp),
// against a synthetic run time: the faster whole device is measured and kept with the plan, the
// trainer's device stays where it is faster, and nothing is measured where there is nothing to
// choose or no budget left.
#include "schedule/train_whole.hpp"

#include "platform/plan_items.hpp"
#include "unit/synthetic_devices.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace sinew;
using namespace sinew::detail;
using namespace sinew::testing;

namespace {

std::vector<DeviceInfo> three_devices() {
  std::vector<DeviceInfo> d(3);
  for (std::size_t i = 0; i < d.size(); ++i) {
    d[i].index = i;
    d[i].kind = i == 0 ? DeviceKind::cpu : DeviceKind::gpu;
    d[i].global_memory = 1 << 20;
  }
  return d;
}

// A trainer's result: the plan {0.6, 0.3, 0.1} (device 0 the largest share) measured at 10 ms.
TrainingResult trained() {
  TrainingResult r;
  r.best.shares = {0.6, 0.3, 0.1};
  r.time_ms = 10;
  r.executions = 6;
  r.points.push_back({r.best, r.time_ms, {}});
  return r;
}

// The run's time by the whole item of the plan it runs: `ms[d]` with the leaf on device d.
struct WholeTimes {
  std::vector<double> ms;
  std::vector<Config> ran;
  Measurement operator()(const Config& c) {
    ran.push_back(c);
    const auto device = whole_item(c, "whole");
    return Measurement{.time_ms = ms.at(device ? *device : 0)};
  }
};

TrainingOptions training(unsigned quality = 1) {
  TrainingOptions o;
  o.quality = quality;
  return o;
}

}  // namespace

TEST(TrainWhole, TheFasterWholeDeviceIsMeasuredAndKeptWithThePlan) {
  const auto devices = three_devices();
  WholeTimes times{{10, 7, 12}, {}};
  TrainingResult r = trained();
  std::vector<std::string> lines;
  choose_whole_device(r, devices, {0, 1, 2}, std::ref(times), training(2), 40,
                      [&](const std::string& l) { lines.push_back(l); });
  ASSERT_EQ(times.ran.size(), 4u);  // devices 1 and 2, twice each; the trainer's device 0 measured already
  EXPECT_EQ(whole_item(times.ran[0], "whole"), 1u);
  EXPECT_EQ(whole_item(times.ran[2], "whole"), 2u);
  EXPECT_EQ(whole_item(r.best, "whole"), 1u) << r.best.str();
  EXPECT_EQ(r.best.shares, (std::vector<double>{0.6, 0.3, 0.1}));
  EXPECT_EQ(r.time_ms, 7);
  EXPECT_EQ(r.executions, 10u);
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_EQ(r.points[1].time_ms, 7);
  EXPECT_EQ(r.points[2].time_ms, 12);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("whole leaf on device 1"), std::string::npos) << lines[0];
}

TEST(TrainWhole, TheTrainersDeviceStaysAndIsNamedWhereItIsFastest) {
  const auto devices = three_devices();
  WholeTimes times{{10, 11, 12}, {}};
  TrainingResult r = trained();
  choose_whole_device(r, devices, {0, 1, 2}, std::ref(times), training(), 40);
  EXPECT_EQ(times.ran.size(), 2u);
  EXPECT_EQ(whole_item(r.best, "whole"), 0u) << r.best.str();
  EXPECT_EQ(r.time_ms, 10);
}

TEST(TrainWhole, OnlyTheDevicesThatHoldTheLeafAreMeasured) {
  auto devices = three_devices();
  devices[2].memory_cap = 1000;  // holds less than the leaf's vectors
  EXPECT_EQ(devices_holding(devices, {.bytes = 4096, .largest = 2048}), (std::vector<std::size_t>{0, 1}));
  devices[1].max_alloc = 1024;  // cannot allocate the largest vector
  EXPECT_EQ(devices_holding(devices, {.bytes = 4096, .largest = 2048}), (std::vector<std::size_t>{0}));
  WholeTimes times{{10, 1, 1}, {}};
  TrainingResult r = trained();
  choose_whole_device(r, devices, devices_holding(devices, {.bytes = 4096, .largest = 2048}), std::ref(times),
                      training(), 40);
  EXPECT_TRUE(times.ran.empty()) << "one device holds it: nothing to choose";
  EXPECT_EQ(r.best, trained().best);
}

TEST(TrainWhole, NothingIsMeasuredWithoutAChoiceOrABudget) {
  const auto devices = three_devices();
  auto untouched = [&](TrainingResult r, const TrainingOptions& o, std::size_t executions, const char* why) {
    WholeTimes times{{10, 1, 1}, {}};
    const TrainingResult before = r;
    choose_whole_device(r, devices, {0, 1, 2}, std::ref(times), o, executions);
    EXPECT_TRUE(times.ran.empty()) << why;
    EXPECT_EQ(r.best, before.best) << why;
    EXPECT_EQ(r.executions, before.executions) << why;
  };
  TrainingResult alone = trained();
  alone.best = Config::single(1, 3);
  untouched(alone, training(), 40, "a plan of one device runs the leaf where it is");
  TrainingResult named = trained();
  named.best.set("whole", "2");
  untouched(named, training(), 40, "the plan names its whole device");
  TrainingOptions check = training();
  check.purpose = TrainingPurpose::check_derived;
  untouched(trained(), check, 40, "only a training chooses");
  untouched(trained(), training(), 6, "the executions are spent");
  TrainingResult late = trained();
  late.seconds = 2.0, late.budget_seconds = 2.0;
  untouched(late, training(), 40, "the time budget is spent");
}

TEST(TrainWhole, TheBudgetEndsTheChoiceAndSaysSo) {
  const auto devices = three_devices();
  WholeTimes times{{10, 12, 7}, {}};
  TrainingResult r = trained();
  choose_whole_device(r, devices, {0, 1, 2}, std::ref(times), training(), 7);
  EXPECT_EQ(times.ran.size(), 1u) << "one execution left: device 1 only";
  EXPECT_EQ(r.executions, 7u);
  EXPECT_EQ(r.end, TrainingEnd::executions);
  EXPECT_EQ(whole_item(r.best, "whole"), 0u) << r.best.str();
}

// The whole leaf's devices are measured on the trainer's clock, builds aside: a training that
// spent more wall time than its budget building programs still measures them, and a plan's first
// run beyond its second counts as builds there too (docs/decisions/158).
TEST(TrainWhole, TheChoiceSpendsTheTrainersBudgetOnItsClock) {
  const auto devices = three_devices();
  WholeTimes times{{10, 7, 12}, {}};
  std::set<std::string> launched;
  auto first_launch_slower = [&](const Config& c) {
    Measurement m = times(c);
    if (launched.insert(c.str()).second) m.time_ms += 50;
    return m;
  };
  TrainingResult r = trained();
  r.seconds = 2.5, r.build_seconds = 1.0, r.budget_seconds = 2.0;  // 1.5 s of the 2 s budget spent
  choose_whole_device(r, devices, {0, 1, 2}, first_launch_slower, training(3), 40);
  EXPECT_EQ(times.ran.size(), 6u) << "devices 1 and 2, three times each";
  EXPECT_EQ(whole_item(r.best, "whole"), 1u) << r.best.str();  // by the median: the first run's compile aside
  EXPECT_EQ(r.executions, 12u);
  EXPECT_GE(r.seconds, 2.5);
  EXPECT_NEAR(r.first_run_seconds, 0.100, 1e-9);
  EXPECT_NEAR(r.build_seconds, 1.100, 1e-9);
  EXPECT_EQ(r.end, TrainingEnd::completed);
  // Past the budget on that clock, nothing is measured and the time budget ended the training.
  TrainingResult late = trained();
  late.seconds = 3.5, late.build_seconds = 1.0;
  times.ran.clear();
  choose_whole_device(late, devices, {0, 1, 2}, std::ref(times), training(), 40);
  EXPECT_TRUE(times.ran.empty());
  EXPECT_EQ(late.end, TrainingEnd::time);
}

// The executions kept from the trainer for the choice: each device but the trainer's, quality
// times; none where there is nothing to choose or the training only checks or rebalances.
TEST(TrainWhole, TheChoicesRunsAreKeptFromTheTrainersBudget) {
  TrainingOptions o;
  o.purpose = TrainingPurpose::train;
  o.quality = 3;
  EXPECT_EQ(whole_device_runs({0, 1, 2}, o), 6u);
  EXPECT_EQ(whole_device_runs({1}, o), 0u);
  EXPECT_EQ(whole_device_runs({}, o), 0u);
  o.quality = 0;  // counted as one run each
  EXPECT_EQ(whole_device_runs({0, 2}, o), 1u);
  o.purpose = TrainingPurpose::rebalance;
  EXPECT_EQ(whole_device_runs({0, 1, 2}, o), 0u);
}
