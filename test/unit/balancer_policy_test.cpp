// The online balancer as a plug-in: the registry (the library's balancers by name, an unknown
// name refused with the registered ones listed, a name registered twice refused), a balancer
// added by this test binary alone with one registration (a new balancer is new files plus one
// line), and the two-level balancer's tuning: its defaults pinned, reachable from RuntimeOptions,
// checked, and used.
#include "schedule/balancer_registry.hpp"
#include "schedule/balancer_two_level.hpp"

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace sinew;
using namespace sinew::detail;

namespace {

// A policy that never moves: the plan it starts from runs for good. Only this file knows it.
class NeverMoves final : public OnlineBalancer {
 public:
  explicit NeverMoves(Config start) : config_(std::move(start)) {}
  const Config& config() const override { return config_; }
  std::size_t executions() const override { return executions_; }
  BalanceStep observe(const std::vector<double>& device_ms, const Retrain&) override {
    return {.execution = ++executions_, .deviation = deviation(config_, device_ms)};
  }

 private:
  Config config_;
  std::size_t executions_ = 0;
};

// The one registration line.
const BalancerRegistration never_moves{"test_never_moves", [](const auto&, const Config& start, const auto&) {
                                         return std::make_unique<NeverMoves>(start);
                                       }};

std::vector<DeviceInfo> cpu_and_gpu() {
  std::vector<DeviceInfo> d(2);
  d[0].index = 0, d[0].kind = DeviceKind::cpu;
  d[1].index = 1, d[1].kind = DeviceKind::gpu, d[1].discrete = true, d[1].overlap_levels = {1, 2, 3, 4};
  return d;
}

Config split(double cpu) {
  Config c;
  c.shares = {cpu, 1 - cpu};
  c.fission = "none";
  c.overlap = 2;
  return c;
}

BalancerSettings with_policy(const std::string& name) {
  BalancerSettings s;
  s.policy = name;
  return s;
}

// Times of a CPU 4x slower per unit than the GPU: a 50/50 plan is far from balanced.
std::vector<double> lopsided_times(const Config& c) { return {40 * c.shares[0] + 0.1, 10 * c.shares[1] + 0.1}; }

}  // namespace

TEST(BalancerRegistry, TheTwoLevelBalancerIsTheDefault) {
  const auto names = balancer_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "two_level"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const auto b = make_balancer(cpu_and_gpu(), split(0.5), {});
  EXPECT_NE(dynamic_cast<const TwoLevelBalancer*>(b.get()), nullptr);
  EXPECT_EQ(b->config(), split(0.5));
  EXPECT_NE(
      dynamic_cast<const TwoLevelBalancer*>(make_balancer(cpu_and_gpu(), split(0.5), with_policy("two_level")).get()),
      nullptr);
}

TEST(BalancerRegistry, AnUnknownNameListsTheRegisteredOnes) {
  try {
    make_balancer(cpu_and_gpu(), split(0.5), with_policy("no_such_balancer"));
    FAIL() << "an unknown balancer was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(e.message().find("no_such_balancer"), std::string::npos) << e.what();
    EXPECT_EQ(e.argument(), "BalancerSettings::policy");
    EXPECT_NE(e.context().fix.find("two_level"), std::string::npos) << e.what();
    EXPECT_NE(e.context().fix.find("test_never_moves"), std::string::npos) << e.what();
  }
}

TEST(BalancerRegistry, AnUnknownNameIsRefusedBeforeAnyBalancerIsMade) {
  EXPECT_NO_THROW(require_balancer("two_level"));
  EXPECT_NO_THROW(require_balancer("test_never_moves"));
  EXPECT_THROW(require_balancer("no_such_balancer"), Error);
}

