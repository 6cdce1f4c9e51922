// decompose/schedules/steal/policy.cpp — the work-stealing schedule (Tascell's): each queue starts
// with a contiguous range sized by the plan's shares and runs it in pieces; a queue whose range is
// done steals the upper part of the largest range another has not started (ranges.hpp), a run's
// ranges under one lock (run.cpp). Stolen ranges run the whole tree on the thief's device, as the
// dynamic schedule's chunks do: trees whose partitions meet mid-run are refused; a device that
// might not hold all of its ranges' buffers makes the plan run static. Training measures it at
// the fastest static split's platform levels and shares; the balancer never moves it (each run
// balances itself, and its next run starts where the last one's work ended).
#include "decompose/schedules/steal/run.hpp"
#include "decompose/schedules/steal/thresholds.hpp"
#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sinew::detail {
namespace {

// The devices `c` gives a share.
std::size_t working_shares(const Config& c) {
  return static_cast<std::size_t>(std::count_if(c.shares.begin(), c.shares.end(), [](double x) { return x > 0; }));
}

// Device d's queues, each weighted by its device's share split over them (a discrete device's
// overlap queues alike, a CPU's sub-devices by their compute units).
void add_queues(StealPlan& plan, std::size_t d, const DeviceInfo& info, const Config& config, double share) {
  std::vector<std::pair<unsigned, double>> queues;  // (sub-device or queue, weight within the device)
  const FissionConfig* fission = nullptr;
  for (const auto& f : info.fission_configs)
    if (f.name == config.fission) fission = &f;
  if (info.discrete) {
    for (unsigned q = 0; q < config.overlap; ++q) queues.push_back({q, 1});
  } else if (!fission || fission->is_none()) {
    queues.push_back({0, 1});
  } else {
    for (unsigned s = 0; s < fission->groups.size(); ++s) queues.push_back({s, static_cast<double>(fission->groups[s])});
  }
  double within = 0;
  for (const auto& q : queues) within += q.second;
  for (const auto& [at, weight] : queues) {
    Partition p;
    p.device = d;
    (info.discrete ? p.queue : p.sub_device) = at;
    p.index = plan.queues.size();
    plan.queues.push_back(p);
    plan.weights.push_back(share * weight / within);
    plan.moves_data.push_back(info.discrete);
  }
}

// The size thresholds of `config` per runtime device (a plain number is every device's).
std::vector<std::size_t> per_device(const RangeThreshold& t, std::size_t devices) {
  std::vector<std::size_t> out(devices, t.every.value_or(0));
  for (std::size_t d = 0; d < t.device.size() && d < devices; ++d)
    if (t.device[d]) out[d] = t.device[d];
  return out;
}

Config as_static(Config c) {
  c.schedule = "static";
  c.items.erase("least_range");
  c.items.erase("most_range");
  return c;
}

class StealSchedule final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "steal"; }

  // Stolen ranges run the whole tree on the thief's device: partitions that must meet mid-run
  // cannot be stolen.
  bool accepts(const Analysis& an) const override { return an.streamable; }
  void check_tree(const Analysis& an, const Config& config, const std::string& where) const override {
    refuse_joined_tree(an, config, where, "steal");
  }

  Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                          const std::vector<DeviceInfo>& devices, const Streaming& streaming) const override {
    Decomposition dec;
    dec.config = config;
    dec.total_units = total;
    dec.granule = granule;
    dec.policy = this;
    auto plan = std::make_shared<StealPlan>();
    plan->tuning = streaming.tuning.steal;
    double sum = 0;
    for (double s : config.shares) sum += s;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      if (config.shares[d] <= 0) continue;
      require_every_piece_fits(config, devices[d], total, streaming, "steal", "ranges");
      add_queues(*plan, d, devices[d], config, config.shares[d] / sum);
    }
    const RangeThreshold least = range_threshold(config, "least_range");
    plan->least_of_device = per_device(least, devices.size());
    plan->most_of_device = per_device(range_threshold(config, "most_range"), devices.size());
    check_thresholds(config, *plan, devices, granule);
    // No least_range for every device: a queue's even share over least_range_parts, so that a run
    // ends in a few dozen ranges rather than in single granules.
    const std::size_t floor_units =
        least.every ? *least.every
                    : total / (plan->tuning.least_range_parts * std::max<std::size_t>(1, plan->queues.size()));
    plan->least_units = std::max<std::size_t>(1, (floor_units + granule - 1) / granule) * granule;
    dec.plan = std::move(plan);
    return dec;
  }

  // Ranges keep their buffers to the end of the run, and any queue may steal any part of the
  // units: where a device might not hold that, the plan runs static, dragged through.
  Config fit_memory(const Config& config, std::size_t total, std::size_t granule,
                    const std::vector<DeviceInfo>& devices, const Streaming& streaming) const override {
    return static_where_pieces_may_not_fit(config, as_static(config), total, granule, devices, streaming);
  }

  std::string explain(const Decomposition& dec, const std::vector<DeviceInfo>& devices) const override {
    const StealPlan& plan = steal_plan(dec);
    const StealRanges first(plan, dec.total_units, dec.granule, plan.weights);
    std::ostringstream s;
    s << "decomposition: " << dec.total_units << " units, granule " << dec.granule << ", steal: "
      << plan.queues.size() << " queue(s) run their ranges in pieces that leave the fastest other device its part"
      << " of the rest (" << plan.tuning.piece_fraction
      << " of what is left between alike devices; a discrete device's queue begins each range with "
      << plan.tuning.first_piece_fraction << " of it; at least " << plan.least_units
      << " units) and steal the upper part of the largest range not started, config " << dec.config.str() << "\n";
    for (std::size_t q = 0; q < plan.queues.size(); ++q) {
      const auto& p = plan.queues[q];
      const auto& d = devices.at(p.device);
      s << "  queue " << q << " " << d.id() << " (" << d.name << ")";
      if (!d.discrete && dec.config.fission != "none") s << " sub-device " << p.sub_device;
      if (d.discrete) s << " queue " << p.queue;
      const auto& r = first.queues()[q];
      s << ": weight " << std::setprecision(3) << plan.weights[q] << ", starts with units [" << r.next << ", "
        << r.end << ")";
      if (plan.least_of_device.at(p.device)) s << ", takes no range under " << plan.least_range(q, dec.granule);
      if (plan.most_of_device.at(p.device)) s << ", none over " << plan.most_range(q, dec.granule);
      s << "\n";
    }
    return s.str();
  }

  std::shared_ptr<ScheduleMemory> new_memory() const override { return std::make_shared<StealMemory>(); }
  std::unique_ptr<ScheduleRun> start_run(const Decomposition& dec, ScheduleMemory* memory) const override {
    return std::make_unique<StealRun>(dec, dynamic_cast<StealMemory*>(memory));
  }

  // Stealing ends every device together whatever its share: the shares are where ranges start,
  // not what each device runs.
  bool places_shares() const override { return false; }

  bool trains() const override { return true; }
  // The fastest static split's fission, overlap and shares, its shares moved by its device times
  // towards finishing together: the ranges start where a static split would balance, and
  // stealing corrects what the work's irregularity and the machine's state move. Even shares
  // where no split was measured. Each device's least_range comes from its fitted fixed cost.
  void train(TrainingSession& session) const override {
    std::optional<TrainingSession::Point> split;
    for (const auto& p : session.points())
      if (detail::places_shares(p.config) && working_shares(p.config) > 1 && (!split || p.time_ms < split->time_ms))
        split = p;
    Config c = split ? split->config : session.fastest();
    c.shares = split ? session.rebalanced(*split) : session.even_shares();
    c.schedule = "steal";
    c.items.clear();
    // Each device takes no range its fixed cost would dominate (docs/decisions/141).
    std::vector<std::optional<std::pair<double, double>>> costs(c.shares.size());
    for (std::size_t d = 0; d < c.shares.size(); ++d)
      if (c.shares[d] > 0)
        if (const auto cost = session.device_cost(d, c)) costs[d] = std::pair{cost->fixed_ms, cost->ms_per_unit};
    if (const std::string least = least_range_for_fixed_costs(costs, 1); !least.empty()) c.items["least_range"] = least;
    session.measure(c);
  }

 private:
  // A device's most_range under its least range leaves it no range to take.
  static void check_thresholds(const Config& config, const StealPlan& plan, const std::vector<DeviceInfo>& devices,
                               std::size_t granule) {
    for (std::size_t q = 0; q < plan.queues.size(); ++q) {
      const std::size_t d = plan.queues[q].device;
      const std::size_t most = plan.most_range(q, granule);
      if (!most || most >= plan.least_of_device[d]) continue;
      throw_error(errc::invalid_argument,
                  "plan " + config.str() + " gives device " + device_text(devices.at(d)) + " a most_range of " +
                      std::to_string(plan.most_of_device[d]) + " units under its least_range of " +
                      std::to_string(plan.least_of_device[d]),
                  {.argument = "most_range", .device = devices.at(d).name,
                   .fix = "give most_range at least least_range for device " + std::to_string(d)});
    }
  }
};

}  // namespace

const SchedulePolicy& steal_schedule() {
  static const StealSchedule policy;
  return policy;
}

}  // namespace sinew::detail
