// decompose/schedules/dynamic/policy.cpp — the dynamic (guided) schedule: no units placed before
// the run; the plan's shares weigh the slots that take chunks as they get ready (chunks.hpp), a
// run's cursor (run.cpp) deals them out. Trees whose partitions meet mid-run are refused; a
// device that might not hold all its chunks' buffers makes the plan run static; training measures
// the plan at the best static plan's platform levels, weighted by each device's speed; the
// balancer never moves it (each run balances itself).
#include "decompose/schedules/dynamic/chunks.hpp"
#include "decompose/schedules/dynamic/run.hpp"
#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sinew::detail {
namespace {

// The plan item this policy owns: min_chunk, the least units of a chunk.
const PlanItemRegistrar kMinChunkItem{PlanItem{
    .name = "min_chunk",
    .owner = "the dynamic schedule",
    .schedule = "dynamic",
    .accepts = [](const std::string& text) -> std::string {
      return whole_number(text) ? "" : "a whole number of units";
    }}};

// `c` under the static schedule, without the dynamic schedule's items.
Config as_static(Config c) {
  c.schedule = "static";
  c.items.erase("min_chunk");
  return c;
}
// `c` under the dynamic schedule, its chunk sizes left to the schedule.
Config as_dynamic(Config c) {
  c.schedule = "dynamic";
  c.items.erase("min_chunk");
  return c;
}

// The devices `c` gives a share.
std::size_t working_shares(const Config& c) {
  return static_cast<std::size_t>(std::count_if(c.shares.begin(), c.shares.end(), [](double x) { return x > 0; }));
}

// Device d's slots, each weighted by its device's share split over the device's slots (a
// discrete device's queues alike, a CPU's sub-devices by their compute units).
void add_slots(DynamicChunks& plan, std::size_t d, const DeviceInfo& info, const Config& config, double share) {
  std::vector<std::pair<unsigned, double>> slots;  // (sub-device or queue, weight within the device)
  const FissionConfig* f = nullptr;
  for (const auto& c : info.fission_configs)
    if (c.name == config.fission) f = &c;
  if (info.discrete) {
    for (unsigned q = 0; q < config.overlap; ++q) slots.push_back({q, 1});
  } else if (!f || f->is_none()) {
    slots.push_back({0, 1});
  } else {
    for (unsigned s = 0; s < f->groups.size(); ++s) slots.push_back({s, static_cast<double>(f->groups[s])});
  }
  double within = 0;
  for (const auto& s : slots) within += s.second;
  for (const auto& [at, w] : slots) {
    Partition p;
    p.device = d;
    (info.discrete ? p.queue : p.sub_device) = at;
    p.index = plan.slots.size();
    plan.slots.push_back(p);
    plan.weights.push_back(share * w / within);
    // (A CPU driven as discrete, SINEW_DISCRETE, computes on the host's cores all the same.)
    const unsigned cores = info.kind != DeviceKind::cpu ? 0
                           : f && !f->is_none()       ? f->groups.at(at)
                                                      : std::max(1u, info.compute_units);
    plan.host_cores.push_back(cores);
  }
}

// Per discrete device with a share: its static split alone (DynamicChunks::alone). Only where the
// plan shares the units over devices and leaves the chunk size to the schedule: a plan of one
// device, or with its own min_chunk, is cut as it asks.
void add_alone_splits(DynamicChunks& plan, std::size_t total, std::size_t granule, const Config& config,
                      const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  plan.alone.resize(devices.size());
  const auto sharing = std::count_if(config.shares.begin(), config.shares.end(), [](double s) { return s > 0; });
  for (std::size_t d = 0; d < devices.size() && sharing > 1 && !plan.min_chunk_given; ++d) {
    if (!(config.shares[d] > 0) || !devices[d].discrete) continue;
    Config one = config;
    std::fill(one.shares.begin(), one.shares.end(), 0.0);
    one.shares[d] = 1;
    plan.alone[d] = split_static(total, granule, one, devices, streaming);
  }
}

// The device's time alone per device, from `points` (static plans of one device), 0 where none.
std::vector<double> alone_times(const std::vector<TrainingSession::Point>& points, std::size_t devices) {
  std::vector<double> alone(devices, 0.0);
  for (const auto& p : points) {
    if (!places_shares(p.config)) continue;
    if (working_shares(p.config) != 1) continue;
    for (std::size_t d = 0; d < devices; ++d)
      if (p.config.shares[d] > 0 && (alone[d] == 0 || p.time_ms < alone[d])) alone[d] = p.time_ms;
  }
  return alone;
}

class DynamicSchedule final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "dynamic"; }

  // Chunks run the whole tree on the device that took them: partitions that must meet mid-run
  // cannot be chunks.
  bool accepts(const Analysis& an) const override { return an.streamable; }
  void check_tree(const Analysis& an, const Config& config, const std::string& where) const override {
    refuse_joined_tree(an, config, where, "dynamic");
  }

  Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                          const std::vector<DeviceInfo>& devices, const Streaming& streaming) const override {
    Decomposition dec;
    dec.config = config;
    dec.total_units = total;
    dec.granule = granule;
    dec.policy = this;
    auto plan = std::make_shared<DynamicChunks>();
    plan->tuning = streaming.tuning.dynamic;
    double sum = 0;
    for (double s : config.shares) sum += s;
    // Every device with a share takes part, whatever units its share would round to.
    for (std::size_t d = 0; d < devices.size(); ++d) {
      if (config.shares[d] <= 0) continue;
      require_every_piece_fits(config, devices[d], total, streaming, "dynamic", "chunks");
      add_slots(*plan, d, devices[d], config, config.shares[d] / sum);
    }
    // min_chunk 0: a slot's even share over least_chunk_parts, so the guided tail ends in a few
    // dozen chunks rather than in single granules (docs/decisions/021).
    const std::size_t min_chunk = min_chunk_item(config);
    const std::size_t floor_units =
        min_chunk ? min_chunk : total / (plan->tuning.least_chunk_parts * std::max<std::size_t>(1, plan->slots.size()));
    plan->min_units = std::max<std::size_t>(1, (floor_units + granule - 1) / granule) * granule;
    plan->min_chunk_given = min_chunk != 0;
    plan->occupancy.assign(plan->slots.size(), 0);
    add_alone_splits(*plan, total, granule, config, devices, streaming);
    dec.plan = std::move(plan);
    return dec;
  }

  // Chunks taken as devices get ready keep their buffers to the end of the run: where a device's
  // share might not fit its memory, the plan runs static, dragged through.
  Config fit_memory(const Config& config, std::size_t total, std::size_t granule,
                    const std::vector<DeviceInfo>& devices, const Streaming& streaming) const override {
    return static_where_pieces_may_not_fit(config, as_static(config), total, granule, devices, streaming);
  }

  std::string explain(const Decomposition& dec, const std::vector<DeviceInfo>& devices) const override {
    const DynamicChunks& plan = dynamic_chunks(dec);
    std::ostringstream s;
    s << "decomposition: " << dec.total_units << " units, granule " << dec.granule << ", dynamic: "
      << plan.slots.size() << " slot(s) take guided chunks (what is left / " << plan.tuning.divisor
      << " / slots, by weight; at least " << plan.min_units << " units) as they get ready, config "
      << dec.config.str() << "\n";
    for (std::size_t i = 0; i < plan.slots.size(); ++i) {
      const auto& p = plan.slots[i];
      const auto& d = devices.at(p.device);
      s << "  slot " << i << " " << d.id() << " (" << d.name << ")";
      if (!d.discrete && dec.config.fission != "none") s << " sub-device " << p.sub_device;
      if (d.discrete) s << " queue " << p.queue;
      s << ": weight " << std::setprecision(3) << plan.weights[i] << ", chunks of "
        << plan.next(i, dec.total_units, dec.granule) << " units at the start down to " << plan.min_units << "\n";
    }
    return s.str();
  }

  std::shared_ptr<ScheduleMemory> new_memory() const override { return std::make_shared<DynamicMemory>(); }
  std::unique_ptr<ScheduleRun> start_run(const Decomposition& dec, ScheduleMemory* memory) const override {
    return std::make_unique<DynamicRun>(dec, dynamic_cast<DynamicMemory*>(memory));
  }

  // Each run deals its work out as the devices get ready: its shares are weights, not where its
  // units run.
  bool places_shares() const override { return false; }

  bool trains() const override { return true; }
  // At the best plan's fission and overlap, each device taking chunks weighted by its measured
  // speed: from each device alone where each was measured, else from the fastest split (its
  // shares rebalanced by its device times); even weights where neither was. Where the work is
  // regular a balanced static split wins (no chunks to take); where its cost is irregular, or
  // shifts from run to run, chunks taken as the devices get ready do.
  void train(TrainingSession& session) const override {
    const auto& devices = session.devices();
    // The fastest plan's shares and levels, as a static plan: another schedule's items (a steal
    // plan's least_range) are not this schedule's.
    Config c = session.fastest();
    c.schedule = "static";
    c.items.clear();
    const std::vector<TrainingSession::Point> points = session.points();
    std::optional<TrainingSession::Point> split;  // the fastest static split
    for (const auto& p : points)
      if (detail::places_shares(p.config) && working_shares(p.config) > 1 &&
          (!split || p.time_ms < split->time_ms))
        split = p;
    std::vector<double> alone = alone_times(points, devices.size());
    // Each device alone where the search did not get to it (its runs were kept for this): a
    // split's device times say little of a device's speed when the cost is irregular. Only where
    // the budget also leaves room for the dynamic plan itself.
    const auto missing = static_cast<std::size_t>(std::count(alone.begin(), alone.end(), 0.0));
    if (session.affords(session.runs_per_point() * (missing + 1)))
      for (std::size_t d = 0; d < devices.size(); ++d)
        if (alone[d] == 0) {
          Config one = c;
          one.shares = Config::single(d, devices.size()).shares;
          const auto t = session.measure(one);
          if (!t) return;
          alone[d] = *t;
        }
    if (std::all_of(alone.begin(), alone.end(), [](double t) { return t > 0; })) {
      double sum = 0;
      for (std::size_t d = 0; d < devices.size(); ++d) sum += c.shares[d] = 1.0 / alone[d];
      for (double& x : c.shares) x /= sum;
    } else {
      c.shares = split ? session.rebalanced(*split) : session.even_shares();
    }
    session.measure(as_dynamic(c));
  }

};

}  // namespace

std::size_t min_chunk_item(const Config& plan) {
  return static_cast<std::size_t>(whole_item(plan, "min_chunk").value_or(0));
}

const DynamicChunks& dynamic_chunks(const Decomposition& dec) {
  const auto* plan = dynamic_cast<const DynamicChunks*>(dec.plan.get());
  if (!plan) throw std::logic_error("sinew: a decomposition without the dynamic schedule's chunks");
  return *plan;
}

const SchedulePolicy& dynamic_schedule() {
  static const DynamicSchedule policy;
  return policy;
}

}  // namespace sinew::detail
