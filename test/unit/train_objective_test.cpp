// One training objective, the fastest plan, whatever the strategy: against synthetic device
// models (test/unit/synthetic_devices.hpp), training returns the analytic optimum over every
// platform configuration, or a single device where hybrid loses; a derived plan's check takes
// the overlap level of its own size; one device alone screens its own levels.
#include "schedule/train.hpp"
#include "unit/synthetic_devices.hpp"

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <set>

using namespace sinew;
using namespace sinew::detail;
using namespace sinew::testing;

namespace {

constexpr Strategy kStrategies[] = {Strategy::even_split, Strategy::cpu_assisted, Strategy::model};

TrainingOptions with(Strategy s) {
  TrainingOptions o;
  o.strategy = s;
  return o;
}

}  // namespace

TEST(TrainObjective, EveryStrategyReturnsTheOptimumOrTheBestSingleDevice) {
  const auto devs = cpu_gpu();
  struct Machine {
    const char* what;
    std::vector<double> a, b;
    int alone;  // the device that must take everything, -1: a split
  };
  const Machine machines[] = {
      {"hybrid wins", {1.0, 0.3}, {0.5, 2.0}, -1},
      {"the GPU alone (a CPU 100x slower with a large start-up cost)", {30.0, 0.3}, {40.0, 1.0}, 1},
      {"the CPU alone (a GPU whose transfers cost more than the CPU's whole run)", {0.01, 0.001}, {0.1, 500.0}, 0},
  };
  for (const auto& machine : machines)
    for (Strategy s : kStrategies) {
      Model m{machine.a, machine.b};
      const TrainingResult r = train(devs, std::ref(m), with(s));
      const std::string where = std::string(machine.what) + ", " + std::string(to_string(s)) + ": " + r.best.str();
      EXPECT_LE(r.executions, execution_budget(with(s))) << where;
      EXPECT_EQ(r.executions, m.calls) << where;
      // The analytic optimum over every fission, overlap level and split, each device alone
      // included, by brute force: within the precision (twice it for the model's few runs, which
      // the noise moves), never a plan slower than it by more.
      const double slack = s == Strategy::model ? 0.10 : 0.05 + m.noise;
      EXPECT_LE(m.clean_time(r.best), m.global_optimum() * (1 + slack)) << where;
      if (machine.alone >= 0) {
        const auto one = static_cast<std::size_t>(machine.alone);
        EXPECT_EQ(r.best.shares[one], 1.0) << where;
        EXPECT_EQ(r.best.shares[1 - one], 0.0) << where;
      }
    }
}

TEST(TrainObjective, TheGpuAloneAtOverlap4BeatsEveryHybridAtOverlap1AndIsKept) {
  const auto devs = cpu_gpu();
  // The GPU's per-unit cost falls with the overlap level (its transfers hide behind its kernels);
  // the CPU has a start-up cost that no share repays once the GPU streams. At overlap 1 a split
  // beats the GPU alone; at overlap 4 the GPU alone beats every plan.
  Model m{{1.0, 0.3}, {150.0, 1.0}};
  m.overlap_a = {1.0, 0.6, 0.45, 0.4};
  m.overlap_b = {1, 1, 1, 1};
  Config gpu4 = Config::single(1, 2);
  gpu4.overlap = 4;
  Config gpu1 = Config::single(1, 2);
  ASSERT_LT(m.optimum("none", 1), m.clean_time(gpu1) * 0.95);  // a split wins at overlap 1 ...
  ASSERT_LT(m.clean_time(gpu4), m.optimum("none", 1) * 0.5);   // ... the GPU alone at 4 beats it
  ASSERT_NEAR(m.clean_time(gpu4), m.global_optimum(), 1e-9);   // ... and every other plan
  // From scratch, and from a start at overlap 1 with a CPU share (a neighbour's plan).
  Config start;
  start.shares = {0.12, 0.88};
  start.overlap = 1;
  for (Strategy s : kStrategies)
    for (const std::optional<Config>& from : {std::optional<Config>{}, std::optional<Config>{start}}) {
      Model run = m;
      const TrainingResult r = train(devs, std::ref(run), with(s), {}, from);
      const std::string where = std::string(to_string(s)) + (from ? " from overlap 1" : "") + ": " + r.best.str();
      EXPECT_EQ(r.best.shares, gpu4.shares) << where;
      EXPECT_EQ(r.best.overlap, 4u) << where;
      EXPECT_EQ(r.best.schedule, "static") << where;
    }
}

