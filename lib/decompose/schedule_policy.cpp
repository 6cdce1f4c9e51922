// decompose/schedule_policy.cpp — what a schedule policy does unless it says otherwise (the
// static schedule's rules), and finding a policy by name (the registry: schedules/registry.cpp).
#include "decompose/schedule_policy.hpp"

#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <set>
#include <sstream>
#include <tuple>

namespace sinew::detail {
namespace {

// A run of partitions placed before it: each queue with a partition takes part, in (device,
// sub-device, queue) order, and runs its partitions.
class PlacedRun final : public ScheduleRun {
 public:
  explicit PlacedRun(const Decomposition& dec) {
    std::set<std::tuple<std::size_t, unsigned, unsigned>> keys;
    for (const auto& p : dec.parts) keys.emplace(p.device, p.sub_device, p.queue);
    for (const auto& [device, sub_device, queue] : keys) {
      Partition q;
      q.device = device;
      q.sub_device = sub_device;
      q.queue = queue;
      queues_.push_back(q);
    }
  }
  const std::vector<Partition>& queues() const override { return queues_; }

 private:
  std::vector<Partition> queues_;
};

}  // namespace

Config SchedulePolicy::fit_memory(const Config& config, std::size_t total, std::size_t granule,
                                  const std::vector<DeviceInfo>& devices, const Streaming& streaming) const {
  return fit_static_shares(config, total, granule, devices, streaming);
}

std::string SchedulePolicy::explain(const Decomposition& dec, const std::vector<DeviceInfo>& devices) const {
  std::ostringstream s;
  s << "decomposition: " << dec.total_units << " units, granule " << dec.granule << ", " << dec.parts.size()
    << " partition(s), config " << dec.config.str() << "\n";
  for (const auto& p : dec.parts) {
    const auto& d = devices.at(p.device);
    s << "  #" << p.index << " " << d.id() << " (" << d.name << ")";
    if (!d.discrete && dec.config.fission != "none") s << " sub-device " << p.sub_device;
    if (d.discrete) s << " queue " << p.queue;
    s << ": units [" << p.first << ", " << p.first + p.units << ") = " << p.units << "\n";
  }
  return s.str();
}

std::unique_ptr<ScheduleRun> SchedulePolicy::start_run(const Decomposition& dec, ScheduleMemory* memory) const {
  (void)memory;
  return std::make_unique<PlacedRun>(dec);
}

const SchedulePolicy& schedule_policy(std::string_view name) {
  if (const SchedulePolicy* p = find_schedule_policy(name)) return *p;
  throw_error(errc::invalid_argument, "no schedule policy named '" + std::string(name) + "'",
              {.argument = "schedule", .fix = "schedule takes " + schedule_spellings()});
}

const SchedulePolicy& schedule_policy_of(const Config& config) { return schedule_policy(config.schedule); }

bool places_shares(const Config& config) {
  const SchedulePolicy* p = find_schedule_policy(config.schedule);
  return p && p->places_shares();
}

}  // namespace sinew::detail
