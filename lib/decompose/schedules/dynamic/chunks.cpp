// decompose/schedules/dynamic/chunks.cpp — the dynamic schedule's chunk arithmetic
// (DynamicChunks): the guided size of a slot's next chunk, the rates it is judged by, the stop
// rule, and what one run of a plan leaves the next (rates and host occupancy per device).
#include "decompose/schedules/dynamic/chunks.hpp"

#include <algorithm>
#include <bit>
#include <mutex>
#include <optional>
#include <set>

namespace sinew::detail {

std::size_t DynamicChunks::next(std::size_t slot, std::size_t remaining, std::size_t granule) const {
  if (slots.size() == 1 && !min_chunk_given) return remaining;
  const double mean = 1.0 / static_cast<double>(slots.size());  // the weights add up to 1
  const double guided = static_cast<double>(remaining) / (tuning.divisor * static_cast<double>(slots.size())) *
                        (weights.at(slot) / mean);
  // Whole granules, rounded down to their two leading binary digits (1, 2, 3, 4, 6, 8, 12, ...):
  // at most a third less than guided, and few distinct chunk sizes from run to run, since PoCL
  // compiles a kernel for each new size (docs/decisions/021).
  std::size_t granules = std::max<std::size_t>(1, static_cast<std::size_t>(guided / static_cast<double>(granule)));
  if (const int low = std::bit_width(granules) - 2; low > 0) granules &= ~((std::size_t{1} << low) - 1);
  const std::size_t at_least = least_chunk(slot, granule);
  std::size_t units = std::max(granules * granule, at_least);
  return units >= remaining || remaining - units < at_least ? remaining : units;
}

// A slot's least chunk scales with its weight: a slot far slower than the others, given the
// heaviest slot's least chunk of costly units, ends long after they have done everything else
// (docs/decisions/022).
namespace {
std::size_t least_of(const std::vector<double>& weights, std::size_t min_units, std::size_t slot, std::size_t granule) {
  const double heaviest = *std::max_element(weights.begin(), weights.end());
  const double scaled = heaviest > 0 ? static_cast<double>(min_units) * weights.at(slot) / heaviest : 0;
  return std::max(granule, static_cast<std::size_t>(scaled) / granule * granule);
}
}  // namespace

std::size_t DynamicChunks::least_chunk(std::size_t slot, std::size_t granule) const {
  return least_of(weights, min_units, slot, granule);
}

std::size_t DynamicChunks::probe(std::size_t slot, std::size_t granule) const {
  return least_of(plan_weights.empty() ? weights : plan_weights, min_units, slot, granule);
}

std::vector<double> DynamicChunks::rates(const std::vector<Progress>& progress) const {
  double measured = 0, measured_weight = 0;
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (progress.at(s).done && progress[s].busy_ms > 0) {
      measured += static_cast<double>(progress[s].done) / progress[s].busy_ms;
      measured_weight += weights.at(s);
    }
  const double scale = measured > 0 && measured_weight > 0 ? measured / measured_weight : 1;
  std::vector<double> r(slots.size());
  for (std::size_t s = 0; s < slots.size(); ++s)
    r[s] = progress[s].done && progress[s].busy_ms > 0 ? static_cast<double>(progress[s].done) / progress[s].busy_ms
                                                       : weights.at(s) * scale;
  return r;
}

double DynamicChunks::rate_after_host_cost(std::size_t slot, double rate, const std::vector<double>& r,
                                           const std::vector<Progress>& progress) const {
  if (host_cores.size() != slots.size() || host_cores[slot] > 0) return rate;
  const Progress& p = progress.at(slot);
  const double held_share = p.done && p.busy_ms > 0 && p.host_ms > 0 ? std::min(1.0, p.host_ms / p.busy_ms)
                      : slot < occupancy.size()                ? occupancy[slot]
                                                               : 0.0;
  double cpu_rate = 0, cores = 0;  // the CPU slots still taking chunks
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (host_cores[s] > 0 && !progress[s].stopped) {
      cpu_rate += r[s];
      cores += host_cores[s];
    }
  return cores > 0 ? rate - held_share * cpu_rate / cores : rate;
}

namespace {

// Each device's plan weight (the sum of its slots').
std::vector<double> device_weights(const DynamicChunks& c) {
  std::vector<double> device_weight;
  for (std::size_t s = 0; s < c.slots.size(); ++s) {
    const std::size_t d = c.slots[s].device;
    if (device_weight.size() <= d) device_weight.resize(d + 1, 0);
    device_weight[d] += c.weights[s];
  }
  return device_weight;
}

// Which devices a run probes (DynamicChunks::probes): each device kept out by its remembered rate
// (`kept_out`) sits out runs_until_probe runs, then is probed and sits out twice as many before
// the next probe, at most `most`; a device taking part again starts over.
std::vector<bool> devices_to_probe(DynamicMemory& m, const std::vector<bool>& kept_out, const std::vector<bool>& in,
                                   unsigned most) {
  std::vector<bool> probing(kept_out.size(), false);
  std::lock_guard lock(m.mutex);
  m.track_devices(kept_out.size());
  for (std::size_t d = 0; d < kept_out.size(); ++d) {
    if (!kept_out[d] || in[d]) {
      m.runs_until_probe[d] = m.probe_interval[d] = 0;
    } else if (m.runs_until_probe[d] > 0) {
      --m.runs_until_probe[d];
    } else {
      probing[d] = true;
      m.probe_interval[d] = std::clamp(2 * m.probe_interval[d], 1u, most);
      m.runs_until_probe[d] = m.probe_interval[d];
    }
  }
  return probing;
}

}  // namespace

DynamicChunks DynamicChunks::for_run(DynamicMemory& memory) const {
  DynamicChunks out = *this;
  if (out.plan_weights.empty()) out.plan_weights = weights;
  out.probes.assign(slots.size(), false);
  std::vector<double> rate, occupancy;
  {
    std::lock_guard lock(memory.mutex);
    rate = memory.rate;
    occupancy = memory.occupancy;
  }
  const std::vector<double> device_weight = device_weights(*this);
  rate.resize(device_weight.size(), 0);
  occupancy.resize(device_weight.size(), 0);
  double remembered = 0, their_weight = 0;
  for (std::size_t d = 0; d < device_weight.size(); ++d)
    if (rate[d] > 0 && device_weight[d] > 0) {
      remembered += rate[d];
      their_weight += device_weight[d];
    }
  if (!(remembered > 0 && their_weight > 0)) return out;
  double sum = 0;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const std::size_t d = slots[s].device;
    const double within = device_weight[d] > 0 ? weights[s] / device_weight[d] : 0;
    out.weights[s] = rate[d] > 0 ? rate[d] * within : weights[s] * remembered / their_weight;
    out.occupancy[s] = rate[d] > 0 ? occupancy[d] : 0;
    sum += out.weights[s];
  }
  for (double& w : out.weights) w /= sum;
  const std::vector<Progress> none(slots.size());
  const std::size_t lots = std::size_t{1} << 40;  // the start of a run of any size
  // (`in`: a device with a slot that takes chunks at the start, or never measured.)
  std::vector<bool> kept_out(device_weight.size(), false), in(device_weight.size(), false);
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const std::size_t d = slots[s].device;
    (rate[d] > 0 && out.take(s, lots, 1, none) == 0 ? kept_out : in)[d] = true;
  }
  const std::vector<bool> probing = devices_to_probe(memory, kept_out, in, tuning.probe_interval);
  for (std::size_t s = 0; s < slots.size(); ++s) out.probes[s] = probing[slots[s].device];
  return out;
}

