// Trainers as plug-ins: the registry by name, a throwaway trainer registered only in this test
// binary (a trainer is new files plus one registration), the shared suite every registered
// trainer passes, the training ledger's budget (reservations, a spent budget ends a phase and says
// so once) and the tuning's defaults.
#include "schedule/train_ledger.hpp"
#include "schedule/train_search.hpp"
#include "schedule/trainer.hpp"
#include "unit/synthetic_devices.hpp"

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

using namespace sinew;
using namespace sinew::detail;
using namespace sinew::testing;

namespace {

// The throwaway trainer: the even split at the start's levels and each device alone, the fastest
// kept. Its class and its one registration line are all it takes; the flows of a derived plan's
// check, level 2 and a pinned device's screening come with SearchTrainer.
class EvenOnlyTrainer final : public SearchTrainer {
 public:
  std::string_view name() const override { return "even_only"; }
  Config distribute(PlanSearch& s, const Config& at) const override {
    Config c = at;
    c.shares = s.even_shares();
    s.measure(c);
    return c;
  }
  void train_plan(PlanSearch& s, const Config& base, std::size_t reserved) const override {
    s.ledger().phase(reserved, [&] {
      distribute(s, base);
      if (!s.stopped()) s.each_group_alone(base);
    });
  }
};

const bool kEvenOnlyRegistered = (register_trainer(std::make_unique<EvenOnlyTrainer>()), true);

// A trainer that only has a name (for the registry's refusals).
class NamedTrainer final : public Trainer {
 public:
  explicit NamedTrainer(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  TrainingResult train(const TrainingRequest&) const override { return {}; }

 private:
  std::string name_;
};

// Runs a registered trainer by name on `devices` through `measure`.
TrainingResult run_trainer(std::string_view name, const std::vector<DeviceInfo>& devices, const Measure& measure,
                           const TrainingOptions& options, const std::optional<Config>& start = {},
                           const std::vector<std::size_t>& levels = {}) {
  const Progress progress;
  const TrainingRequest request{.devices = devices, .measure = measure, .untimed = measure, .options = options,
                                .progress = progress, .start = start, .levels = levels};
  return find_trainer(name).train(request);
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Trainers, EveryStrategyNamesARegisteredTrainer) {
  ASSERT_TRUE(kEvenOnlyRegistered);
  for (Strategy s : {Strategy::even_split, Strategy::cpu_assisted, Strategy::model}) {
    TrainingOptions o;
    o.strategy = s;
    EXPECT_EQ(find_trainer(to_string(s)).name(), to_string(s));
    EXPECT_EQ(trainer_for(o).name(), to_string(s));
  }
  const auto names = trainer_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* name : {"cpu_assisted", "dc_model", "even_only", "even_split", "model"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(Trainers, AnUnknownNameIsAnErrorListingTheRegisteredOnes) {
  const std::string message = error_message([] { find_trainer("gradient_descent"); });
  EXPECT_NE(message.find("'gradient_descent'"), std::string::npos) << message;
  for (const auto& name : trainer_names()) EXPECT_NE(message.find(name), std::string::npos) << name << ": " << message;
  EXPECT_THROW(find_trainer(""), Error);
}

TEST(Trainers, ADuplicateRegistrationIsRefused) {
  const auto before = trainer_names();
  const std::string message = error_message([] { register_trainer(std::make_unique<NamedTrainer>("even_split")); });
  EXPECT_NE(message.find("'even_split'"), std::string::npos) << message;
  EXPECT_EQ(trainer_names(), before);
  // The registered one is still the one that trains.
  Model m{{1.0, 0.3}, {0.5, 2.0}};
  EXPECT_EQ(run_trainer("even_split", cpu_gpu(), std::ref(m), TrainingOptions{}).strategy, "even_split");
}

TEST(Trainers, ATreesTrainerServesAllButOneDevicesScreening) {
  TrainingOptions o;
  o.strategy = Strategy::model;
  EXPECT_EQ(trainer_for(o, "dc_model").name(), "dc_model");
  EXPECT_EQ(trainer_for(screen_options(o, 8), "dc_model").name(), "dc_model");
  EXPECT_EQ(trainer_for(one_device_options(o, cpu_gpu(), 1), "dc_model").name(), "model");
  EXPECT_EQ(trainer_for(o, "").name(), "model");
  EXPECT_THROW(trainer_for(o, "no_such_trainer"), Error);
}

TEST(Trainers, AThrowawayTrainerIsNewFilesAndOneRegistration) {
  const auto devs = cpu_gpu();
  // The GPU alone is fastest (a CPU 100x slower with a large start-up cost).
  Model m{{30.0, 0.3}, {40.0, 1.0}};
  m.noise = 0;
  // The shared flows as they are without a probe and with every plan run (the CPU alone, 100x the
  // GPU alone, is otherwise never run: TrainProbe.*).
  TrainingOptions every_plan;
  every_plan.tuning.probe_share = 0;
  every_plan.tuning.slow_plan_factor = 0;
  const TrainingResult r = run_trainer("even_only", devs, std::ref(m), every_plan);
  EXPECT_EQ(r.strategy, "even_only");
  EXPECT_EQ(r.best.shares, Config::single(1, 2).shares) << r.best.str();
  EXPECT_EQ(r.executions, m.calls);
  // The even split, then each device alone (each with an untimed first run), then the shared
  // finish: the two leaders once more each and a suspect device alone measured again.
  ASSERT_GE(r.points.size(), 3u);
  EXPECT_EQ(r.points[0].config.shares, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(r.points[1].config.shares, Config::single(0, 2).shares);
  EXPECT_EQ(r.points[2].config.shares, Config::single(1, 2).shares);
  // The other purposes' flows come with it: a derived plan's check of the even split screens its
  // overlap levels and keeps the GPU alone at its best one.
  Model check{{30.0, 0.3}, {40.0, 1.0}};
  Config derived;
  derived.shares = {0.5, 0.5};
  TrainingOptions o = screen_options(TrainingOptions{}, 16);
  const TrainingResult checked = run_trainer("even_only", devs, std::ref(check), o, derived);
  EXPECT_EQ(checked.best.shares, Config::single(1, 2).shares) << checked.best.str();
  EXPECT_LE(checked.executions, 16u);
}

// The suite a registered trainer passes before it counts: on a machine where a split wins and on
// one where a device alone does, for a training and a derived plan's check, every execution is
// the caller's measure's, within the trainer's budget, and the plan returned is the fastest
// measured (within the tie rules' margin: twice the precision).
TEST(Trainers, EveryRegisteredTrainerReturnsTheFastestPlanItMeasured) {
  const auto devs = cpu_gpu();
  const std::vector<std::size_t> levels = {64, 32, 16, 8, 4, 2, 1};  // a divide-and-conquer tree's
  for (const auto& name : trainer_names()) {
    for (const bool split_wins : {true, false}) {
      for (const bool checking : {false, true}) {
        Model m = split_wins ? Model{{1.0, 0.3}, {0.5, 2.0}} : Model{{30.0, 0.3}, {40.0, 1.0}};
        const TrainingOptions o = checking ? screen_options(TrainingOptions{}, 24) : TrainingOptions{};
        Config start;
        start.shares = {0.3, 0.7};
        const TrainingResult r = run_trainer(name, devs, std::ref(m), o, start, levels);
        const std::string where = name + (split_wins ? ", a split wins" : ", the GPU alone wins") +
                                  (checking ? ", a check" : ", a training") + ": " + r.best.str();
        EXPECT_EQ(r.strategy, name) << where;
        EXPECT_EQ(r.executions, m.calls) << where;
        EXPECT_LE(r.executions, find_trainer(name).executions(o)) << where;
        ASSERT_FALSE(r.points.empty()) << where;
        EXPECT_TRUE(std::any_of(r.points.begin(), r.points.end(), [&](const auto& p) { return p.config == r.best; }))
            << where;
        for (const auto& p : r.points)
          EXPECT_GE(p.time_ms * (1 + 2 * o.precision), r.time_ms * (1 - m.noise)) << where << " vs " << p.config.str();
      }
    }
  }
}

// ----- The ledger: one training's budget and points ---------------------------------------------

namespace {

TrainingPoint point_of(double share, double ms) {
  Config c;
  c.shares = {share, 1 - share};
  return TrainingPoint{c, ms, {ms, ms}};
}

}  // namespace

TEST(TrainingLedger, APhaseKeepsItsReservationForThePhasesAfterIt) {
  TrainingLedger ledger(10, {});
  EXPECT_TRUE(ledger.take(1));  // the first point, whatever the budget
  ledger.add(point_of(0.5, 1.0));
  ledger.phase(4, [&] {
    EXPECT_EQ(ledger.limit(), 6u);
    EXPECT_TRUE(ledger.affords(5));
    EXPECT_FALSE(ledger.affords(6));
    EXPECT_TRUE(ledger.take(3));
    EXPECT_FALSE(ledger.take(3));  // 7 of 6: the phase is over ...
    EXPECT_TRUE(ledger.phase_over());
    EXPECT_FALSE(ledger.take(1));  // ... and a take that would fit is refused too
    EXPECT_EQ(ledger.spent(), 4u);
  });
  // The reservation is the next phase's, and it may nest.
  EXPECT_EQ(ledger.limit(), 10u);
  EXPECT_FALSE(ledger.phase_over());
  ledger.phase(2, [&] {
    ledger.phase(1, [&] { EXPECT_EQ(ledger.limit(), 7u); });
    EXPECT_EQ(ledger.limit(), 8u);
    EXPECT_TRUE(ledger.take(4));
  });
  ledger.phase(0, [&] { EXPECT_TRUE(ledger.take(2)); });
  EXPECT_EQ(ledger.spent(), 10u);
  EXPECT_FALSE(ledger.affords(1));
}

TEST(TrainingLedger, ASpentBudgetEndsAPhaseAndSaysSoOnce) {
  std::vector<std::string> lines;
  TrainingLedger ledger(3, [&](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(ledger.take(2));
  ledger.add(point_of(0.5, 1.0));
  int steps_after_refusal = 0;
  ledger.phase(0, [&] {
    if (!ledger.take(2)) return;
    ++steps_after_refusal;
  });
  EXPECT_EQ(steps_after_refusal, 0);
  EXPECT_TRUE(ledger.stopped());
  ledger.phase(0, [&] { EXPECT_FALSE(ledger.take(2)); });  // a second phase ends the same way
  ledger.phase(0, [&] { EXPECT_TRUE(ledger.take(1)); });   // one that fits does not
  const auto said = std::count_if(lines.begin(), lines.end(), [](const auto& l) { return l.find("stopped") == 0; });
  EXPECT_EQ(said, 1) << lines.size();
  EXPECT_NE(lines.front().find("budget of 3 executions"), std::string::npos) << lines.front();
}

TEST(TrainingLedger, KeepsEveryPointAndRanksByMedian) {
  TrainingLedger ledger(100, {});
  ledger.add(point_of(0.5, 3.0));
  ledger.add(point_of(0.2, 2.0));
  ledger.add(point_of(0.5, 1.0));
  ledger.add(point_of(0.5, 1.5));
  EXPECT_EQ(ledger.fastest().time_ms, 1.0);
  const auto ranked = ledger.ranked();
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].second, 1.5);  // 0.5's median of 3, 1, 1.5
  EXPECT_EQ(ranked[1].second, 2.0);
  EXPECT_TRUE(ledger.measured(point_of(0.2, 0).config));
  EXPECT_FALSE(ledger.measured(point_of(0.3, 0).config));
  ledger.keep_only(point_of(0.5, 0).config, ledger.points()[2]);
  ASSERT_EQ(ledger.points().size(), 2u);
  EXPECT_EQ(ledger.points().back().time_ms, 1.0);
  EXPECT_EQ(ledger.find(point_of(0.5, 0).config)->time_ms, 1.0);
}

// A plan's first run beyond its second is counted as builds (a driver that compiles a kernel at
// its first launch of a work-group shape compiles inside that run, docs/decisions/158): the time
// budget's clock leaves it out, as it leaves out the programs' builds; a first run no slower than
// the second counts nothing, and a plan's later runs change nothing.
TEST(TrainingLedger, APlansFirstRunBeyondItsSecondCountsAsBuilds) {
  TrainingLedger ledger(100, {});
  std::vector<Measurement> runs = {{.time_ms = 100, .build_ms = 10}, {.time_ms = 30}, {.time_ms = 5}};
  std::size_t next = 0;
  const Measure measure = [&](const Config&) { return runs.at(next++); };
  const Config plan = point_of(0.5, 0).config;
  ledger.run(measure, plan);
  EXPECT_DOUBLE_EQ(ledger.first_run_seconds(), 0.0);  // nothing to compare it with yet
  ledger.run(measure, plan);
  EXPECT_NEAR(ledger.first_run_seconds(), (100 - 10 - 30) / 1000.0, 1e-12);
  ledger.run(measure, plan);  // a third run is no first run's
  EXPECT_NEAR(ledger.first_run_seconds(), 0.060, 1e-12);
  EXPECT_NEAR(ledger.build_seconds(), 0.010 + 0.060, 1e-12);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a clock past the builds
  const double clock = ledger.budget_clock();  // read first: the wall time goes on
  EXPECT_GT(clock, 0.0);
  EXPECT_LE(clock, ledger.seconds() - 0.07 + 1e-9);
  // Another plan whose first run was the faster: nothing.
  runs = {{.time_ms = 20}, {.time_ms = 25}};
  next = 0;
  ledger.run(measure, point_of(0.25, 0).config);
  ledger.run(measure, point_of(0.25, 0).config);
  EXPECT_NEAR(ledger.first_run_seconds(), 0.060, 1e-12);
  // What a result carries, and a ledger going on from it keeps.
  TrainingResult r;
  ledger.into(r);
  EXPECT_NEAR(r.build_seconds, 0.070, 1e-12);
  EXPECT_NEAR(r.first_run_seconds, 0.060, 1e-12);
  const TrainingLedger resumed(r, 100, {}, {});
  EXPECT_NEAR(resumed.build_seconds(), 0.070, 1e-12);
  EXPECT_GE(resumed.seconds(), r.seconds);
}

// The tuned values' defaults: a change is a decision (docs/decisions/040-051, 110-113), made here too.
TEST(TrainingTuning, Defaults) {
  const TrainingTuning t;
  EXPECT_EQ(t.model_executions, 10u);
  EXPECT_EQ(t.model_first_fit_executions, 4u);
  EXPECT_EQ(t.model_margin_precisions, 2.0);
  EXPECT_EQ(t.model_rebalanced_move, 0.2);
  EXPECT_EQ(t.finalists, 2u);
  EXPECT_EQ(t.alone_again_runs, 2u);
  EXPECT_EQ(t.suspect_precisions, 2.0);
  EXPECT_EQ(t.even_split_steps, 8u);
  EXPECT_EQ(t.assist_first_step, 0.1);
  EXPECT_EQ(t.idle_group_share, 0.05);
  EXPECT_EQ(t.start_overlap, 2u);
  EXPECT_EQ(t.crossover_share_move, 0.25);
  EXPECT_EQ(t.budget_best_plan_times, 50.0);      // docs/decisions/110
  EXPECT_EQ(t.probe_share, 1.0 / 64);            // docs/decisions/111
  EXPECT_EQ(t.slow_plan_factor, 3.0);            // docs/decisions/112
  EXPECT_EQ(t.extrapolation_limit, 4.0);         // docs/decisions/113
  EXPECT_EQ(t.level_speedup_limit, 3.0);         // docs/decisions/173
  EXPECT_EQ(TrainingOptions{}.time_budget_s, 2.0);  // TrainingSettings::time_budget_s
  // TrainingOptions carries them, and the model strategy's budget is the tuning's.
  TrainingOptions o;
  o.strategy = Strategy::model;
  o.tuning.model_executions = 6;
  EXPECT_EQ(execution_budget(o), 6u);
  o.exhaustive = true;
  EXPECT_EQ(execution_budget(o), o.max_executions);
}
