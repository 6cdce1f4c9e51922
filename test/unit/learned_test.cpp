// The runtime's store of learned state (schedule/learned.hpp): its key, its keyed slots (one
// entry per key, made once, shared, thread-safe), a slot per type, and the plan cache's rules
// (schedule/plan_cache.hpp: refresh by uses and by time, a generation that keeps a plan read
// before a store from being remembered after it).
#include "schedule/balancer_registry.hpp"
#include "schedule/learned.hpp"
#include "schedule/plan_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

using namespace sinew;
using namespace sinew::detail;

namespace {

LearnedKey key(const std::string& tree, double size, const std::string& plan = {}) {
  return {tree, {{"x.size", size}}, plan};
}

Plan plan_with(double cpu_share) {
  Plan p;
  p.config = Config{{cpu_share, 1 - cpu_share}};
  p.entry = 7;
  return p;
}

}  // namespace

TEST(LearnedKey, TreeFeaturesAndPlanEachTellKeysApart) {
  EXPECT_EQ(key("t", 1), key("t", 1));
  EXPECT_NE(key("t", 1), key("u", 1));
  EXPECT_NE(key("t", 1), key("t", 2));
  EXPECT_NE(key("t", 1), key("t", 1, "cpu:0=1"));
  EXPECT_NE((LearnedKey{"t", {{"x.size", 1}}, {}}), (LearnedKey{"t", {{"y.size", 1}}, {}}));
  EXPECT_NE((LearnedKey{"t", {{"x.size", 1}}, {}}), (LearnedKey{"t", {{"x.size", 1}, {"a", 2}}, {}}));
}

TEST(LearnedKey, NanFeaturesAreOneKeyAndSortAfterNumbers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(key("t", nan), key("t", nan));
  EXPECT_LT(key("t", 1e300), key("t", nan));
  EXPECT_FALSE(key("t", nan) < key("t", 1e300));
  Keyed<int> slot;
  slot.put(key("t", nan), std::make_shared<int>(1));
  slot.put(key("t", 3), std::make_shared<int>(2));
  ASSERT_NE(slot.find(key("t", nan)), nullptr);
  EXPECT_EQ(*slot.find(key("t", nan)), 1);
  EXPECT_EQ(*slot.find(key("t", 3)), 2);
}

TEST(Keyed, MakesAnEntryOnceAndSharesIt) {
  Keyed<int> slot;
  int made = 0;
  auto make = [&] {
    ++made;
    return std::make_shared<int>(made);
  };
  EXPECT_EQ(slot.find(key("t", 1)), nullptr);
  const auto a = slot.get_or_make(key("t", 1), make);
  const auto b = slot.get_or_make(key("t", 1), make);
  EXPECT_EQ(a, b);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(slot.find(key("t", 1)), a);
  EXPECT_NE(slot.get_or_make(key("t", 2), make), a);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(slot.size(), 2u);
}

TEST(Keyed, PutReplacesAndEraseDrops) {
  Keyed<int> slot;
  const auto old = slot.get_or_make(key("t", 1), [] { return std::make_shared<int>(1); });
  slot.put(key("t", 1), std::make_shared<int>(2));
  EXPECT_EQ(*slot.find(key("t", 1)), 2);
  EXPECT_EQ(*old, 1);  // those holding the old entry keep it
  slot.erase(key("t", 1));
  EXPECT_EQ(slot.find(key("t", 1)), nullptr);
  EXPECT_EQ(slot.size(), 0u);
}

TEST(Keyed, ThreadsAskingForOneKeyGetOneEntry) {
  Keyed<int> slot;
  std::atomic<int> made{0};
  std::vector<std::shared_ptr<int>> got(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        got[t] = slot.get_or_make(key("t", i % 4), [&] {
          ++made;
          return std::make_shared<int>(i % 4);
        });
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 4);
  EXPECT_EQ(slot.size(), 4u);
  for (const auto& g : got) EXPECT_EQ(g, slot.find(key("t", 199 % 4)));
}

TEST(LearnedStore, OneSlotPerTypeMadeOnFirstUse) {
  struct PolicyMemory {
    std::vector<double> rates;
  };
  struct OtherMemory {
    int runs = 0;
  };
  LearnedStore store;
  auto& a = store.slot<PolicyMemory>();
  EXPECT_EQ(&a, &store.slot<PolicyMemory>());
  a.get_or_make(key("t", 1, "cpu:0=1"), [] { return std::make_shared<PolicyMemory>(); })->rates = {1, 2};
  EXPECT_EQ(store.slot<PolicyMemory>().find(key("t", 1, "cpu:0=1"))->rates, (std::vector<double>{1, 2}));
  EXPECT_EQ(store.slot<OtherMemory>().find(key("t", 1, "cpu:0=1")), nullptr);
  EXPECT_EQ(store.slot<OtherMemory>().size(), 0u);
}