std::set<std::size_t> DynamicChunks::taking_part(std::size_t total, std::size_t granule) const {
  const std::vector<Progress> none(slots.size());
  std::set<std::size_t> devices;
  for (std::size_t s = 0; s < slots.size(); ++s)
    if ((s < probes.size() && probes[s]) || take(s, total, granule, none) > 0) devices.insert(slots[s].device);
  return devices;
}

std::optional<std::size_t> DynamicChunks::alone_device(const std::set<std::size_t>& taking) const {
  if (std::find(probes.begin(), probes.end(), true) != probes.end()) return std::nullopt;
  if (taking.size() != 1) return std::nullopt;
  const std::size_t d = *taking.begin();
  if (d >= alone.size() || alone[d].empty()) return std::nullopt;
  return d;
}

void DynamicChunks::remember(DynamicMemory& memory, const std::vector<Progress>& progress) const {
  if (progress.size() != slots.size()) return;
  // This run's rate and occupancy per device (its measured slots': rates summed, occupancy
  // averaged).
  std::size_t devices = 0;
  for (const auto& p : slots) devices = std::max(devices, p.device + 1);
  std::vector<double> rate(devices, 0), held(devices, 0);
  std::vector<std::size_t> measured(devices, 0);
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const Progress& p = progress[s];
    if (!(p.done && p.busy_ms > 0)) continue;
    const std::size_t d = slots[s].device;
    rate[d] += static_cast<double>(p.done) / p.busy_ms;
    held[d] += p.host_ms > 0 ? std::min(1.0, p.host_ms / p.busy_ms) : 0;
    ++measured[d];
  }
  std::lock_guard lock(memory.mutex);
  auto& m = memory;
  m.rate.resize(std::max(m.rate.size(), devices), 0);
  m.occupancy.resize(m.rate.size(), 0);
  double now = 0, before = 0;  // devices measured now and before: their rates now and then
  for (std::size_t d = 0; d < devices; ++d)
    if (measured[d] && m.rate[d] > 0) {
      now += rate[d];
      before += m.rate[d];
    }
  const double change = now > 0 && before > 0 ? now / before : 1;
  m.track_devices(devices);
  for (std::size_t d = 0; d < devices; ++d) {
    if (measured[d]) {
      m.rate[d] = rate[d];
      m.occupancy[d] = held[d] / static_cast<double>(measured[d]);
    } else {
      m.rate[d] *= change;
      // The devices taking chunks slowed as a load does: a device kept out is probed in the next
      // run (its interval not reset: noise that crosses the line now and then does not restart
      // the 1, 2, 4, ...; that probe doubles it as any does, up to tuning.probe_interval).
      if (change * tuning.slowdown < 1 && m.probe_interval[d] > 0) m.runs_until_probe[d] = 0;
    }
  }
}

