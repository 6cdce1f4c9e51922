// test/pocl/reverse_static_schedule.hpp — a throwaway schedule policy, registered only in the
// test binaries that run the shared schedule suite (schedule_suite_test.cpp): the static shares
// placed from the last device to the first (the last device with a share runs the first units).
// It exists to show that a policy is new files and one registration line
// (docs/ARCHITECTURE.md, "Adding a schedule policy"), and that the suite guards it.
#pragma once

#include "decompose/schedule_policy.hpp"

#include <vector>

namespace sinew::testing {

class ReverseStaticSchedule final : public detail::SchedulePolicy {
 public:
  std::string_view name() const override { return "reverse_static"; }

  detail::Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                                  const std::vector<DeviceInfo>& devices,
                                  const detail::Streaming& streaming) const override {
    detail::Decomposition dec;
    dec.config = config;
    dec.total_units = total;
    dec.granule = granule;
    dec.policy = this;
    // The static split, its devices' blocks of units laid out last device first (each device's
    // own partitions in their order).
    const std::vector<detail::Partition> split = detail::split_static(total, granule, config, devices, streaming);
    std::size_t first = 0;
    for (std::size_t d = devices.size(); d-- > 0;)
      for (const detail::Partition& p : split) {
        if (p.device != d) continue;
        detail::Partition q = p;
        q.index = dec.parts.size();
        q.first = first;
        first += q.units;
        dec.parts.push_back(q);
      }
    return dec;
  }
};

}  // namespace sinew::testing
