// Training that measures slow devices on a little of the data, and stops at its time budget:
// synthetic devices (time = a * share * N + b, or a cost that is not linear in the share).
#include "schedule/train.hpp"
#include "schedule/train_ledger.hpp"
#include "schedule/train_search.hpp"
#include "unit/synthetic_devices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

using namespace sinew;
using namespace sinew::detail;
using namespace sinew::testing;

namespace {

constexpr Strategy kSearches[] = {Strategy::even_split, Strategy::cpu_assisted};

// The largest share a point gave device d.
double largest_share(const TrainingResult& r, std::size_t d) {
  double most = 0;
  for (const auto& p : r.points) most = std::max(most, p.config.shares[d]);
  return most;
}

std::string log_of(const std::vector<std::string>& lines) {
  std::string log;
  for (const auto& l : lines) log += l + "\n";
  return log;
}

}  // namespace

// A CPU 100 times slower than the GPU: its probe (1/64 of the data) already takes longer than the
// GPU's whole share, so it is never measured alone, nor with more than a few probes' share, and
// the GPU alone wins.
TEST(TrainProbe, ADeviceAHundredTimesSlowerIsNeverMeasuredAloneAtFullSize) {
  const auto devs = cpu_gpu();
  for (Strategy s : kSearches) {
    Model m{{30.0, 0.3}, {0.5, 1.0}};
    TrainingOptions o;
    o.strategy = s;
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    EXPECT_EQ(r.best.shares[0], 0.0) << where;
    // The probe first: the CPU on a 64th of the data, the GPU on the rest.
    ASSERT_FALSE(r.points.empty());
    EXPECT_NEAR(r.points.front().config.shares[0], TrainingTuning{}.probe_share, 1e-12) << where;
    // Never alone, never with a large share.
    EXPECT_LE(largest_share(r, 0), 4 * TrainingTuning{}.probe_share) << where;
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find("not measured") != l.npos; }))
        << where;
    // No run of the CPU took more than about 3 GPU-alone times (its probe: 1.6, a run at the
    // bound before a larger share is dropped: 3), not the CPU alone's 100.
    for (const auto& p : r.points) EXPECT_LT(p.device_ms[0], 3.3 * m.clean_time(Config::single(1, 2))) << where;
  }
}

// The model strategy keeps its even first plan (a probe's point near a zero share costs its ten
// executions' fits their precision: docs/decisions/111), but never runs the 100-times-slower CPU
// alone: after its first plans the CPU's measured line puts that at 3x the fastest plan or more.
TEST(TrainProbe, TheModelStrategyNeverRunsAHundredTimesSlowerDeviceAlone) {
  const auto devs = cpu_gpu();
  Model m{{30.0, 0.3}, {0.5, 1.0}};
  TrainingOptions o;
  o.strategy = Strategy::model;
  std::vector<std::string> lines;
  const TrainingResult r = train(devs, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
  const std::string where = r.best.str() + "\n" + log_of(lines);
  EXPECT_EQ(r.strategy, "model") << where;
  EXPECT_LE(largest_share(r, 0), 0.5) << where;
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find("not measured") != l.npos; }))
      << where;
  EXPECT_LE(m.clean_time(r.best), 1.05 * m.clean_time(Config::single(1, 2))) << where;
  EXPECT_LE(r.executions, TrainingTuning{}.model_executions) << where;
}

