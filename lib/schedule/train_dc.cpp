// schedule/train_dc.cpp — training a divide-and-conquer tree: the HPU paper's model (DcModel),
// then the crossover levels and the shares around its best, the fastest measured plan kept.
#include "schedule/train_dc.hpp"

#include "decompose/decompose.hpp"
#include "platform/error.hpp"
#include "schedule/train_ledger.hpp"
#include "schedule/trainer.hpp"
#include "tree/nodes/divide_and_conquer.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>

namespace sinew::detail {

Config DcModel::single(std::size_t device) const {
  Config c = Config::single(device, level_ms.size());
  set_crossover_item(c, static_cast<unsigned>(levels()));
  set_upper_item(c, device);
  return c;
}

Config DcModel::plan(std::size_t crossover, std::size_t upper) const {
  Config c;
  set_crossover_item(c, static_cast<unsigned>(crossover));
  set_upper_item(c, upper);
  // Each device's time for its whole-vector part of the split levels (and its transfers): the
  // shares that make them finish together are proportional to the rates.
  double sum = 0;
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    double t = transfer_ms[d];
    for (std::size_t l = 0; l < crossover && l < levels(); ++l) t += level_ms[d][l];
    c.shares.push_back(t > 0 ? 1 / t : 0);
    sum += c.shares.back();
  }
  for (double& x : c.shares) x = sum > 0 ? x / sum : 1.0 / static_cast<double>(c.shares.size());
  // In whole subproblems of the highest split level; the upper device takes what rounding leaves.
  const double steps = static_cast<double>(crossover - 1 < subproblems.size() ? subproblems[crossover - 1] : 0);
  if (steps >= 1) {
    double given = 0;
    for (std::size_t d = 0; d < c.shares.size(); ++d)
      if (d != upper) given += c.shares[d] = std::round(c.shares[d] * steps) / steps;
    c.shares[upper] = std::max(0.0, 1.0 - given);
  }
  return c;
}

double DcModel::predict(const Config& c) const {
  const std::size_t crossover = std::min<std::size_t>(crossover_item(c).value_or(0), levels());
  const std::size_t upper = upper_item(c).value_or(static_cast<std::size_t>(
      std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin()));
  std::size_t active = 0;
  for (double x : c.shares) active += x > 0;
  const bool on_upper = active == 1 && c.shares[upper] > 0;
  double split = 0, moved = 0;
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    if (c.shares[d] <= 0) continue;
    double t = transfer_ms[d];
    for (std::size_t l = 0; l < crossover; ++l) t += level_ms[d][l];
    split = std::max(split, c.shares[d] * t);
    moved += c.shares[d] * transfer_ms[d];  // each part back to the host, and the result back to it
  }
  if (on_upper) {  // one device from the leaves to the top: no crossing
    double t = transfer_ms[upper];
    for (std::size_t l = 0; l < levels(); ++l) t += level_ms[upper][l];
    return t;
  }
  double top = crossover < levels() ? transfer_ms[upper] + moved : 0;
  for (std::size_t l = crossover; l < levels(); ++l) top += level_ms[upper][l];
  return split + top;
}

Config DcModel::best() const {
  Config best = single(0);
  double time = predict(best);
  auto consider = [&](const Config& c) {
    if (const double t = predict(c); t < time) best = c, time = t;
  };
  for (std::size_t d = 0; d < level_ms.size(); ++d) {
    consider(single(d));
    for (std::size_t c = 1; c < levels(); ++c) consider(plan(c, d));
  }
  return best;
}

namespace {

// One divide-and-conquer training's measuring: a plan measured before is its point; a new one
// runs `quality` times, the medians count, and its levels' medians are kept for the model.
class CrossoverSearch {
 public:
  CrossoverSearch(const std::vector<DeviceInfo>& devices, const Measure& measure, unsigned quality,
                  std::size_t executions, const Progress& progress, TimeBudget time)
      : devices_(devices), measure_(measure), quality_(quality), ledger_(executions, progress, time) {}

  TrainingLedger& ledger() { return ledger_; }
  // Nullptr where the budget is spent.
  const TrainingPoint* measure(const Config& c);
  // The model's runs: a first, untimed run (programs built, buffers pooled), then each device
  // alone. False where the budget is spent.
  bool measure_model(DcModel& model);
  // Every crossover level on `upper` with the model's shares, then the shares below the fastest
  // measured level moved each way by `move` of each device's share.
  void sweep(const DcModel& model, std::size_t upper, double move);

