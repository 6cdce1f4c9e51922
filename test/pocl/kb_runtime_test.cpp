// The knowledge base behind Runtime::run: a second runtime (or process) never trains again,
// unseen inputs are derived, policies and forced training, a corrupt file never stops a run,
// every execution is kept though written in batches, and cached plans follow the knowledge base.
#include "kb/kb_test_util.hpp"
#include "pocl/trees.hpp"
#include "schedule/derive.hpp"

#include <sinew/kb.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

namespace fs = std::filesystem;
using namespace sinew;
using namespace sinew::testing;

namespace {
// A fresh directory (kbtest::TempDir) with the knowledge base's path in it.
struct TempKb {
  kbtest::TempDir dir;
  std::string path = dir.file("kb.sqlite");
};

RuntimeOptions with_kb(const std::string& path, std::optional<UnseenPolicy> unseen = {}) {
  RuntimeOptions o;
  o.kb_path = path;
  o.unseen = unseen;
  o.quiet = true;
  return o;
}
}  // namespace

TEST(KbRuntime, ASecondRuntimeOnTheSameFileNeverTrains) {
  TempKb kb;
  Report first;
  {
    Runtime rt(with_kb(kb.path));
    Holder h;
    Case c = make_case("nested_three_deep", 3000, h);
    first = c.report = rt.run(c.tree, c.bindings).get();
    EXPECT_EQ(c.check(), "");
    EXPECT_EQ(first.provenance, Provenance::trained);
    EXPECT_GT(first.training_executions, 0u);
  }
  {
    Runtime again(with_kb(kb.path));
    Holder h;
    Case c = make_case("nested_three_deep", 3000, h);
    c.report = again.run(c.tree, c.bindings).get();
    EXPECT_EQ(c.check(), "");
    EXPECT_EQ(c.report.provenance, Provenance::knowledge_base);
    EXPECT_EQ(c.report.training_executions, 0u);
    EXPECT_EQ(c.report.kb_entry, first.kb_entry);
    EXPECT_EQ(c.report.config, first.config);
  }  // execution runs are written in batches: at the latest when the runtime goes
  auto store = KnowledgeBase::open(kb.path);
  auto entry = store->entry(first.kb_entry);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->provenance, Provenance::trained);
  EXPECT_EQ(entry->executions, 2);                               // used by both runs
  // Every timed measurement kept; the untimed first runs (a new fission's, a device alone's, at
  // most one in two) are not.
  const std::size_t stored = store->runs(first.kb_entry).size();
  EXPECT_LE(stored, first.training_executions);
  EXPECT_GE(2 * stored, first.training_executions);
}

TEST(KbRuntime, TheModelStrategyTrainsWithinTenExecutionsAndIsStoredByName) {
  TempKb kb;
  RuntimeOptions o = with_kb(kb.path);
  o.training.strategy = Strategy::model;
  std::vector<std::string> lines;
  std::mutex mutex;  // the logger may be called from the runtime's threads
  o.quiet = false;
  o.log = [&](LogLevel, const std::string& line) {
    std::lock_guard lock(mutex);
    lines.push_back(line);
  };
  Report r;
  {
    Runtime rt(o);
    Holder h;
    Case c = make_case("nested_three_deep", 3000, h);
    r = c.report = rt.run(c.tree, c.bindings).get();
    EXPECT_EQ(c.check(), "");
  }
  EXPECT_EQ(r.provenance, Provenance::trained);
  EXPECT_GT(r.training_executions, 0u);
  EXPECT_LE(r.training_executions, 10u);  // the model strategy's budget, every run counted
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.find("predicts") != l.npos; }));
  auto entry = KnowledgeBase::open(kb.path)->entry(r.kb_entry);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->strategy, "model");
  EXPECT_EQ(entry->config, r.config);
}