TEST(BalancerRegistry, ANameIsRegisteredOnce) {
  auto make = [](const auto&, const Config& start, const auto&) { return std::make_unique<NeverMoves>(start); };
  EXPECT_THROW(register_balancer("two_level", make), Error);
  EXPECT_THROW(register_balancer("test_never_moves", make), Error);
  EXPECT_THROW(register_balancer("", make), Error);
  EXPECT_THROW(register_balancer("test_without_factory", {}), Error);
  // The refused registrations left the registry as it was.
  const auto names = balancer_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "two_level"), 1);
  EXPECT_EQ(std::find(names.begin(), names.end(), "test_without_factory"), names.end());
}

TEST(BalancerRegistry, ABalancerRegisteredByATestIsMadeByName) {
  const auto names = balancer_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "test_never_moves"), names.end());
  const auto b = make_balancer(cpu_and_gpu(), split(0.5), with_policy("test_never_moves"));
  for (int i = 0; i < 50; ++i) {
    const BalanceStep step = b->observe(lopsided_times(b->config()), {});
    EXPECT_FALSE(step.event) << i;
    EXPECT_NEAR(step.deviation, 1 - 5.1 / 20.1, 1e-12);
  }
  EXPECT_EQ(b->executions(), 50u);
  EXPECT_EQ(b->config(), split(0.5));
  // The same runs under the default balancer are moved.
  const auto moving = make_balancer(cpu_and_gpu(), split(0.5), {});
  bool moved = false;
  for (int i = 0; i < 50 && !moved; ++i)
    moved = moving->observe(lopsided_times(moving->config()), {}).event.has_value();
  EXPECT_TRUE(moved);
}

TEST(BalancerTuning, DefaultsAreTheMeasuredOnes) {
  const BalancerTuning t;
  EXPECT_EQ(t.watch.regime_runs, 48u);
  EXPECT_EQ(t.watch.noise_runs, 64u);
  EXPECT_EQ(t.watch.unknown_noise, 0.3);
  EXPECT_EQ(t.watch.unknown_noise_weight, 8);
  EXPECT_EQ(t.watch.least_noise, 0.01);
  EXPECT_EQ(t.watch.spread_runs, 24u);
  EXPECT_EQ(t.watch.centre_efficiency, 1.25);
  EXPECT_EQ(t.watch.first_run_within, 2);
  EXPECT_EQ(t.watch.fit_span, 0.05);
  EXPECT_EQ(t.watch.fit_slope_within, 0.1);
  EXPECT_EQ(t.watch.fitted_fixed_at_most, 0.9);
  EXPECT_EQ(t.watch.carried_fixed_at_most, 0.5);

  EXPECT_EQ(t.steps.runs, 3u);
  EXPECT_EQ(t.steps.noisy_runs, 9u);
  EXPECT_EQ(t.steps.deviations, 2.5);
  EXPECT_EQ(t.steps.chance, 1e-3);
  EXPECT_EQ(t.steps.few_runs_widening, 3);
  EXPECT_EQ(t.steps.quiet_runs, 5u);
  EXPECT_EQ(t.steps.quiet_noise, 0.15);
  EXPECT_EQ(t.steps.quiet_edge_quantile, 0.1);
  EXPECT_EQ(t.steps.recalled_runs, 4u);
  EXPECT_EQ(t.steps.onset_band_fraction, 0.5);

  EXPECT_EQ(t.regimes.kept, 3u);
  EXPECT_EQ(t.regimes.current_off_ratio, 2);
  EXPECT_EQ(t.regimes.earlier_runs_ratio, 2u);

  EXPECT_EQ(t.probes.share, 0.05);
  EXPECT_EQ(t.probes.first_wait, 32u);
  EXPECT_EQ(t.probes.last_wait, 128u);

  EXPECT_EQ(t.moves.drift_errors, 2.5);
  EXPECT_EQ(t.moves.drift_bound_fraction, 0.5);
  EXPECT_EQ(t.moves.confirm_errors, 1.0);
  EXPECT_EQ(t.moves.confirm_bound_fraction, 0.25);
  EXPECT_EQ(t.moves.must_pay, 0.03);
  EXPECT_EQ(t.moves.pay_errors, 2.0);
  EXPECT_EQ(t.moves.young_runs, 12u);
  EXPECT_EQ(t.moves.young_move, 0.05);
  EXPECT_EQ(t.moves.lopsided_within, 0.5);
  EXPECT_EQ(t.moves.lopsided_share, 0.25);
  EXPECT_EQ(t.moves.lopsided_windows, 3u);
  EXPECT_EQ(t.moves.first_backoff, 8u);
  EXPECT_EQ(t.moves.last_backoff, 512u);

  EXPECT_EQ(t.split.least_share, 0.02);
  EXPECT_EQ(t.split.grid_steps, 100);
  EXPECT_EQ(t.split.tie, 1e-3);
  EXPECT_EQ(t.split.every_set_up_to, 10u);
  EXPECT_EQ(t.split.hedged_up_to, 4u);
}

