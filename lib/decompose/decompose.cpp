// decompose/decompose.cpp — granularity and the split of units over devices and their slots.
#include "decompose/decompose.hpp"

#include "platform/error.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <stdexcept>
#include <numeric>
#include <sstream>

namespace sinew::detail {

std::size_t granularity(const NodeImpl& root, const Analysis& an, const std::vector<DeviceInfo>& devices) {
  GranuleRules rules;
  visit(root, [&](const NodeImpl& n) { n.constrain(rules, devices); });
  std::size_t both = std::lcm(rules.hard, rules.soft);
  return an.units % both == 0 ? both : rules.hard;
}

std::size_t plan_granularity(const NodeImpl& root, std::size_t granule, const Config& config) {
  visit(root, [&](const NodeImpl& n) { granule = std::lcm(granule, n.plan_granule(config)); });
  return granule;
}

std::uint64_t Footprint::bytes(std::size_t units, bool zero_copy) const {
  std::uint64_t sum = 0;
  for (const auto& b : partition)
    if (!(zero_copy && b.host_on_zero_copy)) sum += b.bytes(units);
  return sum;
}

std::uint64_t Footprint::context_bytes(bool zero_copy) const {
  std::uint64_t sum = 0;
  for (const auto& b : context)
    if (!(zero_copy && b.host_on_zero_copy)) sum += b.unit_bytes;
  return sum;
}

std::size_t Footprint::units_within(std::uint64_t memory, std::uint64_t largest_buffer, std::size_t sets,
                                    bool zero_copy) const {
  const std::uint64_t fixed = context_bytes(zero_copy);
  if (fixed > memory) return 0;
  const std::uint64_t budget = (memory - fixed) / std::max<std::size_t>(1, sets);
  const std::uint64_t extra = bytes(0, zero_copy), per_unit = bytes(1, zero_copy) - extra;
  if (extra > budget) return 0;
  std::uint64_t n = per_unit ? (budget - extra) / per_unit : std::numeric_limits<std::size_t>::max();
  for (const auto& b : partition) {
    if ((zero_copy && b.host_on_zero_copy) || !b.unit_bytes) continue;
    const std::uint64_t fits = largest_buffer / b.unit_bytes;
    n = std::min<std::uint64_t>(n, fits > b.extra_units ? fits - b.extra_units : 0);
  }
  for (const auto& b : context)
    if (!(zero_copy && b.host_on_zero_copy) && b.unit_bytes > largest_buffer) return 0;
  return static_cast<std::size_t>(std::min<std::uint64_t>(n, std::numeric_limits<std::size_t>::max()));
}

const Footprint::Buffer* Footprint::largest(bool zero_copy) const {
  const Buffer* out = nullptr;
  for (const auto& b : partition)
    if (!(zero_copy && b.host_on_zero_copy) && (!out || b.unit_bytes > out->unit_bytes)) out = &b;
  return out;
}

Footprint memory_footprint(const Analysis& an) {
  Footprint f;
  // As exec/prepare.cpp allocates them: a slice unless a halo buffer holds it (counted apart
  // here, an upper bound), a halo buffer per vector read with a halo (in place on a zero-copy
  // device only away from the vector's edges: counted), a swapping copy's twin, replicas.
  for (const auto& u : an.vectors) {
    const std::uint64_t ub = u.vector->unit * u.vector->type.size;
    if (u.partitioned && u.slice_used())
      f.partition.push_back({u.vector->name, "slice", ub, 0, u.bound() && !u.exchanged()});
    if (u.partitioned && u.read_halo)
      f.partition.push_back({u.vector->name, "halo buffer", ub, u.halo_before + u.halo_after, false});
    if (u.read_whole) f.context.push_back({u.vector->name, "replica", u.bytes(), 0, u.bound() && !u.written});
  }
  for (const NodeImpl* copy : an.swap_copies) {
    const VectorUse& dst = an.use(copy->args[1].vector.get());
    if (dst.read_halo)
      f.partition.push_back({an.use(copy->args[0].vector.get()).vector->name, "swap buffer",
                             dst.vector->unit * dst.vector->type.size, dst.halo_before + dst.halo_after, false});
  }
  return f;
}

std::string size_text(std::uint64_t bytes) {
  std::ostringstream s;
  const char* units[] = {"KB", "MB", "GB", "TB"};
  int u = -1;
  double v = static_cast<double>(bytes);
  while (u < 3 && v >= 1024) {
    v /= 1024;
    ++u;
  }
  if (u < 0) return std::to_string(bytes) + " bytes";
  s << std::fixed << std::setprecision(1) << v << " " << units[u] << " (" << bytes << " bytes)";
  return s.str();
}

std::string memory_text(const DeviceInfo& info) {
  std::string s = info.memory_cap && info.memory_cap < info.global_memory
                      ? "its memory cap of " + size_text(info.memory()) +
                            " (RuntimeOptions::memory_cap, $SINEW_MEMORY_CAP; the device has " +
                            size_text(info.global_memory) + ")"
                      : "its memory of " + size_text(info.memory());
  if (info.largest_allocation() < info.memory())
    s += " or its largest allocation of " + size_text(info.largest_allocation());
  return s;
}

namespace {

std::string device_text(const DeviceInfo& info) { return info.id() + " (" + info.name + ")"; }

// A device cannot hold its share: for a streamable tree not even one granule per queue
// (`units` the granule), for any other its partitions (`units` the largest, `need` all of them).
[[noreturn]] void memory_error(const DeviceInfo& info, const Config& config, std::size_t units, std::size_t sets,
                               bool zero_copy, const Streaming& streaming, bool streamable,
                               std::size_t device_units = 0, std::uint64_t need = 0) {
  const Footprint& f = streaming.footprint;
  // The buffer to name: the largest replica where the replicas alone exceed the memory, else the
  // partition buffer that grows most with its units.
  const Footprint::Buffer* big = nullptr;
  if (f.context_bytes(zero_copy) >= info.memory())
    for (const auto& b : f.context)
      if (!(zero_copy && b.host_on_zero_copy) && (!big || b.unit_bytes > big->unit_bytes)) big = &b;
  const bool replica = big != nullptr;
  if (!big) big = f.largest(zero_copy);
  const std::string vector = big ? big->vector : std::string();
  const std::string alone =
      !big ? ""
      : replica ? "vector '" + big->vector + "' alone needs " + size_text(big->unit_bytes) + " for its " + big->what +
                      " (it is read whole)"
                : "vector '" + big->vector + "' alone needs " + size_text(big->bytes(units)) + " for its " + big->what +
                      " of " + std::to_string(units + big->extra_units) + " units";
  const std::string fix_cap = "raise its memory cap ($SINEW_MEMORY_CAP=" + info.id() + "=<size>)";
  if (streamable) {
    const std::uint64_t one = f.bytes(units, zero_copy) * sets + f.context_bytes(zero_copy);
    throw_error(errc::invalid_argument,
                "device " + device_text(info) + " cannot drag its share of the tree through " + memory_text(info) +
                    ": one chunk of " + std::to_string(units) + " units (the least the tree runs on) per queue, " +
                    std::to_string(sets) + " at once, needs " + size_text(one) + (alone.empty() ? "" : "; " + alone),
                {.argument = "vector '" + vector + "'", .device = info.name,
                 .fix = "give " + info.id() + " no share (plan " + info.id() + "=0), use fewer queues (overlap=1), or " +
                        fix_cap});
  }
  const auto& j = streaming.joined;
  const double fitting = need ? static_cast<double>(info.memory()) / static_cast<double>(need) : 0;
  std::ostringstream share;
  share << std::setprecision(2) << fitting * 100;
  throw_error(errc::invalid_argument,
              "plan " + config.str() + " gives " + device_text(info) + " " + std::to_string(device_units) +
                  " units of the tree in " + std::to_string(sets) + " partition(s), whose buffers need " +
                  size_text(need) + " there" + (alone.empty() ? "" : " (" + alone + ")") + ", more than " +
                  memory_text(info) + "; the tree cannot be dragged through the device in chunks" +
                  (j.node.empty() ? std::string() : ": '" + j.node + "' " + j.why),
              {.node = j.node, .argument = "vector '" + vector + "'", .device = info.name,
               .fix = "give " + info.id() + " a smaller share (at most about " + share.str() +
                      "% of this one), run the tree on another device, or " + fix_cap});
}

// A dynamic schedule's device may take any part of the units, each chunk with buffers of its own.
bool dynamic_fits(const DeviceInfo& info, std::size_t total, const Streaming& streaming) {
  const bool zero_copy = !info.discrete && info.host_unified_memory;
  const Footprint& f = streaming.footprint;
  return f.bytes(total, zero_copy) + f.context_bytes(zero_copy) <= info.memory() &&
         f.units_within(info.largest_allocation(), info.largest_allocation(), 1, zero_copy) >= total;
}

}  // namespace

Config fit_memory(const Config& config, std::size_t total, std::size_t granule, const std::vector<DeviceInfo>& devices,
                  const Streaming& streaming) {
  const Footprint& f = streaming.footprint;
  if (f.empty() || total == 0 || config.shares.size() != devices.size()) return config;
  granule = std::max<std::size_t>(1, granule);
  double sum = 0;
  for (double s : config.shares) sum += s;
  if (!(sum > 0)) return config;
  if (config.schedule == "dynamic") {
    // Chunks taken as devices get ready keep their buffers to the end of the run: where a
    // device's share might not fit its memory, the plan runs static, dragged through.
    bool fits = true;
    for (std::size_t d = 0; d < devices.size(); ++d)
      if (devices[d].memory() && config.shares[d] > 0 && !dynamic_fits(devices[d], total, streaming)) fits = false;
    if (fits) return config;
    Config static_plan = config;
    static_plan.schedule = "static";
    static_plan.items.erase("min_chunk");
    return fit_memory(static_plan, total, granule, devices, streaming);
  }
  // Each device's room, as a fraction of the units.
  std::vector<double> room(devices.size(), 0), out(devices.size(), 0);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const auto& info = devices[d];
    out[d] = config.shares[d] / sum;
    if (info.memory() == 0) {
      room[d] = 1;
      continue;
    }
    const bool zero_copy = !info.discrete && info.host_unified_memory;
    // Its partitions, and how unevenly they split its share (sub-devices by compute units).
    double wsum = 1, wmax = 1;
    std::size_t sets = 1;
    if (info.discrete) {
      sets = streaming.one_queue ? 1 : config.overlap;
      wsum = static_cast<double>(sets);
    } else {
      for (const auto& c : info.fission_configs)
        if (c.name == config.fission && !c.is_none()) {
          sets = c.groups.size();
          wsum = std::accumulate(c.groups.begin(), c.groups.end(), 0.0);
          wmax = *std::max_element(c.groups.begin(), c.groups.end());
        }
    }
    const std::size_t per_part = f.units_within(info.memory(), info.largest_allocation(), sets, zero_copy);
    if (streaming.streamable) {
      room[d] = per_part >= granule ? 1 : 0;
      continue;
    }
    // A granule of slack where the share and each partition are rounded.
    const double units = per_part > granule ? static_cast<double>(per_part - granule) * wsum / wmax : 0;
    room[d] = std::clamp((units - static_cast<double>(granule)) / static_cast<double>(total), 0.0, 1.0);
  }
  double excess = 0;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (out[d] > room[d]) {
      excess += out[d] - room[d];
      out[d] = room[d];
    }
  if (excess <= 0) return config;
  // To the devices with a share first (in proportion to it), then to any with room.
  for (const bool with_share : {true, false}) {
    for (int round = 0; round < 64 && excess > 1e-12; ++round) {
      double wsum = 0;
      for (std::size_t d = 0; d < devices.size(); ++d)
        if (out[d] < room[d] && (!with_share || config.shares[d] > 0))
          wsum += with_share ? config.shares[d] : room[d] - out[d];
      if (wsum <= 0) break;
      double given = 0;
      for (std::size_t d = 0; d < devices.size(); ++d)
        if (out[d] < room[d] && (!with_share || config.shares[d] > 0)) {
          const double w = with_share ? config.shares[d] : room[d] - out[d];
          const double add = std::min(excess * w / wsum, room[d] - out[d]);
          out[d] += add;
          given += add;
        }
      excess -= given;
    }
  }
  if (excess > 1e-9) {
    // The devices together cannot hold the tree: the plan's own error, naming the device, the
    // vector and the sizes (a plan within the rounding slack above does fit: it stays).
    decompose(total, granule, config, devices, streaming);
    return config;
  }
  Config fitted = config;
  fitted.shares = out;
  return fitted;
}

Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                        const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  config.check(devices);
  double sum = 0;
  for (double s : config.shares) sum += s;

  Decomposition dec;
  dec.config = config;
  dec.total_units = total;
  dec.granule = granule = std::max<std::size_t>(1, granule);
  const std::size_t granules = total / granule;

  // Units per device: shares rounded to whole granules; the last active device takes the rest.
  std::vector<std::size_t> units(devices.size(), 0);
  std::size_t last = 0, given = 0;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (config.shares[d] > 0) last = d;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (config.shares[d] <= 0 || d == last) continue;
    std::size_t g = static_cast<std::size_t>(std::llround(config.shares[d] / sum * static_cast<double>(granules)));
    units[d] = std::min(g * granule, total - given);
    given += units[d];
  }
  units[last] = total - given;

  if (dec.is_dynamic()) {
    // Every device with a share takes part, whatever units its share would round to.
    for (std::size_t d = 0; d < devices.size(); ++d) {
      if (config.shares[d] <= 0) continue;
      const auto& info = devices[d];
      if (!streaming.footprint.empty() && info.memory() && !dynamic_fits(info, total, streaming))
        throw_error(errc::invalid_argument,
                    "plan " + config.str() + " asks for the dynamic schedule, whose chunks keep their buffers to "
                    "the end of the run, but device " + device_text(info) + " might take more of the tree than " +
                        memory_text(info) + " holds (all of it needs " +
                        size_text(streaming.footprint.bytes(total, !info.discrete && info.host_unified_memory)) + ")",
                    {.device = info.name,
                     .fix = "use schedule=static: a static share larger than the device's memory is dragged through "
                            "it in chunks"});
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
        p.index = dec.dynamic.slots.size();
        dec.dynamic.slots.push_back(p);
        dec.dynamic.weights.push_back(config.shares[d] / sum * w / within);
        // (A CPU driven as discrete, SINEW_DISCRETE, computes on the host's cores all the same.)
        const unsigned cores = info.kind != DeviceKind::cpu ? 0
                               : f && !f->is_none()       ? f->groups.at(at)
                                                          : std::max(1u, info.compute_units);
        dec.dynamic.host_cores.push_back(cores);
      }
    }
    // min_chunk 0: a 64th of a slot's even share, so the guided tail ends in a few dozen chunks
    // rather than in single granules (each chunk costs a GPU driver some tens of microseconds).
    const std::size_t floor_units =
        min_chunk_item(config) ? min_chunk_item(config)
                               : total / (DynamicChunks::kAutoMin * std::max<std::size_t>(1, dec.dynamic.slots.size()));
    dec.dynamic.min_units = std::max<std::size_t>(1, (floor_units + granule - 1) / granule) * granule;
    dec.dynamic.min_chunk_given = min_chunk_item(config) != 0;
    dec.dynamic.occupancy.assign(dec.dynamic.slots.size(), 0);
    // (Only where the plan shares the units over devices and leaves the chunk size to the
    // schedule: a plan of one device, or with its own min_chunk, is cut as it asks.)
    dec.dynamic.alone.resize(devices.size());
    const auto sharing = std::count_if(config.shares.begin(), config.shares.end(), [](double s) { return s > 0; });
    for (std::size_t d = 0; d < devices.size() && sharing > 1 && min_chunk_item(config) == 0; ++d) {
      if (!(config.shares[d] > 0) || !devices[d].discrete) continue;
      Config one = config;
      one.schedule = "static";
      one.items.erase("min_chunk");
      std::fill(one.shares.begin(), one.shares.end(), 0.0);
      one.shares[d] = 1;
      dec.dynamic.alone[d] = decompose(total, granule, one, devices, streaming).parts;
    }
    return dec;
  }

  for (std::size_t d = 0, first = 0; d < devices.size(); ++d) {
    if (units[d] == 0) continue;
    const auto& info = devices[d];
    // The device's slots: (sub_device, queue) with their weights. `pieces`: memory asks for at
    // least this many partitions (a discrete device's chunks), or each sub-device's share cut in
    // this many (a CPU's), 0 when it does not.
    const bool memory_checked = !streaming.footprint.empty() && info.memory() > 0;
    const bool zero_copy = !info.discrete && info.host_unified_memory;
    auto slots_of = [&](std::size_t pieces, std::vector<std::pair<unsigned, unsigned>>& slots,
                        std::vector<double>& weights) {
      slots.clear();
      weights.clear();
      if (!info.discrete) {
        auto f = std::find_if(info.fission_configs.begin(), info.fission_configs.end(),
                              [&](const FissionConfig& c) { return c.name == config.fission; });
        const std::size_t cut = std::max<std::size_t>(1, pieces);
        if (f == info.fission_configs.end() || f->is_none()) {
          for (std::size_t k = 0; k < cut; ++k) {
            slots.push_back({0, 0});
            weights.push_back(1);
          }
        } else {
          for (unsigned s = 0; s < f->groups.size(); ++s)
            for (std::size_t k = 0; k < cut; ++k) {
              slots.push_back({s, 0});
              weights.push_back(f->groups[s]);  // sub-devices get work by their compute units
            }
        }
        return;
      }
      // One slot per queue, or — streaming — chunks dealt to the queues (see Streaming).
      std::size_t chunks = streaming.one_queue ? 1 : config.overlap, tail = 0;
      if (streaming.streamable && streaming.bytes_per_unit) {
        const std::size_t bytes = units[d] * streaming.bytes_per_unit;
        const std::size_t chunk =
            streaming.chunk_bytes
                ? streaming.chunk_bytes
                : std::clamp<std::size_t>(bytes / 8, Streaming::kMinChunk, Streaming::kMaxChunk);
        chunks = std::max({chunks, (bytes + chunk - 1) / std::max<std::size_t>(1, chunk), pieces});
        // The shrinking tail, where there are whole chunks before it and granules enough for it
        // (its weights add up to less than one chunk, so no chunk grows past the size).
        const std::size_t most = std::max<std::size_t>(config.overlap, units[d] / granule);
        if (chunks > Streaming::kTail && (pieces == 0 || chunks + Streaming::kTail <= most)) {
          tail = Streaming::kTail;
          chunks += tail;
        }
        chunks = std::min(chunks, most);
        tail = std::min(tail, chunks > 1 ? chunks - 1 : 0);
      }
      for (std::size_t c = 0; c < chunks; ++c) {
        slots.push_back({0, static_cast<unsigned>(c % config.overlap)});
        const std::size_t from_end = chunks - c;  // 1 for the last chunk
        weights.push_back(from_end <= tail ? std::ldexp(1.0, -static_cast<int>(tail - from_end + 1)) : 1.0);
      }
    };
    // Split the device's units over its slots in granules, by weight: slot s ends at the granule
    // nearest its cumulative weight, so rounding never piles up on one slot.
    struct Piece {
      std::size_t slot, first, units;
    };
    auto split = [&](const std::vector<double>& weights) {
      std::vector<Piece> out;
      const double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);
      const std::size_t dev_granules = units[d] / granule;
      std::size_t done = 0;
      double cumulative = 0;
      for (std::size_t s = 0; s < weights.size(); ++s) {
        cumulative += weights[s];
        const std::size_t end =
            s + 1 == weights.size()
                ? units[d]
                : std::min(units[d], static_cast<std::size_t>(std::llround(cumulative / wsum * static_cast<double>(dev_granules))) * granule);
        if (end <= done) continue;
        out.push_back({s, done, end - done});
        done = end;
      }
      return out;
    };
    std::vector<std::pair<unsigned, unsigned>> slots;
    std::vector<double> weights;
    slots_of(0, slots, weights);
    std::vector<Piece> pieces = split(weights);
    auto largest_piece = [&] {
      std::size_t m = 0;
      for (const Piece& p : pieces) m = std::max(m, p.units);
      return m;
    };
    if (memory_checked && streaming.streamable) {
      // Drag-through: one buffer set per queue (per sub-device) lives at once, so the largest
      // partition must fit the device's memory over that many sets.
      const std::size_t sets = info.discrete ? std::min<std::size_t>(streaming.one_queue ? 1 : config.overlap, slots.size())
                                             : slots.size();
      const std::size_t limit =
          streaming.footprint.units_within(info.memory(), info.largest_allocation(), sets, zero_copy);
      if (limit < granule) memory_error(info, config, granule, sets, zero_copy, streaming, true);
      for (std::size_t n = 0, round = 0; largest_piece() > limit; ++round) {
        // First as many pieces as the limit asks for, then more until rounding fits them.
        const std::size_t share = info.discrete ? units[d] : largest_piece();
        n = round == 0 ? (share + limit - 1) / limit : n + std::max<std::size_t>(1, n / 8);
        slots_of(n, slots, weights);
        pieces = split(weights);
        if (round > 1000) throw std::logic_error("sinew: decompose could not fit the chunks into memory");
      }
    } else if (memory_checked) {
      std::uint64_t need = streaming.footprint.context_bytes(zero_copy);
      bool over_allocation = false;
      for (const Piece& p : pieces) {
        need += streaming.footprint.bytes(p.units, zero_copy);
        for (const auto& b : streaming.footprint.partition)
          if (!(zero_copy && b.host_on_zero_copy) && b.bytes(p.units) > info.largest_allocation()) over_allocation = true;
      }
      if (need > info.memory() || over_allocation)
        memory_error(info, config, largest_piece(), pieces.size(), zero_copy, streaming, false, units[d], need);
    }
    for (const Piece& p : pieces)
      dec.parts.push_back({dec.parts.size(), d, slots[p.slot].first, slots[p.slot].second, first + p.first, p.units});
    first += units[d];
  }
  return dec;
}

