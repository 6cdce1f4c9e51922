// test/unit/device_infos.hpp — devices for the unit tests that plan without OpenCL: a CPU of
// eight compute units (fission none, and L2 where given its sub-devices' compute units) and a
// discrete GPU (overlap levels 1-4).
#pragma once

#include <sinew/device.hpp>

#include <cstddef>
#include <vector>

namespace sinew::testing {

inline DeviceInfo synthetic_cpu(std::size_t index, std::vector<unsigned> l2_groups = {}) {
  DeviceInfo d;
  d.index = index;
  d.kind = DeviceKind::cpu;
  d.name = "cpu";
  d.compute_units = 8;
  d.fission_configs.push_back({"none", {}, "", {}});
  if (!l2_groups.empty()) d.fission_configs.push_back({"L2", std::move(l2_groups), "by_counts", {}});
  return d;
}

inline DeviceInfo synthetic_gpu(std::size_t index) {
  DeviceInfo d;
  d.index = index;
  d.kind = DeviceKind::gpu;
  d.discrete = true;
  d.name = "gpu";
  d.overlap_levels = {1, 2, 3, 4};
  return d;
}

}  // namespace sinew::testing
