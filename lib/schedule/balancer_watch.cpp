// schedule/balancer_watch.cpp — the runs the two-level balancer keeps: each device's regime and
// run-to-run changes, and the current plan's runs (schedule/balancer_watch.hpp).
#include "schedule/balancer_watch.hpp"

#include "schedule/model/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sinew::detail {

namespace {

double slowest(const std::vector<double>& ms) { return ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()); }

}  // namespace

void DeviceWatch::record_first_run(double share, double ms, const BalancerTuning::Watch& tuning) {
  regime_.push_back({share, ms, true});
  if (regime_.size() > tuning.regime_runs) regime_.pop_front();
}

void DeviceWatch::record(double share, double ms, double previous_ms, const BalancerTuning::Watch& tuning) {
  if (previous_ms > 0) {
    changes_.push_back(std::abs(std::log(ms / previous_ms)));
    if (changes_.size() > tuning.noise_runs) changes_.pop_front();
  }
  regime_.push_back({share, ms});
  if (regime_.size() > tuning.regime_runs) regime_.pop_front();
}

void PlanRuns::add(std::vector<double> device_ms, std::size_t keep) {
  runs_.push_back(std::move(device_ms));
  if (runs_.size() > keep) runs_.pop_front();
}

void PlanRuns::start_plan(bool changed) {
  first_run_pending_ = changed;
  if (changed) recalled_.clear();
  runs_.clear();  // run-to-run changes and steps are judged within one plan
}

bool PlanRuns::take_first_run() { return std::exchange(first_run_pending_, false); }

std::size_t PlanRuns::first_of_last(std::size_t last) const {
  return last && last < runs_.size() ? runs_.size() - last : 0;
}

double PlanRuns::slowest_median(std::size_t last) const {
  std::vector<double> t;
  for (std::size_t i = first_of_last(last); i < runs_.size(); ++i) t.push_back(slowest(runs_[i]));
  return median(std::move(t));
}

std::size_t PlanRuns::slowest_device(std::size_t devices, std::size_t last) const {
  std::size_t out = 0;
  double worst = -1;
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<double> t;
    for (std::size_t i = first_of_last(last); i < runs_.size(); ++i) t.push_back(runs_[i][d]);
    if (const double m = median(std::move(t)); m > worst) worst = m, out = d;
  }
  return out;
}

std::vector<double> PlanRuns::window_medians(std::size_t devices, std::size_t window) const {
  std::vector<double> out(devices, 0.0);
  const std::size_t from = runs_.size() - std::min(runs_.size(), window);
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<double> v;
    for (std::size_t i = from; i < runs_.size(); ++i) v.push_back(runs_[i][d]);
    out[d] = median(std::move(v));
  }
  return out;
}

void PlanRuns::recall(const std::vector<double>& plan_ms, std::size_t keep) {
  recalled_.clear();
  for (std::size_t i = plan_ms.size() - std::min(plan_ms.size(), keep); i < plan_ms.size(); ++i)
    if (plan_ms[i] > 0 && std::isfinite(plan_ms[i])) recalled_.push_back(std::log(plan_ms[i]));
}

}  // namespace sinew::detail