TEST(KbRuntime, UnseenInputsAreDerivedOrTrainedByPolicy) {
  TempKb kb;
  RuntimeOptions unchecked = with_kb(kb.path);
  unchecked.training.derive_executions = 0;  // the spec's derivation: the neighbour's plan as it is
  Runtime rt(unchecked);
  Holder h1;
  Case c1 = make_case("pipeline_channel", 2000, h1);
  Report trained = rt.run(c1.tree, c1.bindings).get();
  ASSERT_EQ(trained.provenance, Provenance::trained);

  Holder h2;
  Case c2 = make_case("pipeline_channel", 2500, h2);  // same tree, another input size
  c2.report = rt.run(c2.tree, c2.bindings).get();
  EXPECT_EQ(c2.check(), "");
  EXPECT_EQ(c2.report.provenance, Provenance::derived);
  EXPECT_EQ(c2.report.derived_from, trained.kb_entry);
  EXPECT_EQ(c2.report.config, trained.config);  // nearest neighbour: the one known plan

  Runtime trainer(with_kb(kb.path, UnseenPolicy::train));
  Holder h3;
  Case c3 = make_case("pipeline_channel", 3000, h3);
  c3.report = trainer.run(c3.tree, c3.bindings).get();
  EXPECT_EQ(c3.report.provenance, Provenance::trained);

  Holder h4;
  Case c4 = make_case("pipeline_channel", 2000, h4);
  c4.report = rt.run(c4.tree, c4.bindings, RunOptions{.train = true}).get();  // forced
  EXPECT_EQ(c4.report.provenance, Provenance::trained);
  EXPECT_EQ(c4.report.kb_entry, trained.kb_entry);  // the same entry, retrained
  EXPECT_EQ(c4.check(), "");
}

TEST(KbRuntime, ADerivedPlanIsCheckedWithAFewRuns) {
  TempKb kb;
  Runtime rt(with_kb(kb.path));
  Holder h1;
  Case c1 = make_case("pipeline_channel", 2000, h1);
  Report trained = rt.run(c1.tree, c1.bindings).get();
  ASSERT_EQ(trained.provenance, Provenance::trained);

  Holder h2;
  Case c2 = make_case("pipeline_channel", 2500, h2);
  c2.report = rt.run(c2.tree, c2.bindings).get();
  EXPECT_EQ(c2.check(), "");  // the check ran on copies: the caller's data saw one run
  EXPECT_EQ(c2.report.provenance, Provenance::derived);
  EXPECT_EQ(c2.report.derived_from, trained.kb_entry);
  EXPECT_GT(c2.report.training_executions, 0u);
  EXPECT_LE(c2.report.training_executions, TrainingSettings{}.with_defaults().derive_executions.value());
  rt.run(c2.tree, c2.bindings).get();  // then a hit: no more runs
  auto store = KnowledgeBase::open(kb.path);
  auto entry = store->entry(c2.report.kb_entry);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->provenance, Provenance::derived);
  EXPECT_EQ(entry->strategy, "nearest+screen");  // the interpolator's method, checked
  EXPECT_EQ(entry->config, c2.report.config);
}

TEST(KbRuntime, TrainingLeavesTheCallersDataAlone) {
  TempKb kb;
  Runtime rt(with_kb(kb.path));
  Holder h;
  Case c = make_case("loop_times_iteration", 1500, h);  // inout data: training must not run on it
  c.report = rt.run(c.tree, c.bindings).get();
  EXPECT_EQ(c.report.provenance, Provenance::trained);
  EXPECT_EQ(c.check(), "");  // applied exactly once
}