TEST(LearnedStore, KeepsPlanWatchesAndRankSplits) {
  LearnedStore store;
  std::vector<DeviceInfo> devices(2);
  devices[1].index = 1;
  const Config start{{0.5, 0.5}};
  auto watch = store.watches().get_or_make(
      key("t", 1), [&] { return std::make_shared<PlanWatch>(make_balancer(devices, start, {}), "saxpy"); });
  EXPECT_EQ(watch->base, start);
  EXPECT_EQ(watch->balancer->config(), start);
  EXPECT_EQ(watch->label, "saxpy");
  EXPECT_EQ(store.watches().find(key("t", 1)), watch);
  store.rank_splits().put(key("t", 1), std::make_shared<RankSplit>(make_balancer(devices, start, {})));
  EXPECT_EQ(store.rank_splits().find(key("t", 1))->balancer->config().shares, start.shares);
  EXPECT_EQ(store.rank_splits().find(key("t", 2)), nullptr);
}

TEST(PlanCache, ServesARememberedPlanUntilItsUsesAreSpent) {
  PlanCache cache;
  const PlanCache::Refresh refresh{3, std::chrono::hours(1)};
  EXPECT_FALSE(cache.find(key("t", 1), refresh));
  cache.remember(key("t", 1), plan_with(0.25), cache.generation(), refresh);
  for (int use = 0; use < 3; ++use) {
    const auto hit = cache.find(key("t", 1), refresh);
    ASSERT_TRUE(hit) << use;
    EXPECT_EQ(hit->config, plan_with(0.25).config);
    EXPECT_EQ(hit->entry, 7);
  }
  EXPECT_FALSE(cache.find(key("t", 1), refresh));  // the fourth use reads the knowledge base again
  EXPECT_EQ(cache.size(), 0u);
}

TEST(PlanCache, ReadsAgainOnceTheIntervalPassed) {
  PlanCache cache;
  const PlanCache::Refresh refresh{1000, std::chrono::milliseconds(0)};
  cache.remember(key("t", 1), plan_with(0.25), cache.generation(), refresh);
  EXPECT_FALSE(cache.find(key("t", 1), refresh));
}

TEST(PlanCache, APlanReadBeforeAForgetIsNotRemembered) {
  PlanCache cache;
  const PlanCache::Refresh refresh;
  const auto before = cache.generation();
  cache.forget(key("t", 2));  // a store (of any key) between the read and the remember
  EXPECT_NE(cache.generation(), before);
  cache.remember(key("t", 1), plan_with(0.25), before, refresh);
  EXPECT_FALSE(cache.find(key("t", 1), refresh));
  cache.remember(key("t", 1), plan_with(0.25), cache.generation(), refresh);
  EXPECT_TRUE(cache.find(key("t", 1), refresh));
  cache.forget(key("t", 1));
  EXPECT_FALSE(cache.find(key("t", 1), refresh));
}

TEST(PlanCache, APinnedDevicesPlanIsItsOwnKey) {
  PlanCache cache;
  const PlanCache::Refresh refresh;
  cache.remember(key("t", 1), plan_with(0.25), cache.generation(), refresh);
  cache.remember(key("t", 1, "cpu:0=1"), plan_with(1), cache.generation(), refresh);
  EXPECT_EQ(cache.find(key("t", 1), refresh)->config, plan_with(0.25).config);
  EXPECT_EQ(cache.find(key("t", 1, "cpu:0=1"), refresh)->config, plan_with(1).config);
}

TEST(PlanCache, PlansPastTheirRefreshGoOnceItHoldsMany) {
  PlanCache cache;
  const PlanCache::Refresh keep{1000, std::chrono::hours(1)}, drop{1000, std::chrono::milliseconds(0)};
  for (int i = 0; i < 256; ++i) cache.remember(key("t", i), plan_with(0.5), cache.generation(), keep);
  EXPECT_EQ(cache.size(), 256u);
  cache.remember(key("t", 1000), plan_with(0.5), cache.generation(), drop);  // every earlier one is past 0 ms
  EXPECT_EQ(cache.size(), 1u);
}
