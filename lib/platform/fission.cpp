// platform/fission.cpp — CPU fission configurations from the hwloc topology, and sub-devices.
//
// The spec's CPU execution platform offers {L1..L4 cache, NUMA, no fission}: one sub-device per
// group of cores sharing a cache (or a NUMA node). Where the OpenCL device supports partitioning
// by affinity domain we use it; PoCL supports only "equally" and "by counts", so the same groups
// are built from their sizes. Configurations whose groups repeat another's are folded into it.
#include "platform/device.hpp"
#include "platform/error.hpp"

#include <hwloc.h>

#include <algorithm>
#include <numeric>

namespace sinew::detail {

std::vector<FissionConfig> fission_configs_from_topology(unsigned compute_units, const std::vector<TopologyLevel>& levels,
                                                         const std::vector<std::string>& partition_types,
                                                         const std::vector<std::string>& affinity_domains) {
  std::vector<FissionConfig> configs;
  configs.push_back({"none", {}, "", {}});
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  const bool by_counts = has(partition_types, "by_counts");
  const bool equally = has(partition_types, "equally");
  const bool by_domain = has(partition_types, "by_affinity_domain");
  if (compute_units < 2) return configs;
  for (const auto& level : levels) {
    std::vector<unsigned> groups;
    for (unsigned pus : level.pus_per_object)
      if (pus > 0) groups.push_back(pus);
    if (groups.empty()) continue;
    unsigned total = std::accumulate(groups.begin(), groups.end(), 0u);
    if (total != compute_units) {
      // The OpenCL device does not expose exactly the machine's processing units (a cgroup limit,
      // or a driver that counts cores only): keep the number of groups, share units evenly.
      std::size_t n = groups.size();
      if (n > compute_units) continue;
      groups.assign(n, compute_units / static_cast<unsigned>(n));
      for (unsigned r = 0; r < compute_units % n; ++r) ++groups[r];
    }
    std::string lower = level.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    std::string domain = lower == "numa" ? "numa" : lower + "_cache";
    std::string method;
    bool all_equal = std::all_of(groups.begin(), groups.end(), [&](unsigned g) { return g == groups[0]; });
    if (by_domain && has(affinity_domains, domain)) method = "affinity_domain";
    else if (all_equal && equally) method = "equally";
    else if (by_counts) method = "by_counts";
    else continue;
    if (groups.size() == 1) {
      configs.front().same_as.push_back(level.name);  // one group of every unit is no fission
      continue;
    }
    auto same = std::find_if(configs.begin(), configs.end(), [&](const FissionConfig& c) { return c.groups == groups; });
    if (same != configs.end()) {
      same->same_as.push_back(level.name);
      continue;
    }
    configs.push_back({level.name, groups, method, {}});
  }
  return configs;
}

std::vector<FissionConfig> cpu_fission_configs(unsigned compute_units, const std::vector<std::string>& partition_types,
                                               const std::vector<std::string>& affinity_domains) {
  std::vector<TopologyLevel> levels;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) {
      const std::pair<hwloc_obj_type_t, const char*> kinds[] = {
          {HWLOC_OBJ_L1CACHE, "L1"}, {HWLOC_OBJ_L2CACHE, "L2"}, {HWLOC_OBJ_L3CACHE, "L3"},
          {HWLOC_OBJ_L4CACHE, "L4"}, {HWLOC_OBJ_NUMANODE, "numa"}};
      for (auto [type, name] : kinds) {
        int n = hwloc_get_nbobjs_by_type(topo, type);
        if (n <= 0) continue;
        TopologyLevel level{name, {}};
        for (int i = 0; i < n; ++i) {
          hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
          int w = obj && obj->cpuset ? hwloc_bitmap_weight(obj->cpuset) : 0;
          level.pus_per_object.push_back(w > 0 ? static_cast<unsigned>(w) : 0u);
        }
        levels.push_back(std::move(level));
      }
    }
    hwloc_topology_destroy(topo);
  }
  return fission_configs_from_topology(compute_units, levels, partition_types, affinity_domains);
}

const FissionSet& Device::fission(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = fissions_.find(name); it != fissions_.end()) return *it->second;
  auto cfg = std::find_if(info_.fission_configs.begin(), info_.fission_configs.end(),
                          [&](const FissionConfig& c) { return c.name == name; });
  if (cfg == info_.fission_configs.end()) {
    std::string offered;
    for (const auto& c : info_.fission_configs) offered += (offered.empty() ? "" : ", ") + c.name;
    throw_error(errc::invalid_argument, "device '" + info_.name + "' has no fission configuration '" + name + "'",
                {.device = info_.name, .fix = "use one of: " + (offered.empty() ? std::string("none") : offered)});
  }
  auto set = std::make_unique<FissionSet>();
  set->config = *cfg;
  ErrorContext where{.api_call = "clCreateSubDevices", .device = info_.name};
  if (cfg->is_none()) {
    set->devices = {device_};
    set->context = context_;
  } else {
    std::vector<cl_device_partition_property> props;
    if (cfg->method == "affinity_domain") {
      cl_device_partition_property domain = CL_DEVICE_AFFINITY_DOMAIN_NUMA;
      if (cfg->name == "L1") domain = CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE;
      if (cfg->name == "L2") domain = CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE;
      if (cfg->name == "L3") domain = CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE;
      if (cfg->name == "L4") domain = CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE;
      props = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, domain, 0};
    } else if (cfg->method == "equally") {
      props = {CL_DEVICE_PARTITION_EQUALLY, static_cast<cl_device_partition_property>(cfg->groups[0]), 0};
    } else {
      props.push_back(CL_DEVICE_PARTITION_BY_COUNTS);
      for (unsigned g : cfg->groups) props.push_back(static_cast<cl_device_partition_property>(g));
      props.push_back(CL_DEVICE_PARTITION_BY_COUNTS_LIST_END);
      props.push_back(0);
    }
    cl_call(where, [&] {
      device_.createSubDevices(props.data(), &set->devices);
      set->context = cl::Context(set->devices);
    });
  }
  auto& ref = *set;
  fissions_[name] = std::move(set);
  return ref;
}

}  // namespace sinew::detail