TEST(KbRuntime, ACorruptFileNeverStopsTheRunAndIsKept) {
  TempKb kb;
  { std::ofstream(kb.path, std::ios::binary) << std::string(4096, '\x5a'); }
  Runtime rt(with_kb(kb.path));
  Holder h;
  Case c = make_case("kernel", 500, h);
  c.report = rt.run(c.tree, c.bindings).get();
  EXPECT_EQ(c.check(), "");
  EXPECT_EQ(c.report.provenance, Provenance::trained);
  bool kept = false;
  for (const auto& e : fs::directory_iterator(kb.dir.path()))
    if (e.path().filename().string().find("kb.sqlite.corrupt-") == 0) kept = fs::file_size(e.path()) == 4096;
  EXPECT_TRUE(kept) << "the corrupt file was not moved aside intact";
}

TEST(KbRuntime, TwoProcessesTrainingTheSameTreeAtOnceLoseNothing) {
  TempKb kb;
  const std::string cmd = "SINEW_KB='" + kb.path + "' SINEW_QUIET=1 " + SINEW_SAMPLE_SAXPY +
                          " --device all --size 200000 --repeat 1 > /dev/null 2>&1";
  auto a = std::async(std::launch::async, [&] { return std::system(cmd.c_str()); });
  auto b = std::async(std::launch::async, [&] { return std::system(cmd.c_str()); });
  EXPECT_EQ(a.get(), 0);
  EXPECT_EQ(b.get(), 0);
  auto store = KnowledgeBase::open(kb.path);
  ASSERT_TRUE(store->persistent()) << store->warning();
  const auto trees = store->trees();
  ASSERT_EQ(trees.size(), 1u);
  EXPECT_EQ(trees[0].entries, 1);  // one current plan for the one input
  EXPECT_GE(trees[0].runs, 2 + 2 * 1);  // both trainings' measurements and both executions kept
  // A third process finds it and trains no more.
  const std::string third = "SINEW_KB='" + kb.path + "' " + SINEW_SAMPLE_SAXPY +
                            " --device all --size 200000 --repeat 1 2>&1";
  std::string out;
  FILE* p = popen(third.c_str(), "r");
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(p ? pclose(p) : -1, 0) << out;
  EXPECT_EQ(out.find("sinew: training"), std::string::npos) << out;
  EXPECT_NE(out.find("(knowledge_base)"), std::string::npos) << out;
}

namespace {
std::size_t execution_runs(KnowledgeBase& store, std::int64_t entry) {
  std::size_t n = 0;
  for (const auto& run : store.runs(entry)) n += run.purpose == "execution";
  return n;
}
}  // namespace

TEST(KbRuntime, EveryExecutionIsKeptThoughWrittenInBatches) {
  TempKb kb;
  constexpr int kRuns = 120;  // two full batches of 50 and a remainder left for the timer
  std::int64_t entry = 0;
  Holder h;
  Case c = make_case("kernel", 1000, h);  // adds 5 to every element, each run
  const std::vector<int> a0 = h.a;
  {
    Runtime rt(with_kb(kb.path));
    RunOptions o;
    o.balance = false;
    for (int i = 0; i < kRuns; ++i) {
      const Report r = rt.run(c.tree, c.bindings, o).get();
      if (i == 0) {
        ASSERT_EQ(r.provenance, Provenance::trained);
        entry = r.kb_entry;
        ASSERT_NE(entry, 0);
      } else {
        ASSERT_EQ(r.provenance, Provenance::knowledge_base) << "run " << i;
        ASSERT_EQ(r.kb_entry, entry) << "run " << i;
      }
    }
    // The runtime is idle: what is still buffered is written within the flush interval (1 s).
    auto store = KnowledgeBase::open(kb.path);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (execution_runs(*store, entry) < kRuns && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(execution_runs(*store, entry), std::size_t(kRuns)) << "the buffered runs were not written while idle";
  }
  for (std::size_t i = 0; i < h.a.size(); ++i) ASSERT_EQ(h.a[i], a0[i] + 5 * kRuns) << "element " << i;
  auto store = KnowledgeBase::open(kb.path);
  const auto e = store->entry(entry);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->executions, kRuns);
  std::size_t executions = 0, training = 0;
  std::string last;
  for (const auto& run : store->runs(entry)) {
    training += run.purpose == "training";
    if (run.purpose != "execution") continue;
    ++executions;
    EXPECT_FALSE(run.created.empty());
    EXPECT_GE(run.created, last) << "execution runs keep the order (and times) they ran in";
    last = run.created;
  }
  EXPECT_EQ(executions, std::size_t(kRuns));
  EXPECT_GT(training, 0u);  // training measurements are kept as before
}