// A device whose cost is not linear in its share (fixed costs that vanish as the work grows, as a
// GPU that a small share leaves idle): its probe puts it 20 times behind, yet alone it is the
// fastest. It is measured at a larger share before any plan is dropped, and then alone.
TEST(TrainProbe, ADeviceWhoseProbeMisestimatesItIsMeasuredBeforeItIsDropped) {
  const auto devs = cpu_gpu();
  struct Misleading {
    std::size_t calls = 0;
    Measurement operator()(const Config& c) {
      ++calls;
      Measurement m;
      // The GPU (the probe's carrier): 100 ms for the whole input. The CPU: 60 * share^(1/4) ms,
      // 21 ms on a 64th of the input (a rate of 1350 ms per input), 60 ms alone.
      m.device_ms = {c.shares[0] > 0 ? 60 * std::pow(c.shares[0], 0.25) : 0.0,
                     c.shares[1] > 0 ? 100 * c.shares[1] + 0.5 : 0.0};
      m.time_ms = std::max(m.device_ms[0], m.device_ms[1]);
      return m;
    }
  };
  for (Strategy s : kSearches) {
    Misleading m;
    TrainingOptions o;
    o.strategy = s;
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    const bool cpu_alone = std::any_of(r.points.begin(), r.points.end(),
                                       [](const TrainingPoint& p) { return p.config.shares[0] == 1.0; });
    EXPECT_TRUE(cpu_alone) << where;
    EXPECT_LE(r.time_ms, 60 * 1.05) << where;  // the CPU alone, or a split as fast
  }
}

// A plan that the measured costs put well behind the fastest is not run; one nearer is.
TEST(TrainProbe, APlanFarBehindIsNotRunAndOneNearerIs) {
  const auto devs = cpu_gpu();
  for (double cpu_a : {9.0, 1.5}) {  // the CPU alone: 9 and 1.5 times the GPU alone's time
    Model m{{cpu_a, 1.0}, {0.5, 0.5}};
    m.noise = 0;
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, std::ref(m), TrainingOptions{}, [&](const std::string& l) { lines.push_back(l); });
    const bool cpu_alone = std::any_of(r.points.begin(), r.points.end(),
                                       [](const TrainingPoint& p) { return p.config.shares[0] == 1.0; });
    // The best plan is a split near a / (1 + a) for the GPU: the CPU alone takes 1 + a times it.
    EXPECT_EQ(cpu_alone, cpu_a < 3) << "a " << cpu_a << ": " << r.best.str() << "\n" << log_of(lines);
    // No run of the CPU took more than 3 times the best plan (once: measured near that bound first).
    for (const auto& p : r.points) EXPECT_LE(p.device_ms[0], 3.05 * r.time_ms) << p.config.str();
  }
}

// The time budget: training stops once it has run max(time_budget_s, 50 x the fastest plan), or
// once the next measurement's runs no longer fit it, with the fastest plan measured, and says so.
TEST(TrainingBudget, TheTimeBudgetEndsTrainingWithTheBestPlanAndSaysSo) {
  const auto devs = cpu_gpu();
  Model model{{1.0, 0.3}, {0.5, 2.0}};
  model.n = 10;  // runs of 5-12 ms by the model: no longer than the 20 ms of wall time each takes
  auto slow = [&](const Config& c) {  // each run 20 ms of wall time
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return model(c);
  };
  TrainingOptions o;
  o.time_budget_s = 0.15;
  o.tuning.budget_best_plan_times = 0;  // the synthetic times are not the wall time
  std::vector<std::string> lines;
  const TrainingResult r = train(devs, slow, o, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(r.end, TrainingEnd::time) << log_of(lines);
  EXPECT_LT(r.executions, 15u) << log_of(lines);
  EXPECT_DOUBLE_EQ(r.budget_seconds, 0.15);
  // It stops where the next measurement's runs (at most four, of at least 5 ms each by the
  // points so far) would not fit; no run starts that the budget has no room for.
  EXPECT_GE(r.seconds, 0.15 - 4 * 0.012 - 0.02);
  EXPECT_LT(r.seconds, 0.15 + 0.2);  // the runs under way when it ran out, the finish none
  // The fastest plan measured (by the median of its points).
  double fastest = 1e300;
  for (const auto& p : r.points) fastest = std::min(fastest, p.time_ms);
  EXPECT_LE(r.time_ms, fastest * 1.5) << r.best.str();
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [](const auto& l) { return l.find("stopped: the time budget of 0.1") != l.npos; }))
      << log_of(lines);
  // The progress lines carry the time and the budget.
  EXPECT_NE(lines.back().find("stopped"), std::string::npos) << log_of(lines);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find(" s of 0.1") != l.npos; }))
      << log_of(lines);
  // Without a time budget the same training runs its executions.
  o.time_budget_s = 0;
  Model counted{{1.0, 0.3}, {0.5, 2.0}};
  const TrainingResult whole = train(devs, std::ref(counted), o);
  EXPECT_NE(whole.end, TrainingEnd::time);
  EXPECT_EQ(whole.budget_seconds, 0.0);
}

