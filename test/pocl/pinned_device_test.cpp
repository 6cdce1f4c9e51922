// A run pinned to one device (RunOptions::device) runs at that device's best known platform level
// (Planner::single_device): on first use its levels are screened and the runs stored; later the
// knowledge base's fastest run of the device alone decides, at this input or at the nearest one.
// Two PoCL devices, the second driven like a GPU (discrete, overlap levels 1-4).
#include "kb/kb_test_util.hpp"
#include "pocl/trees.hpp"

#include <sinew/kb.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace sinew;
using namespace sinew::testing;

namespace {

RuntimeOptions options(const std::string& kb) {
  RuntimeOptions o;
  o.kb_path = kb;
  o.quiet = true;
  o.discrete = "1";
  return o;
}

// The overlap level of the device-1-alone runs with the lowest median time, by plain C++.
unsigned fastest_overlap(const std::vector<KbRun>& runs, const KbFeatures& features) {
  std::map<unsigned, std::vector<double>> times;
  for (const auto& r : runs)
    if (r.features == features && r.config.shares == std::vector<double>{0.0, 1.0})
      times[r.config.overlap].push_back(r.time_ms);
  unsigned best = 0;
  double best_ms = 1e300;
  for (auto& [overlap, t] : times) {
    std::sort(t.begin(), t.end());
    const double m = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    if (m < best_ms) best = overlap, best_ms = m;
  }
  return best;
}

Report pinned_run(Runtime& rt, std::size_t n, Holder& h) {
  Case c = make_case("kernel", n, h);
  Report r = rt.run(c.tree, c.bindings, RunOptions{.device = 1}).get();
  EXPECT_EQ(c.check(), "") << "n " << n;
  return r;
}

std::string signature() {
  Holder h;
  return make_case("kernel", 16, h).tree.signature();
}

// A first pinned run of device 1 screens its levels and stores its runs in `kb`; five runs of it
// alone at another level, far faster, are then recorded as another process would have measured
// them. Returns that level.
unsigned record_faster_runs_at_another_level(const std::string& kb) {
  unsigned chosen = 0;
  {
    Runtime rt(options(kb));
    Holder h;
    chosen = pinned_run(rt, 40000, h).config.overlap;
  }
  auto store = KnowledgeBase::open(kb);
  const KbRun model = store->runs_for_tree(signature()).front();
  const unsigned other = chosen == 3 ? 2 : 3;
  for (int i = 0; i < 5; ++i) {
    KbRun r = model;
    r.id = 0;
    r.created.clear();
    r.config.overlap = other;
    r.time_ms = 1e-3;
    store->record_run(r);
  }
  return other;
}

}  // namespace

TEST(PinnedDevice, AFirstRunScreensTheDevicesOverlapLevelsAndTakesTheFastest) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  Runtime rt(options(kb));
  ASSERT_TRUE(rt.devices()[1].discrete);
  ASSERT_GT(rt.devices()[1].overlap_levels.size(), 1u);
  Holder h;
  const Report first = pinned_run(rt, 40000, h);
  std::vector<KbRun> runs = KnowledgeBase::open(kb)->runs_for_tree(signature());
  ASSERT_FALSE(runs.empty());
  const KbFeatures features = runs.front().features;
  std::set<unsigned> levels;
  for (const auto& r : runs) {
    EXPECT_EQ(r.config.shares, (std::vector<double>{0.0, 1.0})) << r.config.str();  // the device alone only
    levels.insert(r.config.overlap);
  }
  EXPECT_EQ(levels.size(), rt.devices()[1].overlap_levels.size());
  EXPECT_EQ(first.config.shares, (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(first.config.overlap, fastest_overlap(runs, features)) << first.config.str();
  EXPECT_EQ(first.provenance, Provenance::manual);
  // Later runs screen nothing more: the choice is stored (and cached).
  Holder again;
  EXPECT_EQ(pinned_run(rt, 40000, again).config, first.config);
  EXPECT_EQ(KnowledgeBase::open(kb)->runs_for_tree(signature()).size(), runs.size());
}

// The screening is training: the first run reports its executions (the stored runs and the
// untimed first ones), its time and what ended it; later runs report none.
TEST(PinnedDevice, AFirstRunReportsItsScreeningAsTraining) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  RuntimeOptions o = options(kb);
  o.training.time_budget_s = 60;  // (the environment's aside)
  Runtime rt(o);
  Holder h;
  const Report first = pinned_run(rt, 40000, h);
  const std::size_t stored = KnowledgeBase::open(kb)->runs_for_tree(signature()).size();
  EXPECT_GE(first.training_executions, stored);
  EXPECT_GT(first.training_seconds, 0.0);
  EXPECT_NE(first.training_end, TrainingEnd::none);
  EXPECT_GE(first.training_budget_seconds, 60.0);  // TrainingSettings::time_budget_s, or more
  // The screening's runs are the tree's first: they build (or load) its programs, which the budget
  // leaves aside.
  EXPECT_GT(first.training_build_seconds, 0.0);
  EXPECT_LE(first.training_build_seconds, first.training_seconds);
  EXPECT_NE(first.str().find("measured plans first: " + std::to_string(first.training_executions) + " executions"),
            std::string::npos)
      << first.str();
  Holder again;
  const Report second = pinned_run(rt, 40000, again);
  EXPECT_EQ(second.training_executions, 0u);
  EXPECT_EQ(second.training_end, TrainingEnd::none);
}