std::string Decomposition::explain(const std::vector<DeviceInfo>& devices) const {
  std::ostringstream s;
  if (is_dynamic()) {
    s << "decomposition: " << total_units << " units, granule " << granule << ", dynamic: " << dynamic.slots.size()
      << " slot(s) take guided chunks (what is left / " << DynamicChunks::kDivisor << " / slots, by weight; at least "
      << dynamic.min_units << " units) as they get ready, config " << config.str() << "\n";
    for (std::size_t i = 0; i < dynamic.slots.size(); ++i) {
      const auto& p = dynamic.slots[i];
      const auto& d = devices.at(p.device);
      s << "  slot " << i << " " << d.id() << " (" << d.name << ")";
      if (!d.discrete && config.fission != "none") s << " sub-device " << p.sub_device;
      if (d.discrete) s << " queue " << p.queue;
      s << ": weight " << std::setprecision(3) << dynamic.weights[i] << ", chunks of "
        << dynamic.next(i, total_units, granule) << " units at the start down to " << dynamic.min_units << "\n";
    }
    return s.str();
  }
  s << "decomposition: " << total_units << " units, granule " << granule << ", " << parts.size()
    << " partition(s), config " << config.str() << "\n";
  for (const auto& p : parts) {
    const auto& d = devices.at(p.device);
    s << "  #" << p.index << " " << d.id() << " (" << d.name << ")";
    if (!d.discrete && config.fission != "none") s << " sub-device " << p.sub_device;
    if (d.discrete) s << " queue " << p.queue;
    s << ": units [" << p.first << ", " << p.first + p.units << ") = " << p.units << "\n";
  }
  return s.str();
}

}  // namespace sinew::detail
