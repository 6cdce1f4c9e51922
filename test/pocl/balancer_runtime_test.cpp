// The online balancer behind Runtime::run on two PoCL devices: a badly skewed plan is moved
// towards equal finish times while every result stays right, the move is reported, recorded in
// the knowledge base and stored as a "balanced" entry that the next runtime starts from.
#include <sinew/kb.hpp>
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;
using namespace sinew;

namespace {

// Compute-bound, so a device's time follows its share.
const char* kBurn = R"CL(
__kernel void burn(__global float* x) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < 300; ++k) v = v * 0.999f + 0.001f;
  x[i] = v;
}
)CL";

struct Burn {
  Vector<float> x = sinew::vector<float>().name("x");
  Node tree = kernel_source(kBurn, "burn", "burn.cl").args(inout(x)).label("burn");
  std::vector<float> data, expected;
  explicit Burn(std::size_t n) : data(n) {
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000) / 1000.0f;
    expected = data;
    for (auto& v : expected)
      for (int k = 0; k < 300; ++k) v = v * 0.999f + 0.001f;
  }
  std::vector<Binding> bind() {
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000) / 1000.0f;
    return {{x, data}};
  }
  bool right() const {
    for (std::size_t i = 0; i < data.size(); ++i)
      if (std::abs(data[i] - expected[i]) > 1e-4f) return false;
    return true;
  }
};

struct TempKb {
  fs::path dir;
  std::string path;
  TempKb() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("sinew-balancer-" + std::to_string(rd()));
    fs::create_directories(dir);
    path = (dir / "kb.sqlite").string();
  }
  ~TempKb() { fs::remove_all(dir); }
};

RuntimeOptions quiet(const std::string& kb = ":memory:") {
  RuntimeOptions o;
  o.kb_path = kb;
  o.quiet = true;
  return o;
}

constexpr std::size_t kElements = 1 << 19;

}  // namespace

TEST(BalancerRuntime, ASkewedGivenPlanIsMovedTowardsEqualTimes) {
  Runtime rt(quiet());
  ASSERT_GE(rt.devices().size(), 2u);
  Burn b(kElements);
  std::optional<BalanceEvent> first;
  Report last;
  // The first move waits until the devices' estimates are tight enough for the gain to stand
  // three standard errors clear of their noise: with the 10% device's time swinging 10-70 ms
  // from run to run on a busy machine, 10-16 runs.
  for (int i = 0; i < 40; ++i) {
    last = rt.run(b.tree, b.bind(), {.plan = "0=0.9,1=0.1", .balance = true}).get();
    ASSERT_TRUE(b.right()) << "run " << i;
    EXPECT_EQ(last.execution, static_cast<std::size_t>(i + 1));
    if (last.balance && !first) first = last.balance;
  }
  ASSERT_TRUE(first) << "no rebalance in 40 runs of a 90/10 plan on two devices";
  EXPECT_EQ(first->level, 1);
  EXPECT_NEAR(first->before.shares[0], 0.9, 1e-9);
  EXPECT_LT(first->after.shares[0], 0.9);
  EXPECT_GT(first->deviation, 0.12);
  EXPECT_EQ(last.provenance, Provenance::balanced);
  EXPECT_GT(last.config.shares[0], 0.2) << last.config.str();
  EXPECT_LT(last.config.shares[0], 0.8) << last.config.str();
}

TEST(BalancerRuntime, AGivenPlanIsLeftAloneUnlessAsked) {
  Runtime rt(quiet());
  Burn b(kElements / 4);
  for (int i = 0; i < 8; ++i) {
    Report r = rt.run(b.tree, b.bind(), {.plan = "0=0.9,1=0.1"}).get();
    EXPECT_EQ(r.execution, 0u);
    EXPECT_FALSE(r.balance);
    EXPECT_NEAR(r.config.shares[0], 0.9, 1e-9);
    EXPECT_EQ(r.provenance, Provenance::manual);
  }
}