TEST(KbRuntime, CachedPlansFollowTheKnowledgeBase) {
  TempKb kb;
  Runtime rt(with_kb(kb.path));
  Holder h;
  Case c = make_case("kernel", 1000, h);
  const std::vector<int> a0 = h.a;
  RunOptions o;
  o.balance = false;
  const Report first = rt.run(c.tree, c.bindings, o).get();
  ASSERT_EQ(first.provenance, Provenance::trained);
  const Report second = rt.run(c.tree, c.bindings, o).get();  // now a cached plan
  ASSERT_EQ(second.provenance, Provenance::knowledge_base);
  EXPECT_EQ(second.config, first.config) << second.config.str();

  // Another process (here another handle) stores a plan unlike any training would.
  auto other = KnowledgeBase::open(kb.path);
  auto store_elsewhere = [&](double cpu0) {
    KbEntry e = *other->entry(first.kb_entry);
    e.config.shares = {cpu0, 1 - cpu0};
    e.provenance = Provenance::trained;
    other->store_entry(e);
    return e.config;
  };
  store_elsewhere(first.config.shares[0] > 0.5 ? 0.125 : 0.875);

  // Training in this runtime replaces the cached plan at once: the next run uses what it stored.
  RunOptions force = o;
  force.train = true;
  const Report forced = rt.run(c.tree, c.bindings, force).get();
  ASSERT_EQ(forced.provenance, Provenance::trained);
  ASSERT_EQ(forced.kb_entry, first.kb_entry);
  const Report after_training = rt.run(c.tree, c.bindings, o).get();
  EXPECT_EQ(after_training.provenance, Provenance::knowledge_base);
  EXPECT_EQ(after_training.config, forced.config) << after_training.config.str() << " instead of " << forced.config.str();
  EXPECT_EQ(other->entry(first.kb_entry)->config, forced.config) << other->entry(first.kb_entry)->config.str();

  // What another process stores shows up once the cached plan is older than the refresh
  // interval (PlannerSettings::refresh_interval, 1 s).
  const Config changed = store_elsewhere(forced.config.shares[0] > 0.5 ? 0.125 : 0.875);
  ASSERT_FALSE(changed == forced.config);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  const Report later = rt.run(c.tree, c.bindings, o).get();
  EXPECT_EQ(later.provenance, Provenance::knowledge_base);
  EXPECT_EQ(later.kb_entry, first.kb_entry);
  EXPECT_EQ(later.config, changed) << later.config.str() << " instead of " << changed.str();
  for (std::size_t i = 0; i < h.a.size(); ++i) ASSERT_EQ(h.a[i], a0[i] + 5 * 5) << "element " << i;
}

