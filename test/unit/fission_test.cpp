// Fission configurations from a (synthetic) hwloc topology.
#include "platform/device.hpp"

#include <gtest/gtest.h>

using namespace sinew::detail;

TEST(Fission, PerCoreCachesAndSharedL3OnSixteenThreads) {
  // 8 cores x 2 hyper-threads: L1 and L2 per core, one L3, one NUMA node.
  std::vector<TopologyLevel> levels{{"L1", std::vector<unsigned>(8, 2)},
                                    {"L2", std::vector<unsigned>(8, 2)},
                                    {"L3", {16}},
                                    {"numa", {16}}};
  auto configs = fission_configs_from_topology(16, levels, {"equally", "by_counts"}, {});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].name, "none");
  EXPECT_EQ(configs[0].same_as, (std::vector<std::string>{"L3", "numa"}));
  EXPECT_EQ(configs[1].name, "L1");
  EXPECT_EQ(configs[1].groups, std::vector<unsigned>(8, 2));
  EXPECT_EQ(configs[1].method, "equally");
  EXPECT_EQ(configs[1].same_as, std::vector<std::string>{"L2"});
}

TEST(Fission, UnevenGroupsUseCountsAndAffinityDomainsWhenOffered) {
  std::vector<TopologyLevel> levels{{"L3", {6, 2}}, {"numa", {4, 4}}};
  auto counts = fission_configs_from_topology(8, levels, {"equally", "by_counts"}, {});
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[1].method, "by_counts");
  EXPECT_EQ(counts[1].groups, (std::vector<unsigned>{6, 2}));
  EXPECT_EQ(counts[2].method, "equally");
  auto domain = fission_configs_from_topology(8, levels, {"by_affinity_domain"}, {"numa", "l3_cache"});
  ASSERT_EQ(domain.size(), 3u);
  EXPECT_EQ(domain[1].method, "affinity_domain");
}

TEST(Fission, DeviceWithFewerUnitsThanTheMachineKeepsGroupCount) {
  // A cgroup limits the OpenCL device to 4 of 16 threads: 8 per-core groups do not fit, 2 NUMA do.
  std::vector<TopologyLevel> levels{{"L2", std::vector<unsigned>(8, 2)}, {"numa", {8, 8}}};
  auto configs = fission_configs_from_topology(4, levels, {"equally", "by_counts"}, {});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[1].name, "numa");
  EXPECT_EQ(configs[1].groups, (std::vector<unsigned>{2, 2}));
}

TEST(Fission, NoPartitioningSupportMeansNoFission) {
  std::vector<TopologyLevel> levels{{"L2", {1, 1}}};
  auto configs = fission_configs_from_topology(2, levels, {}, {});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_TRUE(configs[0].is_none());
}