// The budget grows with the fastest plan: 50 of its times where that is more than the least.
TEST(TrainingBudget, GrowsWithTheFastestPlan) {
  const TimeBudget budget = time_budget(TrainingOptions{});
  EXPECT_DOUBLE_EQ(budget.seconds(10), 2.0);     // 50 x 10 ms = 0.5 s < 2 s
  EXPECT_DOUBLE_EQ(budget.seconds(100), 5.0);    // 50 x 100 ms
  EXPECT_DOUBLE_EQ(TimeBudget{}.seconds(100), 0.0);  // none
  TrainingLedger ledger(40, {}, budget);
  EXPECT_TRUE(ledger.take(1));
  ledger.add({Config::single(0, 2), 100, {100, 0}});
  EXPECT_DOUBLE_EQ(ledger.budget_seconds(), 5.0);
  EXPECT_NE(ledger.status().find("of 5.0 s, 1/40 executions"), std::string::npos) << ledger.status();
  EXPECT_EQ(ledger.end(), TrainingEnd::completed);
}

// A run pinned to one device screens its levels within the same budgets.
TEST(TrainingBudget, APinnedDevicesScreeningObeysTheSameBounds) {
  const auto devs = cpu_gpu();
  Model model{{1.0, 0.3}, {0.5, 2.0}};
  auto slow = [&](const Config& c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return model(c);
  };
  TrainingOptions o = one_device_options(TrainingOptions{}, devs, 1);  // the GPU's four overlap levels
  o.time_budget_s = 0.05;  // the timed runs' clock (the untimed first runs' aside): two levels
  o.tuning.budget_best_plan_times = 0;
  std::vector<std::string> lines;
  const TrainingResult r = train(devs, slow, o, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(r.end, TrainingEnd::time) << log_of(lines);
  std::set<unsigned> levels;
  for (const auto& p : r.points) levels.insert(p.config.overlap);
  EXPECT_LT(levels.size(), devs[1].overlap_levels.size()) << log_of(lines);
  // Unbounded by time, every level.
  o.time_budget_s = 0;
  const TrainingResult all = train(devs, std::ref(model), o);
  levels.clear();
  for (const auto& p : all.points) levels.insert(p.config.overlap);
  EXPECT_EQ(levels.size(), devs[1].overlap_levels.size());
}

// The budget's clock counts every run, untimed first runs included, less the time runs spent
// building programs (docs/decisions/110): slow untimed runs end a training sooner unless that time
// was program builds.
TEST(TrainingBudget, UntimedRunsCountAndProgramBuildsDoNot) {
  const auto devs = cpu_gpu();
  auto train_with = [&](double built_ms) {
    Model model{{1.0, 0.3}, {0.5, 2.0}};
    model.n = 0.01;  // timed runs of a few ms by the model, and none of wall time
    const Measure untimed = [&](const Config& c) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      Measurement m = model(c);
      m.build_ms = built_ms;
      return m;
    };
    TrainingOptions o;
    o.time_budget_s = 0.1;
    o.tuning.budget_best_plan_times = 0;
    return train(devs, std::ref(model), o, {}, std::nullopt, untimed);
  };
  const TrainingResult counted = train_with(0);
  const TrainingResult builds_aside = train_with(40);
  EXPECT_EQ(counted.end, TrainingEnd::time);
  EXPECT_LT(counted.executions, builds_aside.executions);
  // Builds aside, the untimed runs' sleeps take no budget: the synthetic timed runs take none
  // either, so the training runs its executions.
  EXPECT_NE(builds_aside.end, TrainingEnd::time);
}