// An unnamed vector's feature is named by its position in the tree ("v0.size"), not by how many
// vectors the process made before it: a second runtime that makes unrelated vectors first and
// then the same tree finds the stored plan and trains nothing. (In one test process: the counter
// of vectors is process-wide, and each runtime reads the knowledge base file anew.)
TEST(KbRuntime, UnnamedVectorsFindTheStoredPlanWhateverWasMadeBefore) {
  TempKb kb;
  auto run_tree = [&] {
    Runtime rt(with_kb(kb.path));
    auto v = sinew::vector<cl_int>();  // unnamed
    auto tree = map(kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(v), scalar(cl_int(2))));
    std::vector<cl_int> data(6000, 1);
    Report r = rt.run(tree, {{v, data}}).get();
    EXPECT_EQ(data, std::vector<cl_int>(6000, 3));
    return r;
  };
  const Report first = run_tree();
  ASSERT_EQ(first.provenance, Provenance::trained);
  for (int i = 0; i < 7; ++i) (void)sinew::vector<cl_float>(16);  // unrelated vectors: the counter moves on
  const Report second = run_tree();
  EXPECT_EQ(second.provenance, Provenance::knowledge_base);
  EXPECT_EQ(second.training_executions, 0u);
  EXPECT_EQ(second.kb_entry, first.kb_entry);
  auto store = KnowledgeBase::open(kb.path);
  const auto entry = store->entry(first.kb_entry);
  ASSERT_TRUE(entry);
  ASSERT_FALSE(entry->features.empty());
  EXPECT_EQ(entry->features[0].first, "v0.size");
}

// A tree is labelled by its name, or by its kernels in their skeletons: in reports, in training
// progress and in the knowledge base's list of trees.
TEST(KbRuntime, TreesAreLabelledByTheirNameOrTheirKernels) {
  TempKb kb;
  std::vector<std::string> lines;
  RuntimeOptions o = with_kb(kb.path);
  o.quiet = false;
  o.log = [&](LogLevel, const std::string& line) { lines.push_back(line); };
  Runtime rt(o);
  auto a = sinew::vector<cl_int>().name("a"), b = sinew::vector<cl_int>().name("b");
  auto add = kernel_source(kTestKernels, "add_scalar", "t.cl").args(inout(a), scalar(cl_int(1)));
  auto twice = kernel_source(kTestKernels, "mul2", "t.cl").args(in(a), out(b));
  std::vector<cl_int> ha(4000, 1), hb(4000, 0);
  const Report unnamed = rt.run(map(add), {{a, ha}}).get();
  EXPECT_EQ(unnamed.tree, "map(add_scalar)");
  const Report named = rt.run(pipeline(add, twice).name("edges"), {{a, ha}, {b, hb}}).get();
  EXPECT_EQ(named.tree, "edges");
  EXPECT_NE(named.str().find("run of 'edges'"), std::string::npos) << named.str();
  auto has_line = [&](const std::string& text) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has_line("training 'map(add_scalar)'"));
  EXPECT_TRUE(has_line("training 'edges'"));
  auto store = KnowledgeBase::open(kb.path);
  std::vector<std::string> labels;
  for (const auto& t : store->trees()) labels.push_back(t.label);
  EXPECT_NE(std::find(labels.begin(), labels.end(), "map(add_scalar)"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "edges"), labels.end());
}