 private:
  const std::vector<DeviceInfo>& devices_;
  const Measure& measure_;
  unsigned quality_;
  TrainingLedger ledger_;
  std::vector<double> level_medians_;  // the last measured point's levels, for the model
};

const TrainingPoint* CrossoverSearch::measure(const Config& c) {
  if (const TrainingPoint* known = ledger_.find(c)) return known;
  if (!ledger_.take(quality_)) return nullptr;
  std::vector<double> times;
  std::vector<std::vector<double>> dev(devices_.size()), level;
  Config ran = c;
  try {
    for (unsigned q = 0; q < quality_; ++q) {
      Measurement m = ledger_.run(measure_, c);
      if (!m.ran.shares.empty()) ran = m.ran;
      times.push_back(m.time_ms);
      for (std::size_t d = 0; d < devices_.size(); ++d) dev[d].push_back(d < m.device_ms.size() ? m.device_ms[d] : 0);
      level.resize(std::max(level.size(), m.level_ms.size()));
      for (std::size_t l = 0; l < m.level_ms.size(); ++l) level[l].push_back(m.level_ms[l]);
    }
  } catch (const MemoryShortfall&) {
    if (ledger_.points().empty()) throw;  // as PlanSearch::measure: not a point
    ledger_.note("crossover=" + std::to_string(*crossover_item(c)) + " shares " + shares_str(c.shares) +
                 ": not run, a device cannot hold its share");
    return nullptr;
  }
  TrainingPoint p{ran, median(times), {}};
  for (auto& v : dev) p.device_ms.push_back(median(v));
  const TrainingPoint& added = ledger_.add(std::move(p));
  std::ostringstream line;
  line << std::fixed << std::setprecision(3) << "[" << ledger_.status() << "] crossover="
       << *crossover_item(c) << " upper=" << *upper_item(c) << " shares " << shares_str(added.config.shares)
       << " -> " << added.time_ms << " ms";
  ledger_.note(line.str());
  level_medians_.clear();
  for (auto& v : level) level_medians_.push_back(median(v));
  return &added;
}

bool CrossoverSearch::measure_model(DcModel& model) {
  const std::size_t levels = model.subproblems.size();
  model.level_ms.assign(devices_.size(), std::vector<double>(levels, 0.0));
  if (!ledger_.take(1)) return false;
  ledger_.run(measure_, model.single(0));  // a timed run, recorded as every run of the model is
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const TrainingPoint* p = measure(model.single(d));
    if (!p) return false;
    double sum = 0;
    for (std::size_t l = 0; l < levels && l < level_medians_.size(); ++l)
      sum += model.level_ms[d][l] = level_medians_[l];
    model.transfer_ms.push_back(std::max(0.0, p->time_ms - sum));
  }
  return true;
}

void CrossoverSearch::sweep(const DcModel& model, std::size_t upper, double move) {
  const std::size_t levels = model.levels();
  for (std::size_t c = 1; c < levels; ++c)
    if (!measure(model.plan(c, upper))) return;
  const Config fastest = ledger_.fastest().config;
  if (crossover_item(fastest) && *crossover_item(fastest) < levels)
    for (std::size_t d = 0; d < devices_.size(); ++d)
      for (double f : {1 - move, 1 + move}) {
        Config moved = fastest;
        moved.shares[d] *= f;
        const double sum = std::accumulate(moved.shares.begin(), moved.shares.end(), 0.0);
        if (moved.shares[d] <= 0 || sum <= 0) continue;
        for (double& x : moved.shares) x /= sum;
        if (!measure(moved)) return;
      }
}

class DivideAndConquerTrainer final : public Trainer {
 public:
  std::string_view name() const override { return "dc_model"; }
  TrainingResult train(const TrainingRequest& r) const override {
    return train_divide_and_conquer(r.devices, r.measure, r.options, r.levels, r.progress, nullptr, r.start);
  }
};

}  // namespace

TrainingResult train_divide_and_conquer(const std::vector<DeviceInfo>& devices, const Measure& measure,
                                        const TrainingOptions& options, const std::vector<std::size_t>& subproblems,
                                        const Progress& progress, Config* analytic,
                                        const std::optional<Config>& start) {
  const std::size_t levels = subproblems.size();
  if (devices.empty()) throw_error(errc::no_device, "training needs at least one device");
  TrainingResult r;
  r.strategy = "dc_model";
  r.quality = std::max(1u, options.quality);
  // The model's runs are needed whatever the budget: one per device, each `quality` times.
  const std::size_t budget = std::max(options.max_executions, (devices.size() + 1) * r.quality + 1);
  CrossoverSearch search(devices, measure, r.quality, budget, progress, time_budget(options));
  search.ledger().phase(0, [&] {
    DcModel model;
    model.subproblems = subproblems;
    if (!search.measure_model(model)) return;
    const Config best = model.best();
    if (analytic) *analytic = best;
    const TrainingPoint* measured = search.measure(best);
    if (!measured) return;
    r.model_choice = ModelChoice{best, model.predict(best), measured->time_ms};
    if (start && start->shares.size() == devices.size()) {
      Config from = *start;
      set_crossover_item(from, static_cast<unsigned>(std::min<std::size_t>(crossover_item(from).value_or(0), levels)));
      if (!upper_item(from) || *upper_item(from) >= devices.size()) set_upper_item(from, upper_item(best).value_or(0));
      if (!search.measure(from)) return;
    }
    // The crossover levels on the model's upper device, then the shares below the best (not in
    // a derived plan's check nor the balancer's level 2).
    const bool sweeping =
        options.purpose != TrainingPurpose::check_derived && options.purpose != TrainingPurpose::rebalance;
    if (devices.size() > 1 && sweeping)
      search.sweep(model, upper_item(best).value_or(0), options.tuning.crossover_share_move);
  });
  const TrainingPoint& best = search.ledger().fastest();
  r.best = best.config;
  r.time_ms = best.time_ms;
  search.ledger().into(r);
  return r;
}

std::unique_ptr<const Trainer> divide_and_conquer_trainer() { return std::make_unique<DivideAndConquerTrainer>(); }

}  // namespace sinew::detail