// A driver that compiles each plan's kernels at their first launch (PoCL's CPU device: a new
// partition size is a new work-group shape) spends that time in the plan's first run: it counts
// as builds, so that the compiles do not end the training by its time budget (docs/decisions/158).
TEST(TrainingBudget, APlansFirstLaunchCompilesCountAsBuilds) {
  const auto devs = cpu_gpu();
  Model model{{1.0, 0.3}, {0.5, 2.0}};
  model.n = 0.01;  // runs of about 2 ms by the model
  std::map<std::string, int> runs;
  auto compiling = [&](const Config& c) {  // the model's time, plus 40 ms at a plan's first run
    Measurement m = model(c);
    if (++runs[c.str()] == 1) m.time_ms += 40;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m.time_ms));
    return m;
  };
  TrainingOptions o;
  o.time_budget_s = 0.15;
  o.tuning.budget_best_plan_times = 0;
  std::vector<std::string> lines;
  const TrainingResult r = train(devs, compiling, o, [&](const std::string& l) { lines.push_back(l); });
  // Each plan run more than once had its first run's 40 ms counted (less the model's few ms).
  const auto repeated = std::count_if(runs.begin(), runs.end(), [](const auto& e) { return e.second > 1; });
  EXPECT_GE(runs.size(), 5u) << log_of(lines);
  EXPECT_GE(r.first_run_seconds, 0.035 * static_cast<double>(repeated)) << log_of(lines);
  EXPECT_LE(r.first_run_seconds, 0.041 * static_cast<double>(repeated)) << log_of(lines);
  EXPECT_GE(r.build_seconds, r.first_run_seconds);
  // The compiles alone would have taken more than the budget; builds aside the training is within it.
  EXPECT_GT(0.040 * static_cast<double>(runs.size()), o.time_budget_s);
  EXPECT_LT(r.seconds - r.build_seconds, o.time_budget_s + 0.05) << log_of(lines);
}

// A point of one run whose run was its plan's first holds that plan's compiles (a level screened
// at the shares measured, a device measured at a larger share before a plan that gives it more):
// it runs once more and the second run counts, so that no point, no device's fitted cost and no
// choice between plans is a compile's (docs/decisions/159).
TEST(TrainingBudget, NoPointIsAPlansFirstLaunchCompile) {
  const auto devs = cpu_gpu();
  for (Strategy s : kSearches) {
    Model model{{1.0, 0.3}, {0.5, 2.0}};
    model.n = 10;  // runs of 2-12 ms
    std::map<std::string, int> runs;
    auto compiling = [&](const Config& c) {  // the model's time, plus 200 ms at a plan's first run
      Measurement m = model(c);
      if (++runs[c.str()] == 1) m.time_ms += 200;
      return m;
    };
    TrainingOptions o;
    o.strategy = s;
    o.time_budget_s = 0;
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, compiling, o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    for (const auto& p : r.points) EXPECT_LT(p.time_ms, 200) << p.config.str() << "\n" << where;
    EXPECT_LT(r.time_ms, 200) << where;
    EXPECT_GT(r.first_run_seconds, 0.2) << where;
  }
}

// A measurement starts only where the budget has room for its runs at their expected time: the
// training's wall time is its budget (builds aside) without a run that began just before the end.
TEST(TrainingBudget, AMeasurementStartsOnlyWhereItsRunsFit) {
  for (const double each_ms : {50.0, 250.0}) {
    TrainingLedger ledger(40, {}, TimeBudget{0.5, 0});
    ASSERT_TRUE(ledger.take(1));
    ledger.add({Config::single(0, 2), 50, {50, 0}});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const bool taken = ledger.take(1, each_ms);
    // 0.3 s + 0.05 s fits 0.5 s; 0.3 s + 0.25 s does not.
    EXPECT_EQ(taken, each_ms < 100) << ledger.status();
    EXPECT_EQ(ledger.end(), taken ? TrainingEnd::completed : TrainingEnd::time);
    if (!taken) EXPECT_NE(ledger.stop_line().find("but for less than the next runs take"), std::string::npos);
  }
}

