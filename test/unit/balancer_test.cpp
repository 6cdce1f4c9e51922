// The online balancer against synthetic device models: time_d = (a_d * share_d * N + b_d) * noise,
// with steps in a device's speed (load arriving and leaving), single spikes, and models level 1
// cannot balance.
#include "schedule/balancer.hpp"
#include "schedule/train.hpp"

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <iostream>
#include <random>

using namespace sinew;
using namespace sinew::detail;

namespace {

std::vector<DeviceInfo> devices(std::vector<DeviceKind> kinds) {
  std::vector<DeviceInfo> d(kinds.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    d[i].index = i;
    d[i].kind = kinds[i];
    d[i].discrete = kinds[i] == DeviceKind::gpu;
    if (d[i].discrete) d[i].overlap_levels = {1, 2, 3, 4};
  }
  return d;
}

struct Model {
  std::vector<double> a, b;
  double n = 1000;
  double noise = 0.0;          // uniform in [-noise, noise], relative
  std::vector<double> slow;    // per-device factor on a (1: unloaded)
  std::mt19937 rng{11};

  std::vector<double> times(const Config& c) {
    std::uniform_real_distribution<double> u(-noise, noise);
    std::vector<double> t(c.shares.size(), 0.0);
    for (std::size_t d = 0; d < t.size(); ++d)
      if (c.shares[d] > 0) t[d] = (a[d] * factor(d) * c.shares[d] * n + b[d]) * (1 + u(rng));
    return t;
  }
  double factor(std::size_t d) const { return slow.empty() ? 1.0 : slow[d]; }
  // The CPU share (device 0 of two) at which both finish together, without noise.
  double balanced_cpu_share() const {
    const double a0 = a[0] * factor(0) * n, a1 = a[1] * factor(1) * n;
    return (a1 + b[1] - b[0]) / (a0 + a1);
  }
};

Config two_way(double cpu) {
  Config c;
  c.shares = {cpu, 1 - cpu};
  c.fission = "none";
  c.overlap = 2;
  return c;
}

struct Trace {
  std::vector<BalanceStep> steps;
  std::size_t events(int level) const {
    std::size_t n = 0;
    for (const auto& s : steps) n += s.event && s.event->level == level;
    return n;
  }
  std::size_t events() const { return events(1) + events(2); }
};

// Runs `runs` executions; `before(i)` may change the model before run i (0-based).
template <class F>
Trace drive(Balancer& b, Model& m, std::size_t runs, F before, const Retrain& retrain = {}) {
  Trace t;
  for (std::size_t i = 0; i < runs; ++i) {
    before(i);
    t.steps.push_back(b.observe(m.times(b.config()), retrain));
  }
  return t;
}

// Executions from `from` (0-based run index) until the plan is balanced for good: up to and
// including the first balanced run after the last unbalanced one (within `horizon` runs).
std::size_t runs_to_balance(const Trace& t, std::size_t from, std::size_t horizon = 40) {
  std::size_t last = SIZE_MAX;
  for (std::size_t i = from; i < t.steps.size() && i < from + horizon; ++i)
    if (t.steps[i].unbalanced) last = i;
  return last == SIZE_MAX ? 1 : last - from + 2;
}

}  // namespace

TEST(Balancer, DeviationAndLbtFollowTheSpecFormula) {
  BalancerSettings s;
  s.weight = 0.5;
  s.trigger = 0.9;
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(0.5), s);
  EXPECT_DOUBLE_EQ(Balancer::deviation(two_way(0.5), {8, 10}), 0.2);
  EXPECT_DOUBLE_EQ(Balancer::deviation(two_way(1.0), {8, 0}), 0.0);  // one active device: nothing to compare
  auto st = b.observe({10, 8}, {});
  EXPECT_TRUE(st.unbalanced);
  EXPECT_DOUBLE_EQ(st.lbt, 0.5);
  st = b.observe({10, 8}, {});
  EXPECT_DOUBLE_EQ(st.lbt, 0.75);
  // Runs are judged on the median of the last three: one balanced run does not outvote two.
  st = b.observe({10, 10}, {});
  EXPECT_TRUE(st.unbalanced);
  EXPECT_DOUBLE_EQ(st.lbt, 0.875);
  EXPECT_FALSE(st.event);
  EXPECT_EQ(st.execution, 3u);
  st = b.observe({10, 9.5}, {});  // within 88%, and now the median is too
  EXPECT_FALSE(st.unbalanced);
  EXPECT_DOUBLE_EQ(st.lbt, 0.4375);
  EXPECT_EQ(st.execution, 4u);
}

class BalancerStep : public ::testing::TestWithParam<std::pair<double, double>> {};