TEST(BalancerRuntime, KnowledgeBasePlansAreBalancedAndTheResultIsKept) {
  TempKb kb;
  Burn b(kElements);
  KbKey key;
  KbFeatures features;
  {
    Runtime rt(quiet(kb.path));
    Report r = rt.run(b.tree, b.bind()).get();
    ASSERT_TRUE(b.right());
    ASSERT_EQ(r.provenance, Provenance::trained);
    key = make_kb_key(b.tree.signature(), rt.devices());
  }
  {
    // Something made the stored plan bad: skew it, as a changed load would.
    auto k = KnowledgeBase::open(kb.path);
    auto entries = k->entries(key);
    ASSERT_EQ(entries.size(), 1u);
    KbEntry e = entries[0];
    features = e.features;
    e.config.shares = {0.9, 0.1};
    // A static plan: training may have chosen the dynamic or the steal schedule (they win on
    // these two PoCL devices now and then), whose chunks and ranges balance each run themselves
    // and which the balancer never moves; their items (min_chunk, least_range) go with them.
    e.config.schedule = "static";
    e.config.items.clear();
    e.provenance = Provenance::trained;
    k->store_entry(e);
  }
  std::int64_t entry = 0;
  {
    Runtime rt(quiet(kb.path));
    bool settled = false;
    // As above: the first move waits for estimates tight enough to see past the noise.
    for (int i = 0; i < 100 && !settled; ++i) {
      Report r = rt.run(b.tree, b.bind()).get();
      ASSERT_TRUE(b.right()) << "run " << i;
      entry = r.kb_entry;
      auto k = KnowledgeBase::open(kb.path);
      settled = k->find(key, features)->provenance == Provenance::balanced;
    }
    ASSERT_TRUE(settled) << "the balancer never stored a balanced plan";
  }
  auto k = KnowledgeBase::open(kb.path);
  const KbEntry e = *k->find(key, features);
  EXPECT_EQ(e.id, entry);
  EXPECT_LT(e.config.shares[0], 0.8) << e.config.str();
  const auto events = k->events(entry);
  ASSERT_FALSE(events.empty());
  EXPECT_NEAR(events.front().before.shares[0], 0.9, 1e-9);
  EXPECT_GE(events.front().execution, 1);
  bool balancing_runs = false;
  for (const auto& run : k->runs(entry)) balancing_runs |= run.purpose == "execution";
  EXPECT_TRUE(balancing_runs);

  // The next runtime starts from the balanced plan.
  Runtime next(quiet(kb.path));
  Report r = next.run(b.tree, b.bind()).get();
  EXPECT_TRUE(b.right());
  EXPECT_EQ(r.provenance, Provenance::knowledge_base);
  EXPECT_EQ(r.config, e.config);
}

// A load present from the first run: the plan's stored runs (training's, earlier processes')
// are what its first runs here are held against (Balancer::recall). The stored plan is skewed as
// above and its stored runs ten times faster than the trained plan ran, as if the machine had
// been quiet then: the balancer sees the step within its first runs and moves the plan at once,
// where the slow-drift path waits for tight estimates (the test above).
TEST(BalancerRuntime, APlanSlowerThanItsStoredRunsFromTheFirstRunIsMovedAtOnce) {
  TempKb kb;
  Burn b(kElements);
  KbKey key;
  double trained_ms = 0;
  {
    Runtime rt(quiet(kb.path));
    Report r = rt.run(b.tree, b.bind()).get();
    ASSERT_TRUE(b.right());
    key = make_kb_key(b.tree.signature(), rt.devices());
    trained_ms = r.wall_ms;
  }
  {
    auto k = KnowledgeBase::open(kb.path);
    auto entries = k->entries(key);
    ASSERT_EQ(entries.size(), 1u);
    KbEntry e = entries[0];
    e.config.shares = {0.9, 0.1};
    e.config.schedule = "static";  // as above: a dynamic or steal plan is never moved
    e.config.items.clear();
    e.provenance = Provenance::trained;
    k->store_entry(e);
    const KbEntry stored = *k->find(key, e.features);
    for (int i = 0; i < 3; ++i)
      k->record_run(KbRun{.key = key, .features = stored.features, .config = stored.config,
                          .time_ms = trained_ms / 10, .purpose = "training"});
  }
  Runtime rt(quiet(kb.path));
  std::optional<BalanceEvent> first;
  for (int i = 0; i < 6 && !first; ++i) {
    Report r = rt.run(b.tree, b.bind()).get();
    ASSERT_TRUE(b.right()) << "run " << i;
    ASSERT_EQ(r.execution, static_cast<std::size_t>(i + 1));
    first = r.balance;
  }
  ASSERT_TRUE(first) << "no move within six runs";
  EXPECT_LE(first->execution, 5u);
  EXPECT_EQ(first->level, 1);
  EXPECT_NEAR(first->before.shares[0], 0.9, 1e-9);
  EXPECT_LT(first->after.shares[0], 0.9);
}

