// decompose/schedules/static.cpp — the static schedule: every unit placed before the run by the
// plan's shares (split_static), each queue running its partitions. What SchedulePolicy does by
// default is this schedule's: the static rule for memory-capped devices, the explanation of
// placed partitions, a run whose queues are the partitions' (schedule_policy.cpp).
#include "decompose/schedule_policy.hpp"

namespace sinew::detail {
namespace {

class StaticSchedule final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "static"; }

  Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                          const std::vector<DeviceInfo>& devices, const Streaming& streaming) const override {
    Decomposition dec;
    dec.config = config;
    dec.total_units = total;
    dec.granule = granule;
    dec.policy = this;
    dec.parts = split_static(total, granule, dec.config, devices, streaming);
    return dec;
  }
};

}  // namespace

const SchedulePolicy& static_schedule() {
  static const StaticSchedule policy;
  return policy;
}

}  // namespace sinew::detail