TEST(TrainObjective, TheResultIsTheFastestPlanMeasured) {
  // Whatever the strategy, no plan that training measured is faster (by the median of its
  // points) than the one it returns: with 20% noise the leaders ran again before the choice.
  const auto devs = cpu_gpu();
  for (Strategy s : kStrategies)
    for (unsigned seed = 1; seed <= 5; ++seed) {
      Model m{{1.0, 0.3}, {0.5, 60.0}};
      m.noise = 0.2;
      m.rng.seed(seed);
      const TrainingResult r = train(devs, std::ref(m), with(s));
      std::vector<std::pair<Config, std::vector<double>>> seen;
      for (const auto& p : r.points) {
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == p.config; });
        if (it == seen.end()) seen.emplace_back(p.config, std::vector<double>{p.time_ms});
        else it->second.push_back(p.time_ms);
      }
      // (The model strategy's plan stands against splits at its own platform configuration
      // measured faster within its margin, at most twice the precision, and a device alone
      // against splits measured faster within the precision: PlanSearch::choose_fastest.)
      const double precision = TrainingOptions{}.precision;
      auto split = [](const Config& c) { return c.shares[0] > 0 && c.shares[1] > 0; };
      auto margin = [&](const Config& c) {
        if (!split(c)) return 1.0;
        if (!split(r.best)) return 1 + precision;
        return s == Strategy::model && c.overlap == r.best.overlap && c.fission == r.best.fission ? 1 + 2 * precision
                                                                                                 : 1.0;
      };
      for (const auto& [c, times] : seen)
        EXPECT_GE(median(times) * margin(c), r.time_ms)
            << to_string(s) << " seed " << seed << ": " << c.str() << " beat " << r.best.str();
      EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [&](const auto& e) { return e.first == r.best; }));
    }
}

TEST(TrainObjective, ADerivedPlanTakesTheOverlapLevelOfItsOwnSize) {
  const auto devs = cpu_gpu();
  // Every overlap level beyond 1 costs the GPU 20 ms of queues and saves it half its per-unit time
  // at 4: a small input wants overlap 1, one 1000x larger overlap 4.
  auto machine = [](double n) {
    Model m{{1.0, 0.3}, {0.5, 2.0}};
    m.n = n;
    m.overlap_a = {1.0, 0.7, 0.55, 0.5};
    m.overlap_b = {1, 1, 1, 1};
    m.queue_ms = 20;
    return m;
  };
  Model small = machine(10);
  const TrainingResult neighbour = train(devs, std::ref(small), TrainingOptions{}, {});
  ASSERT_EQ(neighbour.best.overlap, 1u) << neighbour.best.str();
  for (const double n : {1e4, 1e5}) {
    Model large = machine(n);
    // The neighbour's plan (its split and overlap level) checked at this size within the
    // planner's default budget.
    const std::size_t budget = *TrainingSettings{}.with_defaults().derive_executions;
    const TrainingResult r = train(devs, std::ref(large), screen_options(TrainingOptions{}, budget), {}, neighbour.best);
    EXPECT_LE(r.executions, budget);
    EXPECT_EQ(r.best.overlap, 4u) << "n " << n << ": " << r.best.str();
    // (The neighbour ran the GPU alone; a check searches no distribution, so the GPU alone stays,
    // at the level fastest for it here.)
    Config gpu4 = Config::single(1, 2);
    gpu4.overlap = 4;
    EXPECT_LE(large.clean_time(r.best), large.clean_time(gpu4) * 1.01) << "n " << n << ": " << r.best.str();
  }
}