// Fixed costs (b) small and large beside the work: rates measured from share/time are exact for
// the first and biased for the second, which level 1 then corrects over a few moves.
INSTANTIATE_TEST_SUITE_P(FixedCosts, BalancerStep,
                         ::testing::Values(std::pair{0.5, 1.5}, std::pair{60.0, 120.0}));

TEST_P(BalancerStep, StepInCpuSpeedIsCorrectedWithinEightExecutionsEachWay) {
  Model m{{1.0, 0.4}, {GetParam().first, GetParam().second}};
  m.noise = 0.02;
  m.slow = {1, 1};
  const double start = m.balanced_cpu_share();
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(start), {});
  const std::size_t load_on = 50, load_off = 150;
  Trace t = drive(b, m, 250, [&](std::size_t i) {
    if (i == load_on) m.slow[0] = 2.0;  // the CPU runs at half speed
    if (i == load_off) m.slow[0] = 1.0;
  });
  for (std::size_t i = 0; i < load_on; ++i) EXPECT_FALSE(t.steps[i].event) << "run " << i;
  const std::size_t on = runs_to_balance(t, load_on);
  // The step's first run is unbalanced; count from it to the first balanced run.
  EXPECT_LE(on, 8u) << "after the load arrived";
  // Then it stays balanced: the plan moved work to the GPU.
  for (std::size_t i = load_on + on; i < load_off; ++i) EXPECT_FALSE(t.steps[i].unbalanced) << "run " << i;
  const std::size_t off = runs_to_balance(t, load_off);
  EXPECT_LE(off, 8u) << "after the load left";
  for (std::size_t i = load_off + off; i < t.steps.size(); ++i) EXPECT_FALSE(t.steps[i].unbalanced) << "run " << i;
  EXPECT_NEAR(b.config().shares[0], start, 0.06) << b.config().str();
  std::cout << "executions to balance: " << on << " after the load arrived, " << off << " after it left; "
            << t.events(1) << " level-1 moves\n";
  EXPECT_EQ(t.events(2), 0u) << "level 1 suffices for a proportional model";
}

TEST(Balancer, SharesDuringTheLoadFollowTheSlowerCpu) {
  Model m{{1.0, 0.4}, {0.5, 1.5}};
  m.slow = {1, 1};
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(m.balanced_cpu_share()), {});
  drive(b, m, 40, [&](std::size_t i) {
    if (i == 5) m.slow[0] = 2.0;
  });
  EXPECT_NEAR(b.config().shares[0], m.balanced_cpu_share(), 0.04) << b.config().str();
}

TEST(Balancer, FivePercentNoiseForFiveHundredExecutionsMovesNothing) {
  Model m{{1.0, 0.4}, {0.5, 1.5}};
  m.noise = 0.05;
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(m.balanced_cpu_share()), {});
  const Config start = b.config();
  Trace t = drive(b, m, 500, [](std::size_t) {});
  EXPECT_EQ(t.events(), 0u);
  EXPECT_EQ(b.config(), start);
}

TEST(Balancer, SingleThreeTimesSpikeMovesNothing) {
  for (std::size_t device : {0u, 1u}) {
    Model m{{1.0, 0.4}, {0.5, 1.5}};
    m.noise = 0.02;
    m.slow = {1, 1};
    Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(m.balanced_cpu_share()), {});
    Trace t = drive(b, m, 100, [&](std::size_t i) {
      m.slow[device] = i == 30 ? 3.0 : 1.0;  // one page-fault storm
    });
    EXPECT_FALSE(t.steps[30].unbalanced) << "the median of the last three runs filters it out";
    EXPECT_EQ(t.events(), 0u) << "spike on device " << device;
  }
}

TEST(Balancer, TwoSpikesInARowMoveNothingEither) {
  Model m{{1.0, 0.4}, {0.5, 1.5}};
  m.slow = {1, 1};
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(m.balanced_cpu_share()), {});
  Trace t = drive(b, m, 60, [&](std::size_t i) { m.slow[0] = (i == 20 || i == 21) ? 3.0 : 1.0; });
  EXPECT_EQ(t.events(), 0u);
}

