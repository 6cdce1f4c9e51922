// schedule/train_whole.cpp — the device of a leaf marked whole_range(), chosen by measurement
// after the trainer's plan (see train_whole.hpp).
#include "schedule/train_whole.hpp"

#include "decompose/schedule_policy.hpp"
#include "exec/whole_leaves.hpp"
#include "platform/plan_items.hpp"
#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <sstream>
#include <string>

namespace sinew::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Whether `plan` leaves the whole leaf's device to be chosen: it places shares on more than one
// device and names no whole device of its own.
bool chooses_whole_device(const Config& plan) {
  return places_shares(plan) && working_devices(plan) > 1 && !whole_item(plan, "whole");
}

Config with_whole_device(Config plan, std::size_t device) {
  plan.set("whole", std::to_string(device));
  return plan;
}

}  // namespace

std::vector<std::size_t> devices_holding(const std::vector<DeviceInfo>& devices, const WholeLeafNeeds& needs) {
  std::vector<std::size_t> holding;
  for (const DeviceInfo& d : devices)
    if (needs.bytes <= d.memory() && (!d.max_alloc || needs.largest <= d.max_alloc)) holding.push_back(d.index);
  return holding;
}

void choose_whole_device(TrainingResult& result, const std::vector<DeviceInfo>& devices,
                         const std::vector<std::size_t>& candidates, const Measure& measure,
                         const TrainingOptions& options, std::size_t executions, const Progress& progress) {
  if (options.purpose != TrainingPurpose::train || candidates.size() < 2 || !chooses_whole_device(result.best)) return;
  const std::size_t chosen = whole_leaf_device(result.best);
  const unsigned quality = std::max(1u, options.quality);
  const auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // The trainer's plan is measured already: its device is the one to beat.
  Config best = with_whole_device(result.best, chosen);
  double best_ms = result.time_ms;
  bool measured = false;
  for (std::size_t device : candidates) {
    if (device == chosen || device >= devices.size()) continue;
    const bool executions_left = result.executions + quality <= executions;
    const double expected_s = result.seconds + elapsed_s() + quality * result.time_ms / 1000;
    const bool time_left = result.budget_seconds <= 0 || expected_s <= result.budget_seconds;
    if (!executions_left || !time_left) {
      result.end = executions_left ? TrainingEnd::time : TrainingEnd::executions;
      if (progress) progress("whole leaf's device: stopped, the training's " +
                             std::string(executions_left ? "time budget" : "executions") + " spent");
      break;
    }
    const Config plan = with_whole_device(result.best, device);
    std::vector<double> times, device_times(devices.size(), 0.0);
    std::vector<std::vector<double>> per_device(devices.size());
    Config ran = plan;
    for (unsigned q = 0; q < quality; ++q) {
      const Measurement m = measure(plan);
      if (!m.ran.shares.empty()) ran = with_whole_device(m.ran, device);
      times.push_back(m.time_ms);
      for (std::size_t d = 0; d < devices.size() && d < m.device_ms.size(); ++d) per_device[d].push_back(m.device_ms[d]);
    }
    result.executions += quality;
    for (std::size_t d = 0; d < devices.size(); ++d)
      if (!per_device[d].empty()) device_times[d] = median(per_device[d]);
    const double time_ms = median(times);
    result.points.push_back({ran, time_ms, device_times});
    measured = true;
    if (progress) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(3) << "whole leaf on device " << device << ": " << ran.str() << " -> "
           << time_ms << " ms (device " << chosen << ": " << result.time_ms << " ms)";
      progress(line.str());
    }
    if (time_ms < best_ms) best = ran, best_ms = time_ms;
  }
  result.seconds += elapsed_s();
  if (!measured) return;
  result.best = best;
  result.time_ms = best_ms;
}

}  // namespace sinew::detail