// A plan the user gives runs as given: nothing screened, nothing measured first, at the levels it
// names (no fission, one queue), whatever the knowledge base knows.
TEST(PinnedDevice, AUserGivenPlanIsNeverScreened) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  Runtime rt(options(kb));
  for (const char* plan : {"0=1", "1=1", "0=1,1=3"}) {
    Holder h;
    Case c = make_case("kernel", 40000, h);
    const Report r = rt.run(c.tree, c.bindings, RunOptions{.plan = plan}).get();
    EXPECT_EQ(c.check(), "") << plan;
    EXPECT_EQ(r.config, Config::parse(plan, rt.devices())) << plan;
    EXPECT_EQ(r.config.fission, "none") << plan;
    EXPECT_EQ(r.config.overlap, 1u) << plan;
    EXPECT_EQ(r.training_executions, 0u) << plan;
    EXPECT_EQ(r.training_end, TrainingEnd::none) << plan;
  }
  EXPECT_TRUE(KnowledgeBase::open(kb)->runs_for_tree(signature()).empty());
}

TEST(PinnedDevice, TheKnowledgeBasesFastestRunOfTheDeviceAloneDecides) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  // Runs of another level, far faster, recorded as another process would have measured them.
  const unsigned other = record_faster_runs_at_another_level(kb);
  auto store = KnowledgeBase::open(kb);
  const std::size_t stored = store->runs_for_tree(signature()).size();
  {
    Runtime rt(options(kb));
    Holder h;
    EXPECT_EQ(pinned_run(rt, 40000, h).config.overlap, other);
    // An input of another size with no run of its own: the nearest input's best level, no screening.
    Holder h2;
    EXPECT_EQ(pinned_run(rt, 50000, h2).config.overlap, other);
  }
  EXPECT_EQ(store->runs_for_tree(signature()).size(), stored);
}

// Each device's best level is cached under its own key: runs pinned to one device and then to the
// other, in one runtime, each get their own device's level (a key shared by the devices would hand
// the second the first's plan, which is not alone on it, and run it at its first level).
TEST(PinnedDevice, EachPinnedDeviceIsCachedUnderItsOwnKey) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  // Far faster runs of device 1 alone at another level decide its level from now on.
  const unsigned other = record_faster_runs_at_another_level(kb);
  Runtime rt(options(kb));
  for (int round = 0; round < 2; ++round) {
    for (std::size_t device : {0u, 1u}) {
      SCOPED_TRACE("round " + std::to_string(round) + ", device " + std::to_string(device));
      Holder h;
      Case c = make_case("kernel", 40000, h);
      const Report r = rt.run(c.tree, c.bindings, RunOptions{.device = device}).get();
      EXPECT_EQ(c.check(), "");
      EXPECT_EQ(r.config.shares, Config::single(device, 2).shares) << r.config.str();
      if (device == 1) EXPECT_EQ(r.config.overlap, other) << r.config.str();
    }
  }
}

TEST(PinnedDevice, AnExplicitConfigIsRunAsGiven) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  Runtime rt(options(kb));
  Holder h;
  Case c = make_case("kernel", 40000, h);
  Config one = Config::single(1, 2);
  const Report r = rt.run(c.tree, c.bindings, RunOptions{.config = one}).get();
  EXPECT_EQ(c.check(), "");
  EXPECT_EQ(r.config, one);
  EXPECT_TRUE(KnowledgeBase::open(kb)->runs_for_tree(signature()).empty());
}