TEST(Balancer, LevelTwoRetrainsWhenLevelOneCannotConverge) {
  // Neither device's time depends on its share (fixed costs): moving work cannot balance them,
  // so level 1 fails and level 2 retrains at the same fission/overlap.
  Model m{{0.0, 0.0}, {300, 100}};
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  Config start = two_way(0.5);
  start.overlap = 3;
  BalancerSettings s;
  s.level1_steps = 3;
  Balancer b(devs, start, s);
  std::vector<Config> asked;
  Retrain retrain = [&](const Config& current) {
    asked.push_back(current);
    TrainingOptions o;
    o.fixed_platform = true;
    o.quality = 1;
    o.max_executions = 16;
    Measure measure = [&](const Config& c) {
      auto t = m.times(c);
      return Measurement{*std::max_element(t.begin(), t.end()), t};
    };
    return train(devs, measure, o, {}, current).best;
  };
  Trace t = drive(b, m, 20, [](std::size_t) {}, retrain);
  ASSERT_EQ(t.events(2), 1u);
  EXPECT_EQ(t.events(1), 3u) << "level 2 comes after the allowed level-1 moves";
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].overlap, 3u);
  for (const auto& st : t.steps)
    if (st.event) {
      EXPECT_EQ(st.event->after.overlap, 3u) << "the platform configuration stays";
      EXPECT_EQ(st.event->after.fission, "none");
    }
  // Training finds that the GPU alone is fastest (the CPU costs 300 whatever it does).
  EXPECT_LT(b.config().shares[0], 0.05) << b.config().str();
}

TEST(Balancer, MovesThatGoBackAndForthSettleWithoutLevelTwo) {
  // Device times that swing by +-30% run to run (a CPU device on the GPU machine): level 1 moves
  // towards the balance and then around it; once a move reverses the one before, the balance is
  // bracketed and retraining could not do better than the noise allows.
  Model m{{1.0, 0.5}, {0, 0}};
  m.noise = 0.3;
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  std::size_t retrains = 0;
  Retrain count = [&](const Config& c) {
    ++retrains;
    return c;
  };
  Balancer b(devs, two_way(0.8), {});
  Trace t = drive(b, m, 300, [](std::size_t) {}, count);
  EXPECT_EQ(retrains, 0u) << t.events(1) << " level-1 moves";
  EXPECT_GE(t.events(1), 1u);
  EXPECT_NEAR(b.config().shares[0], m.balanced_cpu_share(), 0.15) << b.config().str();
}

TEST(Balancer, AnUnbalanceablePlanIsNotRetrainedOverAndOver) {
  Model m{{0.0, 0.0}, {300, 100}};
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  std::size_t retrains = 0;
  Retrain keep = [&](const Config&) {  // a level 2 that insists on an even split
    ++retrains;
    return two_way(0.5);
  };
  Balancer b(devs, two_way(0.5), {});
  Trace t = drive(b, m, 500, [](std::size_t) {}, keep);
  EXPECT_GE(retrains, 2u);
  EXPECT_LE(retrains, 8u) << "backoff between fruitless level-2 runs";
}

TEST(Balancer, SeveralGpusShareByTheirRates) {
  Model m{{1.0, 0.3, 0.3}, {0.5, 1.0, 1.0}};
  m.slow = {1, 1, 1};
  Config c;
  c.shares = {0.2, 0.4, 0.4};
  c.overlap = 1;
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu, DeviceKind::gpu}), c, {});
  Trace t = drive(b, m, 60, [&](std::size_t i) {
    if (i == 0) m.slow[2] = 2.0;  // the second GPU is shared with someone else
  });
  EXPECT_GE(t.events(1), 1u);
  const auto& s = b.config().shares;
  EXPECT_NEAR(s[1] / s[2], 2.0, 0.25) << b.config().str();
  auto times = m.times(b.config());
  EXPECT_LT(Balancer::deviation(b.config(), times), 0.12);
}

TEST(Balancer, ASliverOfWorkIsNotWorthADevice) {
  Model m{{0.0, 0.0}, {300, 100}};  // moving work never balances these: level 1 empties the CPU
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(0.5), {});
  drive(b, m, 40, [](std::size_t) {});
  EXPECT_EQ(b.config().shares[0], 0.0) << b.config().str();
  EXPECT_EQ(b.config().shares[1], 1.0);
}

TEST(Balancer, AOneDevicePlanIsRetrainedWhenItsTimeDrifts) {
  // The plan runs the CPU alone; a load doubles its time. Nothing to balance, so the balancer
  // watches its time against the settled one and retrains (level 2) once the drift lasts.
  Model m{{1.0, 0.4}, {0.5, 1.5}};
  m.slow = {1, 1};
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  std::size_t retrains = 0;
  Retrain retrain = [&](const Config& current) {
    ++retrains;
    TrainingOptions o;
    o.fixed_platform = true;
    o.quality = 1;
    Measure measure = [&](const Config& c) {
      auto t = m.times(c);
      return Measurement{*std::max_element(t.begin(), t.end()), t};
    };
    return train(devs, measure, o, {}, current).best;
  };
  Balancer b(devs, two_way(1.0), {});
  Trace t = drive(b, m, 60, [&](std::size_t i) {
    if (i == 20) m.slow[0] = 2.0;
  }, retrain);
  for (std::size_t i = 0; i < 20; ++i) EXPECT_FALSE(t.steps[i].event) << "run " << i;
  EXPECT_EQ(t.events(2), 1u);
  EXPECT_EQ(retrains, 1u);
  EXPECT_GT(b.config().shares[1], 0.3) << "the GPU takes work: " << b.config().str();
  // Noise alone never does it.
  Model quiet{{1.0, 0.4}, {0.5, 1.5}};
  quiet.noise = 0.05;
  Balancer c(devs, two_way(1.0), {});
  EXPECT_EQ(drive(c, quiet, 500, [](std::size_t) {}, retrain).events(), 0u);
}