TEST(BalancerRuntime, SinewBalanceZeroTurnsItOff) {
  ::setenv("SINEW_BALANCE", "0", 1);
  Runtime rt(quiet());
  ::unsetenv("SINEW_BALANCE");
  Burn b(kElements / 4);
  for (int i = 0; i < 3; ++i) {
    Report r = rt.run(b.tree, b.bind()).get();
    EXPECT_EQ(r.execution, 0u);
  }
}

TEST(BalancerRuntime, BadSettingsAreRejectedWhenTheRuntimeIsMade) {
  RuntimeOptions o = quiet();
  o.balancer.weight = 2;
  try {
    Runtime rt(o);
    FAIL() << "weight 2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
  ::setenv("SINEW_BALANCE_WITHIN", "abc", 1);
  EXPECT_THROW(Runtime{quiet()}, Error);
  ::unsetenv("SINEW_BALANCE_WITHIN");
  // A balancer no one registered, and a tuned value out of range.
  o = quiet();
  o.balancer.policy = "no_such_balancer";
  try {
    Runtime rt(o);
    FAIL() << "an unknown balancer accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two_level"), std::string::npos) << e.what();
  }
  o = quiet();
  o.balancer.tuning = BalancerTuning{};
  o.balancer.tuning->steps.runs = 0;
  EXPECT_THROW(Runtime{o}, Error);
}

// Each device's time is its own, not that of the slowest (the balancer and training read them;
// a device reported as finishing with the others would make any plan look balanced). 95% of a
// compute-bound kernel on the "basic" CPU device, 5% on the pthread device driven as discrete,
// with the data pinned (direct transfers, streamed in chunks): the discrete device's time
// stays well under the CPU's.
TEST(BalancerRuntime, EachDeviceReportsItsOwnTime) {
  RuntimeOptions o = quiet();
  o.discrete = "1";
  Runtime rt(o);
  ASSERT_EQ(rt.devices().size(), 2u);
  const std::size_t n = 200'000;
  auto x = rt.pinned<cl_float>(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) / 1000.0f;
  const std::vector<float> input(x.begin(), x.end());
  std::vector<float> expected = input;
  for (auto& v : expected)
    for (int k = 0; k < 300; ++k) v = v * 0.999f + 0.001f;
  auto X = sinew::vector<cl_float>().name("x");
  Config cfg;
  cfg.shares = {0.95, 0.05};
  cfg.overlap = 2;
  auto tree = kernel_source(kBurn, "burn", "burn.cl").args(inout(X));
  // Two first runs: PoCL compiles at a first launch, and the runtime learns that "basic" runs
  // kernels as they are enqueued (so one thread may not enqueue every device's work).
  for (int warm = 0; warm < 2; ++warm) {
    rt.execute(tree, {{X, x}}, {.config = cfg, .balance = false});
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(x[i], expected[i], 1e-4f) << i << " (first runs)";
    std::copy(input.begin(), input.end(), x.begin());
  }
  const Report r = rt.execute(tree, {{X, x}}, {.config = cfg, .balance = false});
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_NEAR(x[i], expected[i], 1e-4f) << i;
  ASSERT_EQ(r.device_ms.size(), 2u);
  EXPECT_GT(r.device_ms[1], 0.0);
  EXPECT_LT(r.device_ms[1], 0.5 * r.device_ms[0])
      << "the discrete device's 5% reported as taking as long as the CPU's 95%\n" << r.str();
}