TEST(TrainObjective, OneDeviceAloneScreensItsOwnLevels) {
  const auto devs = cpu_gpu();
  Model m{{1.0, 0.3}, {0.5, 60.0}};
  m.overlap_b = {1.0, 0.9, 0.3, 0.8};  // overlap 3 best for the GPU
  m.fission_gain = 0.5;                // fission L2 best for the CPU
  TrainingOptions o;
  o.purpose = TrainingPurpose::screen_device;
  o.device = 1;
  o.max_executions = 11;
  TrainingResult r = train(devs, std::ref(m), o);
  EXPECT_EQ(r.best, [] {
    Config c = Config::single(1, 2);
    c.overlap = 3;
    return c;
  }());
  std::set<unsigned> levels;
  for (const auto& p : r.points) {
    EXPECT_EQ(p.config.shares, Config::single(1, 2).shares) << p.config.str();
    levels.insert(p.config.overlap);
  }
  EXPECT_EQ(levels, (std::set<unsigned>{1, 2, 3, 4}));
  EXPECT_LE(r.executions, 11u);
  o.device = 0;
  Model cpu = m;
  r = train(devs, std::ref(cpu), o);
  EXPECT_EQ(r.best.shares, Config::single(0, 2).shares);
  EXPECT_EQ(r.best.fission, "L2") << r.best.str();
  o.device = 2;
  EXPECT_THROW(train(devs, std::ref(cpu), o), Error);
}

// A device alone is one plan whatever the levels of the devices it leaves idle: training measures
// the CPU alone under one name (overlap 1) and the GPU alone under one (fission none), so the
// trained plan where the CPU alone is fastest is the CPU alone at overlap 1, which runs as a run
// pinned to the CPU does, not "the CPU alone at overlap 2", the luckiest of its names.
TEST(TrainObjective, ADeviceAloneIsMeasuredUnderOneName) {
  auto devs = cpu_gpu();
  Model m{{0.2, 1.0}, {0.1, 1000.0}};  // the CPU alone: 200 ms; hybrid loses to the GPU's fixed cost
  m.noise = 0.3;
  for (Strategy s : {Strategy::even_split, Strategy::cpu_assisted, Strategy::model}) {
    TrainingOptions o;
    o.strategy = s;
    o.max_executions = 60;
    const auto r = train(devs, std::ref(m), o);
    for (const auto& p : r.points) {
      if (p.config.shares[1] <= 0) EXPECT_EQ(p.config.overlap, 1u) << p.config.str();
      if (p.config.shares[0] <= 0) EXPECT_EQ(p.config.fission, "none") << p.config.str();
    }
    EXPECT_EQ(r.best.shares, (std::vector<double>{1.0, 0.0})) << to_string(s) << ": " << r.best.str();
    EXPECT_EQ(r.best.overlap, 1u) << r.best.str();
  }
}

// The first run of every plan costs more than its later ones (device buffers allocated at new
// sizes, kernels built for them): a device alone, measured once, must not carry that cost
// against splits whose medians leave it out (docs/decisions/042). The GPU alone is fastest here;
// the untimed runs are not the caller's to record.
TEST(TrainObjective, ADeviceAloneIsNotJudgedByItsFirstRun) {
  const auto devs = cpu_gpu();
  for (Strategy s : {Strategy::even_split, Strategy::cpu_assisted}) {
    // The GPU alone 0.9-1.1 ms by its overlap level; a split at least the CPU's start-up, 1.2 ms,
    // less than the GPU alone's first run.
    Model m{{0.002, 0.0008}, {1.2, 0.3}};
    std::set<std::string> seen;
    std::size_t timed = 0, untimed = 0;
    auto first_run_costs = [&](const Config& c, bool is_timed) {
      (is_timed ? timed : untimed)++;
      Measurement r = m(c);
      if (seen.insert(c.str()).second) r.time_ms += 1.5;  // the plan's first run
      return r;
    };
    const Measure measured = [&](const Config& c) { return first_run_costs(c, true); };
    const Measure warm = [&](const Config& c) { return first_run_costs(c, false); };
    const TrainingResult r = train(devs, measured, with(s), {}, {}, warm);
    EXPECT_EQ(r.best.shares, (std::vector<double>{0.0, 1.0})) << to_string(s) << ": " << r.best.str();
    EXPECT_GT(untimed, 0u);
    EXPECT_EQ(timed + untimed, r.executions);
  }
}