TEST(Balancer, AnEpisodeThatMakesThePlanSlowerIsUndone) {
  // The GPU alone is right. Its first runs are slow (a warm-up), so the time it settles at is too
  // high; the later, faster runs look like a drift and level 2 runs. Its search is misled (it
  // returns a split that is slower): the balancer compares the new plan's runs with the old
  // plan's and goes back.
  Model m{{4.0, 0.1}, {0.5, 1.0}};
  m.slow = {1, 1.6};
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  std::size_t retrains = 0;
  Retrain misled = [&](const Config&) {
    ++retrains;
    return two_way(0.2);
  };
  const Config start = two_way(0.0);
  Balancer b(devs, start, {});
  Trace t = drive(b, m, 120, [&](std::size_t i) {
    if (i == 5) m.slow[1] = 1.0;  // warmed up
  }, misled);
  ASSERT_EQ(retrains, 1u);
  ASSERT_EQ(t.events(2), 1u);
  std::size_t level2_at = 0, back_at = 0;
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    if (!t.steps[i].event) continue;
    if (t.steps[i].event->level == 2) level2_at = i;
    else if (t.steps[i].event->after == start) back_at = i;
  }
  EXPECT_GT(back_at, level2_at) << "the old plan comes back";
  EXPECT_LE(back_at - level2_at, 5u) << "after the new plan's first run and `window` judged runs";
  EXPECT_TRUE(t.steps[back_at].settled) << "the old plan is stored again";
  EXPECT_EQ(b.config(), start);
  EXPECT_EQ(t.events(), 2u) << "and it stays";
}

TEST(Balancer, AnEpisodeThatPaysIsKept) {
  // Load on the CPU: the moved plan is slower than the old plan was before the load, but faster
  // than the old plan under the load, which is what it is compared with.
  Model m{{1.0, 0.4}, {0.5, 1.5}};
  m.slow = {1, 1};
  const double start = m.balanced_cpu_share();
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(start), {});
  Trace t = drive(b, m, 80, [&](std::size_t i) {
    if (i == 10) m.slow[0] = 3.0;
  });
  EXPECT_LT(b.config().shares[0], start - 0.1) << b.config().str();
  for (const auto& st : t.steps)
    if (st.event) EXPECT_LT(st.event->after.shares[0], st.event->before.shares[0] + 1e-9) << "no move back";
}

TEST(Balancer, OnANoisyMachineEachMoveWaitsForSeveralRuns) {
  // +-30% run to run: a move made on one run follows the noise. Each plan gets a fresh run and
  // `window` judged runs before the next move; with steady times (the step test) one judged run.
  Model m{{1.0, 0.5}, {0, 0}};
  m.noise = 0.3;
  BalancerSettings s;
  Balancer b(devices({DeviceKind::cpu, DeviceKind::gpu}), two_way(0.9), s);
  Trace t = drive(b, m, 300, [](std::size_t) {}, [](const Config& c) { return c; });
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < t.steps.size(); ++i)
    if (t.steps[i].event && !(t.steps[i].event->after == t.steps[i].event->before)) at.push_back(i);
  ASSERT_GE(at.size(), 2u);
  for (std::size_t k = 1; k < at.size(); ++k) EXPECT_GE(at[k] - at[k - 1], 1u + s.with_defaults().window.value()) << "moves at " << at[k - 1] << " and " << at[k];
  EXPECT_NEAR(b.config().shares[0], m.balanced_cpu_share(), 0.12) << b.config().str();
}

TEST(Balancer, RejectsSettingsOutOfRange) {
  auto devs = devices({DeviceKind::cpu, DeviceKind::gpu});
  BalancerSettings s;
  s.weight = 0;
  try {
    Balancer(devs, two_way(0.5), s);
    FAIL() << "weight 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
  s = {};
  s.balanced_within = 1.5;
  EXPECT_THROW(Balancer(devs, two_way(0.5), s), Error);
  EXPECT_THROW(Balancer(devs, Config{{1.0}, "none", 1}, {}), Error);
}
