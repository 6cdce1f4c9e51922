// schedule/train_whole.cpp — the device of a leaf marked whole_range(), chosen by measurement
// after the trainer's plan (see train_whole.hpp).
#include "schedule/train_whole.hpp"

#include "decompose/schedule_policy.hpp"
#include "exec/whole_leaves.hpp"
#include "platform/plan_items.hpp"
#include "schedule/model/statistics.hpp"
#include "schedule/train_ledger.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>

namespace sinew::detail {
namespace {

// Whether `plan` leaves the whole leaf's device to be chosen: it places shares on more than one
// device and names no whole device of its own.
bool chooses_whole_device(const Config& plan) {
  return places_shares(plan) && working_devices(plan) > 1 && !whole_item(plan, "whole");
}

Config with_whole_device(Config plan, std::size_t device) {
  plan.set("whole", std::to_string(device));
  return plan;
}

// `plan` run `quality` times through the ledger (the median of each time counts), added to its
// points as it ran with its whole device.
const TrainingPoint& measure_whole(TrainingLedger& ledger, const Measure& measure, const Config& plan,
                                   unsigned quality, std::size_t devices) {
  std::vector<double> times;
  std::vector<std::vector<double>> per_device(devices);
  Config ran = plan;
  for (unsigned q = 0; q < quality; ++q) {
    const Measurement m = ledger.run(measure, plan);
    if (!m.ran.shares.empty()) ran = with_whole_device(m.ran, *whole_item(plan, "whole"));
    times.push_back(m.time_ms);
    for (std::size_t d = 0; d < devices && d < m.device_ms.size(); ++d) per_device[d].push_back(m.device_ms[d]);
  }
  std::vector<double> device_times(devices, 0.0);
  for (std::size_t d = 0; d < devices; ++d)
    if (!per_device[d].empty()) device_times[d] = median(per_device[d]);
  return ledger.add({ran, median(times), device_times});
}

}  // namespace

std::vector<std::size_t> devices_holding(const std::vector<DeviceInfo>& devices, const WholeLeafNeeds& needs) {
  std::vector<std::size_t> holding;
  for (const DeviceInfo& d : devices)
    if (needs.bytes <= d.memory() && (!d.max_alloc || needs.largest <= d.max_alloc)) holding.push_back(d.index);
  return holding;
}

std::size_t whole_device_runs(const std::vector<std::size_t>& candidates, const TrainingOptions& options) {
  if (options.purpose != TrainingPurpose::train || candidates.size() < 2) return 0;
  return std::max(1u, options.quality) * (candidates.size() - 1);
}

void choose_whole_device(TrainingResult& result, const std::vector<DeviceInfo>& devices,
                         const std::vector<std::size_t>& candidates, const Measure& measure,
                         const TrainingOptions& options, std::size_t executions, const Progress& progress) {
  if (whole_device_runs(candidates, options) == 0 || !chooses_whole_device(result.best)) return;
  const std::size_t chosen = whole_leaf_device(result.best);
  const unsigned quality = std::max(1u, options.quality);
  // The trainer's budgets and clock go on: builds aside, as the trainer's runs were counted.
  TrainingLedger ledger(result, executions, progress, time_budget(options));
  // The trainer's plan is measured already: its device is the one to beat.
  Config best = with_whole_device(result.best, chosen);
  double best_ms = result.time_ms;
  bool measured = false;
  ledger.phase(0, [&] {
    for (std::size_t device : candidates) {
      if (device == chosen || device >= devices.size()) continue;
      if (!ledger.take(quality, result.time_ms)) return;
      const TrainingPoint& point = measure_whole(ledger, measure, with_whole_device(result.best, device), quality,
                                                 devices.size());
      measured = true;
      std::ostringstream line;
      line << std::fixed << std::setprecision(3) << "[" << ledger.status() << "] whole leaf on device " << device
           << ": " << point.config.str() << " -> " << point.time_ms << " ms (device " << chosen << ": "
           << result.time_ms << " ms)";
      ledger.note(line.str());
      if (point.time_ms < best_ms) best = point.config, best_ms = point.time_ms;
    }
  });
  ledger.into(result);
  if (!measured) return;
  result.best = best;
  result.time_ms = best_ms;
}

}  // namespace sinew::detail