namespace {

// A CPU with fission none and L1 (sixteen sub-devices of one compute unit), and a GPU.
std::vector<DeviceInfo> cpu_with_l1_and_gpu() {
  auto devs = cpu_gpu();
  devs[0].fission_configs = {{"none", {}, "", {}}, {"L1", std::vector<unsigned>(16, 1), "affinity_domain", {}}};
  return devs;
}

// Synthetic times, in ms, of a CPU and a GPU; run() sleeps for a plan's time so that the time
// budget sees it. Each device's time is fixed_ms at the plan's fission or overlap plus a rate per
// whole input; `meets`: the partitions meet every iteration (a loop tree), so in a split every
// device takes the slowest one's time (the GPU's last queue a percent after the CPU's).
struct FixedAndRate {
  std::map<std::string, double> cpu_fixed_ms, cpu_rate_ms;  // by fission
  double gpu_fixed_ms = 0.2, gpu_rate_ms = 5.5;
  bool meets = false;
  std::vector<Config> ran;  // every run, untimed ones included
  Measurement operator()(const Config& c) {
    ran.push_back(c);
    Measurement m;
    m.device_ms = {c.shares[0] > 0 ? cpu_fixed_ms.at(c.fission) + cpu_rate_ms.at(c.fission) * c.shares[0] : 0.0,
                   c.shares[1] > 0 ? gpu_fixed_ms + gpu_rate_ms * c.shares[1] : 0.0};
    m.time_ms = std::max(m.device_ms[0], m.device_ms[1]);
    if (meets)
      for (std::size_t d = 0; d < m.device_ms.size(); ++d)
        m.device_ms[d] = m.device_ms[d] > 0 ? m.time_ms * (1 + 0.01 * static_cast<double>(d)) : 0.0;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m.time_ms));
    return m;
  }
  // The runs that gave the CPU work at `fission`.
  std::size_t cpu_runs_at(const std::string& fission) const {
    return static_cast<std::size_t>(std::count_if(
        ran.begin(), ran.end(), [&](const Config& c) { return c.shares[0] > 0 && c.fission == fission; }));
  }
};

}  // namespace

// A loop tree whose CPU partition costs a large fixed time at every meeting (more with more
// sub-devices): its probe on a 64th of the data takes 13 times the GPU alone. No plan gives the
// CPU work at fission L1 (its sixteen partitions meet at least as often as fission none's one):
// not even a probe there, a line says so, and the training ends within its time budget plus at
// most one run (docs/decisions/173).
TEST(TrainProbe, ADeviceThirteenTimesBehindOnItsProbeIsNotProbedAtItsOtherFissions) {
  const auto devs = cpu_with_l1_and_gpu();
  for (Strategy s : kSearches) {
    FixedAndRate m;
    m.cpu_fixed_ms = {{"none", 70}, {"L1", 280}};
    m.cpu_rate_ms = {{"none", 230}, {"L1", 230}};
    m.meets = true;
    TrainingOptions o;
    o.strategy = s;
    o.time_budget_s = 0.29;  // 50 x the GPU alone's 5.7 ms
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    EXPECT_EQ(r.best.shares[0], 0.0) << where;
    EXPECT_EQ(m.cpu_runs_at("L1"), 0u) << where;
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) {
      return l.find("not measured") != l.npos && l.find("fission=L1") != l.npos && l.find("cpu:0") != l.npos &&
             l.find(" ms or more") != l.npos;
    })) << where;
    // Within the budget, but for one run (the probe's 74 ms at most) and the sleeps' slack.
    EXPECT_LE(r.seconds - r.build_seconds, r.budget_seconds + 0.074 + 0.05) << where;
  }
}