// A stored plan the runtime cannot run here (a fission configuration this CPU does not offer) is
// no plan: the run warns once and trains, and the new plan replaces it; it never fails.
TEST(KbRuntime, AStoredPlanThatDoesNotFitIsReplacedNotFatal) {
  TempKb kb;
  Report first;
  {
    Runtime rt(with_kb(kb.path));
    Holder h;
    Case c = make_case("kernel", 3000, h);
    first = rt.run(c.tree, c.bindings).get();
    ASSERT_EQ(first.provenance, Provenance::trained);
  }
  {
    auto store = KnowledgeBase::open(kb.path, {.log = {}});
    KbEntry e = *store->entry(first.kb_entry);
    e.config.fission = "L4";  // a name a CPU can offer, but not PoCL's here
    store->store_entry(e);
  }
  std::vector<std::string> warnings;
  RuntimeOptions o = with_kb(kb.path);
  o.log = [&](LogLevel level, const std::string& line) {
    if (level == LogLevel::warning) warnings.push_back(line);
  };
  Runtime rt(o);
  for (int i = 0; i < 2; ++i) {
    Holder h;
    Case c = make_case("kernel", 3000, h);
    c.report = rt.run(c.tree, c.bindings).get();
    EXPECT_EQ(c.check(), "");
    EXPECT_NE(c.report.config.fission, "L4");
    EXPECT_EQ(c.report.provenance, i == 0 ? Provenance::trained : Provenance::knowledge_base);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no fission configuration 'L4'"), std::string::npos) << warnings[0];
  auto store = KnowledgeBase::open(kb.path, {.log = {}});
  EXPECT_NE(store->entry(first.kb_entry)->config.fission, "L4");
}

// A stored plan with the dynamic schedule for a tree whose partitions meet (a loop exchanging
// halos), as an import of an undescribed tree could leave one, is no plan either: the run warns
// once, trains a replacement and stores it (it used to fail every run of the tree).
TEST(KbRuntime, AStoredDynamicPlanTheTreeCannotRunIsReplacedNotFatal) {
  TempKb kb;
  Report first;
  {
    Runtime rt(with_kb(kb.path));
    Holder h;
    Case c = make_case("halo_loop_constant", 64, h);
    first = rt.run(c.tree, c.bindings).get();
    ASSERT_EQ(first.provenance, Provenance::trained);
  }
  {
    auto store = KnowledgeBase::open(kb.path, {.log = {}});
    KbEntry e = *store->entry(first.kb_entry);
    e.config.shares.assign(e.config.shares.size(), 1.0 / static_cast<double>(e.config.shares.size()));
    e.config.schedule = "dynamic";
    e.config.set("min_chunk", "2");
    store->store_entry(e);
  }
  std::vector<std::string> warnings;
  RuntimeOptions o = with_kb(kb.path);
  o.log = [&](LogLevel level, const std::string& line) {
    if (level == LogLevel::warning) warnings.push_back(line);
  };
  Runtime rt(o);
  for (int i = 0; i < 2; ++i) {
    Holder h;
    Case c = make_case("halo_loop_constant", 64, h);
    c.report = rt.run(c.tree, c.bindings).get();
    EXPECT_EQ(c.check(), "");
    EXPECT_EQ(c.report.config.schedule, "static");
    EXPECT_EQ(c.report.provenance, i == 0 ? Provenance::trained : Provenance::knowledge_base);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("dynamic"), std::string::npos) << warnings[0];
  auto store = KnowledgeBase::open(kb.path, {.log = {}});
  EXPECT_EQ(store->entry(first.kb_entry)->config.schedule, "static");
}

// The default derivation (Interpolation::cost_model): with runs of each device alone at two sizes,
// a third size's plan is the one the fitted per-device costs predict fastest there (unchecked
// here: derive_executions 0), stored as "cost_model" with the nearest size as its source.
TEST(KbRuntime, AThirdSizeIsDerivedFromTheFittedCostsOfTwo) {
  TempKb kb;
  RuntimeOptions o = with_kb(kb.path);
  o.training.derive_executions = 0;
  Runtime rt(o);
  std::vector<Report> trained;
  for (std::size_t n : {2000u, 8000u}) {
    Holder h;
    Case c = make_case("pipeline_channel", n, h);
    trained.push_back(rt.run(c.tree, c.bindings, RunOptions{.train = true}).get());
    ASSERT_EQ(trained.back().provenance, Provenance::trained);
  }
  Holder h;
  Case c = make_case("pipeline_channel", 64000, h);
  c.report = rt.run(c.tree, c.bindings, RunOptions{.balance = false}).get();
  EXPECT_EQ(c.check(), "");
  EXPECT_EQ(c.report.provenance, Provenance::derived);
  EXPECT_EQ(c.report.derived_from, trained.back().kb_entry);  // the nearest size
  auto store = KnowledgeBase::open(kb.path);
  auto entry = store->entry(c.report.kb_entry);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->strategy, "cost_model");
  const auto model = detail::derive_from_costs(rt.devices(), store->runs_for_tree(entry->key.tree), entry->features);
  ASSERT_TRUE(model);
  EXPECT_EQ(entry->config, model->config) << model->str();
}