// Every slot still taking part is a queue of `slot`'s (sub-)device (the others stopped or too
// slow to count): the rest is dealt out evenly, a share to each such queue without a chunk in
// hand. A device's queues share its compute units, so a costly chunk on one ends sooner once the
// others are done; the guided chunks' tail only adds launches (docs/decisions/022). Nothing
// where another device's slot still takes part.
std::optional<std::size_t> DynamicChunks::even_share_of_one_device(std::size_t slot, std::size_t remaining,
                                                                   std::size_t granule, std::size_t at_least,
                                                                   const std::vector<double>& r,
                                                                   const std::vector<Progress>& progress) const {
  double taking = 0;  // every slot taking chunks
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (!progress[s].stopped) taking += r[s];
  std::size_t waiting = 1;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (s == slot || progress[s].stopped) continue;
    if (const double a = rate_after_host_cost(s, r[s], r, progress); a <= 0 || a < tuning.negligible * (taking - r[s]))
      continue;  // it would stop when it asks
    // (Queues of one device or sub-device: CPU sub-devices have compute units of their own.)
    if (slots[s].device != slots[slot].device || slots[s].sub_device != slots[slot].sub_device) return std::nullopt;
    if (!progress[s].held) ++waiting;
  }
  const std::size_t even = (remaining + waiting - 1) / waiting;
  return std::min(std::max((even + granule - 1) / granule * granule, at_least), remaining);
}

std::size_t DynamicChunks::take(std::size_t slot, std::size_t remaining, std::size_t granule,
                                const std::vector<Progress>& progress) const {
  if (remaining == 0) return 0;
  std::size_t units = next(slot, remaining, granule);
  const std::vector<double> r = rates(progress);
  double others = 0, held = 0;  // the other slots still taking chunks: their rate, their backlog
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (s != slot && !progress[s].stopped) {
      others += r[s];
      held += static_cast<double>(progress[s].held);
    }
  // Rates are units per ms, blind to what the units cost. The slot's own measure may come from
  // cheaper units than the others' (Mandelbrot's rows above the set, cut first): it trusts the
  // slower of it and its weight scaled as the others' measured rates are to theirs.
  double mine = r[slot], measured = 0, measured_weight = 0;
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (s != slot && progress[s].done && progress[s].busy_ms > 0) {
      measured += r[s];
      measured_weight += weights[s];
    }
  if (measured_weight > 0) mine = std::min(mine, weights[slot] * measured / measured_weight);
  // No one else would take the rest. A CPU takes it in one chunk, as a slot alone does (next()):
  // guided chunks only cost it launches (docs/decisions/022). A GPU queue keeps its chunks, whose
  // transfers overlap its kernels. (A CPU driven as discrete, SINEW_DISCRETE, is a CPU here: one
  // chunk.)
  if (others <= 0)
    return !min_chunk_given && slot < host_cores.size() && host_cores[slot] > 0 ? remaining : units;
  // A slot under `negligible` of the others' speed gains the run little and costs it more: a CPU
  // device's threads take the cores that copy the GPUs' chunks in and out (docs/decisions/022).
  // What it adds is its rate less what its host thread costs the CPU slots.
  const double adds = rate_after_host_cost(slot, mine, r, progress);
  if (mine <= 0 || adds <= 0 || adds < tuning.negligible * others) return 0;
  const std::size_t at_least = std::min(least_chunk(slot, granule), remaining);
  if (const auto even = even_share_of_one_device(slot, remaining, granule, at_least, r, progress)) return *even;
  const double rest = static_cast<double>(remaining) + held;
  const double own = static_cast<double>(progress[slot].held);
  if ((own + static_cast<double>(at_least)) / mine > rest / others) return 0;
  // The chunk that would end when the others end the rest without it: (own + c) / mine =
  // (rest - c) / others.
  double balanced = (mine * rest - others * own) / (others + mine);
  // A slot under 1/slow_share of the others' speed gains the run little and, its chunk landing on
  // units dearer than those it was measured on, could lose it much: its chunks are 1/slow_margin
  // of that, so that it still ends with the others when its units cost up to slow_margin times
  // what it predicts. Any other slot commits at most half of what it would end by then: what it
  // holds and this chunk end halfway, so that a load that slows it mid-run leaves the rest to the
  // others (docs/decisions/022).
  if (mine * tuning.slow_share < others) balanced /= tuning.slow_margin;
  else balanced = (balanced - own) / 2;
  const std::size_t cap =
      std::max(at_least, balanced > 0 ? static_cast<std::size_t>(balanced / static_cast<double>(granule)) * granule : 0);
  if (units > cap) units = remaining - cap < granule ? remaining : cap;  // never leave part of a granule
  return units;
}

}  // namespace sinew::detail