// A CPU whose probe is close to the best plan (1.4 times the GPU alone; alone 2.5 times it) keeps
// its other fission screened: what its points bound its time there by is no reason to leave it out.
TEST(TrainProbe, ADeviceCloseToTheBestOnItsProbeIsScreenedAtItsOtherFissions) {
  const auto devs = cpu_with_l1_and_gpu();
  for (Strategy s : kSearches) {
    FixedAndRate m;
    m.cpu_fixed_ms = {{"none", 8}, {"L1", 9}};
    m.cpu_rate_ms = {{"none", 6}, {"L1", 3}};
    TrainingOptions o;
    o.strategy = s;
    o.time_budget_s = 0;  // executions only: what is screened does not hang on the sleeps
    std::vector<std::string> lines;
    const TrainingResult r = train(devs, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    EXPECT_GT(m.cpu_runs_at("L1"), 0u) << where;
    EXPECT_EQ(r.best.shares[0], 0.0) << where;
  }
}

namespace {

// A search over cpu_gpu() whose ledger holds `points` (each taken as one execution), with a time
// budget of `budget_s` that does not grow with the fastest plan.
struct SearchWithPoints {
  std::vector<DeviceInfo> devices = cpu_gpu();
  std::size_t runs = 0;
  Measure measure = [this](const Config& c) {
    ++runs;
    Measurement m;
    m.device_ms.assign(c.shares.size(), 1.0);
    m.time_ms = 1.0;
    return m;
  };
  TrainingOptions options;
  Progress progress;
  std::optional<Config> start;
  std::vector<std::size_t> levels;
  TrainingRequest request{devices, measure, measure, options, progress, start, levels};
  std::optional<PlanSearch> search;

  SearchWithPoints(const std::vector<TrainingPoint>& points, double budget_s) {
    options.time_budget_s = budget_s;
    options.tuning.budget_best_plan_times = 0;
    search.emplace(request, 40, MeasuringRule{});
    for (const auto& p : points) {
      search->ledger().take(1);
      search->ledger().add(p);
    }
  }
};

Config plan(std::vector<double> shares, const std::string& fission, unsigned overlap) {
  Config c;
  c.shares = std::move(shares);
  c.fission = fission;
  c.overlap = overlap;
  return without_idle_levels(c, cpu_gpu());
}

}  // namespace

// What a run is expected to take, for the time budget: at least what each working device's own
// measured times bound it by, at the plan's level or another, not only the fastest plan's time.
TEST(TrainProbe, ARunIsExpectedAtLeastAtWhatItsDevicesMeasuredTimesBoundItBy) {
  // The GPU alone 50 ms; a split where the CPU took 140 ms on half the work and the GPU 25 ms.
  SearchWithPoints s({{plan({0, 1}, "none", 2), 50, {0, 50}}, {plan({0.5, 0.5}, "none", 2), 140, {140, 25}}}, 0);
  const PlanSearch& search = *s.search;
  // The CPU alone at its measured fission: no less than its time on half the work.
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({1, 0}, "none", 1)), 140);
  // At fission L2 (two sub-devices, each with the fixed costs of fission none's one), only the rate
  // part may fall, level_speedup_limit times at most: 140 x min(1, 1 / (3 x 0.5)).
  EXPECT_NEAR(search.expected_ms(plan({1, 0}, "L2", 1)), 140 / 1.5, 1e-9);
  // On a quarter of the work at fission none: in proportion, 70 ms.
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({0.25, 0.75}, "none", 2)), 70);
  // The GPU alone at another overlap level: its 50 ms / 3 is less than the fastest plan's 50.
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({0, 1}, "none", 3)), 50);
  // A measured plan: its time.
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({0.5, 0.5}, "none", 2)), 140);
}