// One noisy run must not cost the device that is best alone: a device alone is bounded by its own
// times in the splits (its time at share s over s), and a run far above that is measured again
// (docs/decisions/043).
TEST(TrainObjective, ADeviceAloneTimedAgainstTheSplitsEvidenceIsMeasuredAgain) {
  auto devs = cpu_gpu();
  devs[0].fission_configs.resize(1);  // the CPU alone is one plan: no other fission stands in for it
  // Each strategy's training, and a derived plan's check (docs/decisions/043: a check's one slow
  // run of a device alone kept a split).
  Config derived;
  derived.shares = {0.9, 0.1};
  for (int flow = 0; flow < 3; ++flow) {
    const Strategy s = flow == 1 ? Strategy::cpu_assisted : Strategy::even_split;
    const TrainingOptions o =
        flow == 2 ? screen_options(with(s), *TrainingSettings{}.with_defaults().derive_executions) : with(s);
    Model m{{0.0014, 0.006}, {0.05, 1.6}};  // the CPU alone 1.45 ms; a GPU share costs 1.6 ms at least
    m.overlap_b = {1, 1, 1, 1};
    // The CPU alone's first timed runs, in a row, 3x (a burst of noise); its runs after another
    // plan ran as they are.
    int phase = 0;  // 0: not run yet, 1: in its first runs, 2: after them
    bool struck = false;
    auto noisy = [&](const Config& c) {
      Measurement r = m(c);
      const bool cpu_alone = c.shares[1] == 0;
      if (phase == 1 && !cpu_alone) phase = 2;
      if (phase == 0 && cpu_alone) phase = 1;
      if (phase == 1) {
        struck = true;
        r.time_ms *= 3;
        r.device_ms[0] *= 3;
      }
      return r;
    };
    const Measure measured = noisy;
    const Measure warm = [&](const Config& c) { return m(c); };
    const TrainingResult r = train(devs, measured, o, {}, flow == 2 ? std::optional(derived) : std::nullopt, warm);
    EXPECT_TRUE(struck);
    EXPECT_EQ(r.best.shares, (std::vector<double>{1.0, 0.0})) << "flow " << flow << ": " << r.best.str();
  }
}

// The suspect measured again is not replaced by a slower run: the faster of the two stands
// (docs/decisions/043; here the CPU alone 1.42 ms, suspected, 1.96 once more, every split 1.78).
TEST(TrainObjective, ASuspectDeviceAloneKeepsItsFasterRun) {
  auto devs = cpu_gpu();
  devs[0].fission_configs.resize(1);
  std::size_t cpu_alone = 0;
  auto measure = [&](const Config& c) {
    Measurement m;
    if (c.shares[0] >= 1) {  // the CPU alone: its untimed first run, 1.42, then 1.96 every time
      const double t = cpu_alone++ == 1 ? 1.42 : 1.96;
      m.device_ms = {t, 0};
    } else if (c.shares[1] >= 1) {
      m.device_ms = {0, 4.0};
    } else {  // every split 1.78, the CPU's part fast (its time at its share bounds it alone)
      m.device_ms = {1.0 * c.shares[0], 1.78};
    }
    m.time_ms = std::max(m.device_ms[0], m.device_ms[1]);
    return m;
  };
  const TrainingResult r = train(devs, measure, with(Strategy::even_split));
  EXPECT_EQ(r.best.shares, (std::vector<double>{1.0, 0.0})) << r.best.str();
  EXPECT_GE(cpu_alone, 3u);  // measured again
}

TEST(TrainObjective, TheGpuAlonesOverlapLevelIsChosenThroughNoise) {
  // A measured case as a synthetic model (docs/decisions/051): the GPU alone 0.75 ms at overlap
  // 2 and 3, 1.01 at overlap 4 and 0.98 at overlap 1, and any CPU share costs more than the GPU's
  // whole run. With +-30% noise on every run (one run a point: the noise is the search's own),
  // training keeps the GPU alone at overlap 2 or 3 in most seeds; the record gives the counts.
  const auto devs = cpu_gpu();
  std::size_t right = 0;
  const std::size_t seeds = 200;
  for (unsigned seed = 1; seed <= seeds; ++seed) {
    Model m{{2.4, 0.3}, {400.0, 0.0}};
    m.overlap_a = {1.3, 1.0, 1.0, 1.35};
    m.overlap_b = {1, 1, 1, 1};
    m.noise = 0.3;
    m.rng.seed(seed);
    const TrainingResult r = train(devs, std::ref(m), with(Strategy::even_split));
    if (r.best.shares[1] == 1.0 && (r.best.overlap == 2 || r.best.overlap == 3)) ++right;
  }
  std::printf("the GPU alone at overlap 2 or 3 kept in %zu of %zu seeds\n", right, seeds);
  EXPECT_GE(right, seeds * 85 / 100);
}