// A plan that puts everything on one device runs exactly as a run pinned to that device: the same
// configuration, partitions, queues, executor copies and device memory. (On the H100 machine a
// trained plan "CPU alone at overlap 2" ran 2.5x slower than the CPU-only baseline.) The stored
// plan names the device alone at a level the device does not use (the CPU "at overlap 4") or not
// its best (the discrete device at overlap 4); both the second device discrete and zero-copy.
TEST(PinnedDevice, APlanOfOneDeviceRunsAsThatDeviceAlone) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  for (const char* discrete : {"1", ""}) {
    for (std::size_t device : {0u, 1u}) {
      SCOPED_TRACE(std::string("discrete '") + discrete + "', device " + std::to_string(device));
      const kbtest::TempDir dir;
      const std::string kb = dir.file("kb.sqlite");
      RuntimeOptions o = options(kb);
      o.discrete = discrete;
      Runtime rt(o);
      Holder h;
      Case c = make_case("kernel", 40000, h);
      const Report trained = rt.run(c.tree, c.bindings, RunOptions{.train = true}).get();
      ASSERT_EQ(c.check(), "");
      ASSERT_GT(trained.kb_entry, 0);
      Holder ha;
      Case alone = make_case("kernel", 40000, ha);
      const Report a = rt.run(alone.tree, alone.bindings, RunOptions{.device = device}).get();
      {
        // The pinned run's plan, stored with a level of the idle device besides: the fission
        // of a CPU with no share, or the overlap of a zero-copy device alone.
        auto store = KnowledgeBase::open(kb);
        KbEntry e = *store->entry(trained.kb_entry);
        e.config = a.config;
        if (rt.devices()[device].discrete) e.config.fission = "L1";
        else e.config.overlap = 4;
        store->store_entry(e);
      }
      Runtime fresh(o);  // no cached plan: the stored one is read
      Holder hp;
      Case planned = make_case("kernel", 40000, hp);
      const Report p = fresh.run(planned.tree, planned.bindings, RunOptions{.balance = false}).get();
      EXPECT_EQ(planned.check(), "");
      EXPECT_EQ(alone.check(), "");
      EXPECT_EQ(p.provenance, Provenance::knowledge_base);
      EXPECT_EQ(p.config, a.config) << p.config.str() << " against " << a.config.str();
      if (!fresh.devices()[device].discrete) EXPECT_EQ(p.config.overlap, 1u);
      ASSERT_EQ(p.partitions.size(), a.partitions.size());
      for (std::size_t i = 0; i < p.partitions.size(); ++i) {
        EXPECT_EQ(p.partitions[i].device, a.partitions[i].device);
        EXPECT_EQ(p.partitions[i].sub_device, a.partitions[i].sub_device);
        EXPECT_EQ(p.partitions[i].queue, a.partitions[i].queue);
        EXPECT_EQ(p.partitions[i].first, a.partitions[i].first);
        EXPECT_EQ(p.partitions[i].units, a.partitions[i].units);
      }
      EXPECT_EQ(p.copies.host_copies(), a.copies.host_copies());
      EXPECT_EQ(p.copies.host_bytes(), a.copies.host_bytes());
      EXPECT_EQ(p.copies.device.bytes, a.copies.device.bytes);
      EXPECT_EQ(p.device_bytes, a.device_bytes);
    }
  }
}

// docs/decisions/178: a tree whose partitioned vectors are all resident arrays moves nothing after
// its first run, so its levels only add queues: of the pinned device's levels whose stored medians
// lie within the precision (5%) of the fastest, the lowest is run. The same tree bound to host
// memory (another key) runs its fastest level.
TEST(PinnedDevice, AResidentTreeRunsItsLowestLevelWithinThePrecision) {
  if (Runtime().devices().size() != 2) GTEST_SKIP() << "needs POCL_DEVICES=\"pthread pthread\"";
  const kbtest::TempDir dir;
  const std::string kb = dir.file("kb.sqlite");
  const char* source = "__kernel void axpy(__global const float* x, __global float* y) {"
                       " size_t i = get_global_id(0); y[i] += 2.0f * x[i]; }";
  auto x = sinew::vector<cl_float>().name("x");
  auto y = sinew::vector<cl_float>().name("y");
  const Node tree = kernel_source(source, "axpy", "axpy.cl").args(in(x), inout(y));
  const std::vector<float> start(1 << 14, 1.0f);
  // A first run of each binding screens the levels; then level 1's runs 3% slower than level 3's
  // and both far faster than the screening's are recorded, as another process would have.
  for (bool resident : {true, false}) {
    {
      Runtime rt(options(kb));
      std::vector<float> hx = start, hy = start;
      if (resident) {
        auto ax = rt.array<cl_float>(start);
        auto ay = rt.array<cl_float>(start);
        rt.execute(tree, {{x, ax}, {y, ay}}, {.device = 1});
      } else {
        rt.execute(tree, {{x, hx}, {y, hy}}, {.device = 1});
      }
    }
    auto store = KnowledgeBase::open(kb);
    const std::vector<KbRun> runs = store->runs_for_tree(tree.signature());
    ASSERT_FALSE(runs.empty());
    const KbRun model = runs.back();  // this binding's (the last screened)
    for (int i = 0; i < 5; ++i)
      for (auto [level, ms] : {std::pair{3u, 1.00e-3}, std::pair{1u, 1.03e-3}}) {
        KbRun r = model;
        r.id = 0;
        r.created.clear();
        r.config.overlap = level;
        r.time_ms = ms;
        store->record_run(r);
      }
  }
  Runtime rt(options(kb));
  auto ax = rt.array<cl_float>(start);
  auto ay = rt.array<cl_float>(start);
  EXPECT_EQ(rt.execute(tree, {{x, ax}, {y, ay}}, {.device = 1}).config.overlap, 1u);
  std::vector<float> hx = start, hy = start;
  EXPECT_EQ(rt.execute(tree, {{x, hx}, {y, hy}}, {.device = 1}).config.overlap, 3u);
  EXPECT_EQ(hy[5], 3.0f);
  EXPECT_EQ(ay.host()[5], 3.0f);
}