TEST(BalancerTuning, ReachesTheBalancerFromRuntimeOptions) {
  RuntimeOptions o;
  BalancerTuning t;
  t.moves.must_pay = 0.07;
  o.balancer.tuning = t;
  // Kept over what the environment gives, and through the defaults.
  const RuntimeOptions resolved = o.or_else(RuntimeOptions::from_variables({})).with_defaults();
  ASSERT_TRUE(resolved.balancer.tuning);
  EXPECT_EQ(resolved.balancer.tuning->moves.must_pay, 0.07);
  EXPECT_EQ(*resolved.balancer.policy, "two_level");
  // Unset: the defaults.
  const RuntimeOptions plain = RuntimeOptions{}.with_defaults();
  ASSERT_TRUE(plain.balancer.tuning);
  EXPECT_EQ(plain.balancer.tuning->moves.must_pay, BalancerTuning{}.moves.must_pay);
}

TEST(BalancerTuning, AValueOutOfRangeIsRefusedByName) {
  auto refused = [](auto change, const std::string& name) {
    BalancerSettings s;
    BalancerTuning t;
    change(t);
    s.tuning = t;
    try {
      s.with_defaults();
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("BalancerSettings::tuning." + name), std::string::npos) << e.what();
    }
    EXPECT_THROW(TwoLevelBalancer(cpu_and_gpu(), split(0.5), s), Error) << name;
  };
  refused([](BalancerTuning& t) { t.steps.runs = 0; }, "steps.runs");
  refused([](BalancerTuning& t) { t.steps.noisy_runs = 2; }, "steps.noisy_runs");  // below steps.runs
  refused([](BalancerTuning& t) { t.watch.unknown_noise = 0; }, "watch.unknown_noise");
  refused([](BalancerTuning& t) { t.probes.share = 0.9; }, "probes.share");
  refused([](BalancerTuning& t) { t.probes.last_wait = 4; }, "probes.last_wait");  // below first_wait
  refused([](BalancerTuning& t) { t.moves.must_pay = std::nan(""); }, "moves.must_pay");
  refused([](BalancerTuning& t) { t.split.every_set_up_to = 40; }, "split.every_set_up_to");
}

TEST(BalancerTuning, IsWhatTheBalancerUses) {
  // A balanced plan (the CPU 4x slower per unit at a fifth of the work), run 30 times: each
  // device's model is fitted over the last regime_runs runs, and its noise starts at unknown_noise.
  BalancerSettings s;
  BalancerTuning t;
  t.watch.regime_runs = 5;
  t.watch.unknown_noise = 0.5;
  s.tuning = t;
  TwoLevelBalancer tuned(cpu_and_gpu(), split(0.2), s), plain(cpu_and_gpu(), split(0.2), {});
  EXPECT_DOUBLE_EQ(tuned.noise(0), 0.5);
  EXPECT_DOUBLE_EQ(plain.noise(0), 0.3);
  for (int i = 0; i < 30; ++i) {
    EXPECT_FALSE(tuned.observe(lopsided_times(tuned.config()), {}).event);
    EXPECT_FALSE(plain.observe(lopsided_times(plain.config()), {}).event);
  }
  EXPECT_EQ(tuned.rate(0).runs, 5u);
  EXPECT_EQ(plain.rate(0).runs, 30u);
}