// A tree whose partitions meet every iteration gives every device of a split the slowest one's
// time: that time bounds the slowest device (the one the others are known to beat), not the fast
// one.
TEST(TrainProbe, AWaitInASplitDoesNotBoundTheFasterDevice) {
  // The probe of a loop tree: both devices 73.6 ms (the GPU's last queue a percent later); the
  // GPU alone 5.7 ms.
  const TrainingPoint probe{plan({1.0 / 64, 63.0 / 64}, "none", 2), 74.3, {73.6, 74.3}};
  SearchWithPoints s({probe, {plan({0, 1}, "none", 2), 5.7, {0, 5.7}}}, 0);
  const PlanSearch& search = *s.search;
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({0, 1}, "none", 3)), 5.7);
  // The CPU: its 73.6 ms, at fission none and (at least the fixed costs) at L2.
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({1, 0}, "none", 1)), 73.6);
  EXPECT_DOUBLE_EQ(search.expected_ms(plan({1, 0}, "L2", 1)), 73.6);
  // Without the GPU alone nothing says which device the split waited for: no bound.
  SearchWithPoints probe_only({probe}, 0);
  EXPECT_DOUBLE_EQ(probe_only.search->expected_ms(plan({1, 0}, "L2", 1)), 74.3);  // the fastest plan's
  EXPECT_DOUBLE_EQ(probe_only.search->expected_ms(plan({0, 1}, "none", 3)), 74.3);
}

// No measurement starts whose runs, at what the devices' times bound them by, do not fit the time
// budget left: the CPU alone (140 ms a run, two runs with its untimed first) 0.8 s into a budget
// of 1 s is not run, though two runs of the fastest plan's 50 ms would fit (docs/decisions/110, 173).
TEST(TrainProbe, AMeasurementStartsOnlyWhereItsRunsFitAtTheirBound) {
  SearchWithPoints s({{plan({0, 1}, "none", 2), 50, {0, 50}}, {plan({0.5, 0.5}, "none", 2), 140, {140, 25}}}, 1.0);
  std::this_thread::sleep_for(std::chrono::duration<double>(0.8 - s.search->ledger().seconds()));
  EXPECT_EQ(s.search->measure(plan({1, 0}, "none", 1), 1), nullptr);
  EXPECT_EQ(s.runs, 0u);
  EXPECT_EQ(s.search->ledger().end(), TrainingEnd::time);
}

// docs/decisions/180: two devices of one model (two identical GPUs) are not probed: neither is
// expected slow, and a probe share would measure mostly the fixed costs of the device given it.
// Training starts from the even split and keeps it where the two share the work best, however
// large each one's fixed cost; two devices of different models are probed as before.
TEST(TrainProbe, DevicesOfOneModelStartFromTheEvenSplit) {
  auto gpus = cpu_gpu();
  gpus[0] = gpus[1];
  gpus[0].index = 0;
  for (Strategy s : kSearches) {
    Model m{{0.3, 0.3}, {40.0, 40.0}};  // a fixed cost per run as large as an eighth of the work
    m.noise = 0;
    m.overlap_b = {1, 1, 1, 1};
    TrainingOptions o;
    o.strategy = s;
    std::vector<std::string> lines;
    const TrainingResult r = train(gpus, std::ref(m), o, [&](const std::string& l) { lines.push_back(l); });
    const std::string where = std::string(to_string(s)) + ": " + r.best.str() + "\n" + log_of(lines);
    ASSERT_FALSE(r.points.empty());
    EXPECT_FALSE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find("probing") != l.npos; }))
        << where;
    EXPECT_NEAR(r.best.shares[0], 0.5, 0.05) << where;
    EXPECT_LE(m.clean_time(r.best), m.clean_time(Config::single(0, 2)) * 0.65) << where;
  }
  // A CPU and a GPU: probed.
  Model m{{1.0, 0.3}, {0.5, 2.0}};
  std::vector<std::string> lines;
  train(cpu_gpu(), std::ref(m), TrainingOptions{}, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find("probing") != l.npos; }))
      << log_of(lines);
}
