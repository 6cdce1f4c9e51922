// decompose/static_split.cpp — the static split: every unit placed before the run, each device's
// share over its queues or sub-devices (a streamable tree's share on a discrete device in streamed
// chunks), dragged through a device's memory where it cannot hold its share at once; and the
// static rule for memory-capped devices (fit_static_shares).
#include "decompose/decompose.hpp"

#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace sinew::detail {
namespace {

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
    throw_memory_shortfall(info,
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
  throw_memory_shortfall(info,
              "plan " + config.str() + " gives " + device_text(info) + " " + std::to_string(device_units) +
                  " units of the tree in " + std::to_string(sets) + " partition(s), whose buffers need " +
                  size_text(need) + " there" + (alone.empty() ? "" : " (" + alone + ")") + ", more than " +
                  memory_text(info) + "; the tree cannot be dragged through the device in chunks" +
                  (j.node.empty() ? std::string() : ": '" + j.node + "' " + j.why),
              {.node = j.node, .argument = "vector '" + vector + "'", .device = info.name,
               .fix = "give " + info.id() + " a smaller share (at most about " + share.str() +
                      "% of this one), run the tree on another device, or " + fix_cap});
}

// Units per device: shares rounded to whole granules; the last device with a share takes the rest.
std::vector<std::size_t> units_per_device(std::size_t total, std::size_t granule, const Config& config,
                                          std::size_t devices) {
  double sum = 0;
  for (double s : config.shares) sum += s;
  const std::size_t granules = total / granule;
  std::vector<std::size_t> units(devices, 0);
  std::size_t last = 0, given = 0;
  for (std::size_t d = 0; d < devices; ++d)
    if (config.shares[d] > 0) last = d;
  for (std::size_t d = 0; d < devices; ++d) {
    if (config.shares[d] <= 0 || d == last) continue;
    std::size_t g = static_cast<std::size_t>(std::llround(config.shares[d] / sum * static_cast<double>(granules)));
    units[d] = std::min(g * granule, total - given);
    given += units[d];
  }
  units[last] = total - given;
  return units;
}

// One device's share as it is split: where each piece runs, (sub_device, queue), and its weight.
struct Slots {
  std::vector<std::pair<unsigned, unsigned>> at;
  std::vector<double> weights;
};

// A CPU's slots: itself or its sub-devices (by their compute units), each cut in `pieces`.
Slots cpu_slots(const DeviceInfo& info, const Config& config, std::size_t pieces) {
  Slots s;
  auto f = std::find_if(info.fission_configs.begin(), info.fission_configs.end(),
                        [&](const FissionConfig& c) { return c.name == config.fission; });
  const std::size_t cut = std::max<std::size_t>(1, pieces);
  if (f == info.fission_configs.end() || f->is_none()) {
    for (std::size_t k = 0; k < cut; ++k) {
      s.at.push_back({0, 0});
      s.weights.push_back(1);
    }
    return s;
  }
  for (unsigned sub = 0; sub < f->groups.size(); ++sub)
    for (std::size_t k = 0; k < cut; ++k) {
      s.at.push_back({sub, 0});
      s.weights.push_back(f->groups[sub]);  // sub-devices get work by their compute units
    }
  return s;
}

// A discrete device's slots: one per queue, or — streaming — chunks dealt to the queues, at least
// `pieces` of them (Streaming), the last ones shrinking.
Slots queue_slots(const Config& config, std::size_t units, std::size_t granule, const Streaming& streaming,
                  std::size_t pieces) {
  const ScheduleTuning::Streaming& tuned = streaming.tuning.streaming;
  std::size_t chunks = streaming.one_queue ? 1 : config.overlap, tail = 0;
  if (streaming.streamable && streaming.bytes_per_unit) {
    const std::size_t bytes = units * streaming.bytes_per_unit;
    const std::size_t chunk =
        streaming.chunk_bytes ? streaming.chunk_bytes
                              : std::clamp<std::size_t>(bytes / 8, tuned.min_chunk_bytes, tuned.max_chunk_bytes);
    chunks = std::max({chunks, (bytes + chunk - 1) / std::max<std::size_t>(1, chunk), pieces});
    // The shrinking tail, where there are whole chunks before it and granules enough for it
    // (its weights add up to less than one chunk, so no chunk grows past the size).
    const std::size_t most = std::max<std::size_t>(config.overlap, units / granule);
    if (chunks > tuned.shrinking_chunks && (pieces == 0 || chunks + tuned.shrinking_chunks <= most)) {
      tail = tuned.shrinking_chunks;
      chunks += tail;
    }
    chunks = std::min(chunks, most);
    tail = std::min(tail, chunks > 1 ? chunks - 1 : 0);
  }
  Slots s;
  for (std::size_t c = 0; c < chunks; ++c) {
    s.at.push_back({0, static_cast<unsigned>(c % config.overlap)});
    const std::size_t from_end = chunks - c;  // 1 for the last chunk
    s.weights.push_back(from_end <= tail ? std::ldexp(1.0, -static_cast<int>(tail - from_end + 1)) : 1.0);
  }
  return s;
}

Slots device_slots(const DeviceInfo& info, const Config& config, std::size_t units, std::size_t granule,
                   const Streaming& streaming, std::size_t pieces) {
  return info.discrete ? queue_slots(config, units, granule, streaming, pieces) : cpu_slots(info, config, pieces);
}

// A piece of a device's units: its slot, first unit within the device's share, units.
struct Piece {
  std::size_t slot, first, units;
};

// Splits `units` over slots in granules, by weight: slot s ends at the granule nearest its
// cumulative weight, so rounding never piles up on one slot.
std::vector<Piece> split_by_weight(std::size_t units, std::size_t granule, const std::vector<double>& weights) {
  std::vector<Piece> out;
  const double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);
  const std::size_t granules = units / granule;
  std::size_t done = 0;
  double cumulative = 0;
  for (std::size_t s = 0; s < weights.size(); ++s) {
    cumulative += weights[s];
    const auto nearest = static_cast<std::size_t>(std::llround(cumulative / wsum * static_cast<double>(granules)));
    const std::size_t end = s + 1 == weights.size() ? units : std::min(units, nearest * granule);
    if (end <= done) continue;
    out.push_back({s, done, end - done});
    done = end;
  }
  return out;
}

std::size_t largest_piece(const std::vector<Piece>& pieces) {
  std::size_t m = 0;
  for (const Piece& p : pieces) m = std::max(m, p.units);
  return m;
}

// Drag-through: one buffer set per queue (per sub-device) lives at once, so the largest partition
// must fit the device's memory over that many sets. Cuts the share in more pieces until it does.
void drag_through(const DeviceInfo& info, const Config& config, std::size_t units, std::size_t granule,
                  const Streaming& streaming, Slots& slots, std::vector<Piece>& pieces) {
  const bool zero_copy = zero_copy_device(info);
  const std::size_t queues = streaming.one_queue ? 1 : config.overlap;
  const std::size_t sets = info.discrete ? std::min<std::size_t>(queues, slots.at.size()) : slots.at.size();
  const std::size_t limit = streaming.footprint.units_within(info.memory(), info.largest_allocation(), sets, zero_copy);
  if (limit < granule) memory_error(info, config, granule, sets, zero_copy, streaming, true);
  for (std::size_t n = 0, round = 0; largest_piece(pieces) > limit; ++round) {
    // First as many pieces as the limit asks for, then more until rounding fits them.
    const std::size_t share = info.discrete ? units : largest_piece(pieces);
    n = round == 0 ? (share + limit - 1) / limit : n + std::max<std::size_t>(1, n / 8);
    slots = device_slots(info, config, units, granule, streaming, n);
    pieces = split_by_weight(units, granule, slots.weights);
    if (round > 1000) throw std::logic_error("sinew: decompose could not fit the chunks into memory");
  }
}

// A tree that cannot stream keeps all of a device's partitions at once: they must fit its memory
// and each buffer its largest allocation.
void check_partitions_fit(const DeviceInfo& info, const Config& config, std::size_t units,
                          const Streaming& streaming, const std::vector<Piece>& pieces) {
  const bool zero_copy = zero_copy_device(info);
  std::uint64_t need = streaming.footprint.context_bytes(zero_copy);
  bool over_allocation = false;
  for (const Piece& p : pieces) {
    need += streaming.footprint.bytes(p.units, zero_copy);
    for (const auto& b : streaming.footprint.partition)
      if (!(zero_copy && b.host_on_zero_copy) && b.bytes(p.units) > info.largest_allocation()) over_allocation = true;
  }
  if (need > info.memory() || over_allocation)
    memory_error(info, config, largest_piece(pieces), pieces.size(), zero_copy, streaming, false, units, need);
}

// Each device's room for a tree that cannot stream, as a fraction of the units (1: no limit; a
// streamable tree's device has room when it holds one granule per buffer set).
std::vector<double> device_rooms(const Config& config, std::size_t total, std::size_t granule,
                                 const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  std::vector<double> room(devices.size(), 0);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const auto& info = devices[d];
    if (info.memory() == 0) {
      room[d] = 1;
      continue;
    }
    const bool zero_copy = zero_copy_device(info);
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
    const std::size_t per_part =
        streaming.footprint.units_within(info.memory(), info.largest_allocation(), sets, zero_copy);
    if (streaming.streamable) {
      room[d] = per_part >= granule ? 1 : 0;
      continue;
    }
    // A granule of slack where the share and each partition are rounded.
    const double units = per_part > granule ? static_cast<double>(per_part - granule) * wsum / wmax : 0;
    room[d] = std::clamp((units - static_cast<double>(granule)) / static_cast<double>(total), 0.0, 1.0);
  }
  return room;
}

// `excess` of the work moved into `out` where `room` allows: to the devices with a share first
// (in proportion to it), then to any with room (in proportion to their room). Returns what is
// left over.
double spread_excess(const Config& config, const std::vector<double>& room, std::vector<double>& out, double excess) {
  for (const bool with_share : {true, false}) {
    for (int round = 0; round < 64 && excess > 1e-12; ++round) {
      double wsum = 0;
      for (std::size_t d = 0; d < out.size(); ++d)
        if (out[d] < room[d] && (!with_share || config.shares[d] > 0))
          wsum += with_share ? config.shares[d] : room[d] - out[d];
      if (wsum <= 0) break;
      double given = 0;
      for (std::size_t d = 0; d < out.size(); ++d)
        if (out[d] < room[d] && (!with_share || config.shares[d] > 0)) {
          const double w = with_share ? config.shares[d] : room[d] - out[d];
          const double add = std::min(excess * w / wsum, room[d] - out[d]);
          out[d] += add;
          given += add;
        }
      excess -= given;
    }
  }
  return excess;
}

// Every device's share placed (split_static's work but for the whole leaf's device below).
std::vector<Partition> place_shares(std::size_t total, std::size_t granule, const Config& config,
                                    const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  const std::vector<std::size_t> units = units_per_device(total, granule, config, devices.size());
  std::vector<Partition> parts;
  for (std::size_t d = 0, first = 0; d < devices.size(); ++d) {
    if (units[d] == 0) continue;
    const auto& info = devices[d];
    const bool memory_checked = !streaming.footprint.empty() && info.memory() > 0;
    Slots slots = device_slots(info, config, units[d], granule, streaming, 0);
    std::vector<Piece> pieces = split_by_weight(units[d], granule, slots.weights);
    if (memory_checked && streaming.streamable) drag_through(info, config, units[d], granule, streaming, slots, pieces);
    else if (memory_checked) check_partitions_fit(info, config, units[d], streaming, pieces);
    for (const Piece& p : pieces)
      parts.push_back({parts.size(), d, slots.at[p.slot].first, slots.at[p.slot].second, first + p.first, p.units});
    first += units[d];
  }
  return parts;
}

// What device `d` holds where a leaf marked whole_range() runs on it: its own partitions (and
// their context's replicas) and the leaf's whole vectors; 0 where its one partition holds every
// unit (the leaf runs there as any leaf does).
std::uint64_t whole_leaf_need(std::size_t d, std::size_t total, const std::vector<DeviceInfo>& devices,
                              const Streaming& streaming, const std::vector<Partition>& parts) {
  const Footprint& f = streaming.footprint;
  const auto& info = devices[d];
  const bool zero_copy = zero_copy_device(info);
  if (parts.size() == 1 && parts.front().device == d && parts.front().units == total) return 0;
  std::uint64_t need = f.whole_bytes();
  bool holds_part = false;
  for (const Partition& p : parts)
    if (p.device == d) {
      need += f.bytes(p.units, zero_copy);
      holds_part = true;
    }
  return holds_part ? need + f.context_bytes(zero_copy) : need;
}

// Whether device `d` holds a whole leaf's vectors beside its partitions: within its memory, and
// each whole vector within its largest allocation.
bool holds_whole_leaf(std::size_t d, std::size_t total, const std::vector<DeviceInfo>& devices,
                      const Streaming& streaming, const std::vector<Partition>& parts) {
  const auto& info = devices[d];
  const std::uint64_t need = whole_leaf_need(d, total, devices, streaming, parts);
  if (need == 0 || info.memory() == 0) return true;
  for (const auto& b : streaming.footprint.whole)
    if (b.bytes > info.largest_allocation()) return false;
  return need <= info.memory();
}

// The device of the largest share after the whole leaf's own (`leaf`) that holds its vectors
// beside its partitions, else the first device without a share that does; nullopt: none.
std::optional<std::size_t> device_with_room_for_whole_leaf(const Config& config, std::size_t leaf, std::size_t total,
                                                           const std::vector<DeviceInfo>& devices,
                                                           const Streaming& streaming,
                                                           const std::vector<Partition>& parts) {
  std::vector<std::size_t> order(devices.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return config.shares[a] > config.shares[b]; });
  for (std::size_t d : order)
    if (d != leaf && holds_whole_leaf(d, total, devices, streaming, parts)) return d;
  return std::nullopt;
}

// A whole leaf's device that cannot hold its vectors beside its partitions: the error names the
// leaf, its largest vector, the device and where the leaf could run instead.
[[noreturn]] void whole_leaf_memory_error(const Config& config, std::size_t leaf, std::size_t total,
                                          const std::vector<DeviceInfo>& devices, const Streaming& streaming,
                                          const std::vector<Partition>& parts) {
  const Footprint& f = streaming.footprint;
  const DeviceInfo& info = devices[leaf];
  const auto big = std::max_element(f.whole.begin(), f.whole.end(),
                                    [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  const std::uint64_t need = whole_leaf_need(leaf, total, devices, streaming, parts);
  const bool named = whole_item(config, "whole").has_value();
  const auto other = device_with_room_for_whole_leaf(config, leaf, total, devices, streaming, parts);
  const std::string elsewhere =
      other ? "run the leaf on " + devices[*other].id() + ", which holds it (plan whole=" + std::to_string(*other) + ")"
            : "give " + info.id() + " a smaller share";
  throw_memory_shortfall(
      info,
      "leaf '" + big->node + "' is marked whole_range() and runs on " + device_text(info) +
          (named ? " (the plan's whole item)" : " (the device with the plan's largest share)") +
          ", which holds its vectors whole beside its own partitions: " + size_text(need) + " (vector '" +
          big->vector + "' alone needs " + size_text(big->bytes) + " in one buffer), more than " + memory_text(info) +
          (big->bytes > info.largest_allocation()
               ? " or its largest allocation of " + size_text(info.largest_allocation())
               : std::string()),
      {.node = big->node, .argument = "vector '" + big->vector + "'", .device = info.name,
       .fix = elsewhere + ", or raise its memory cap ($SINEW_MEMORY_CAP=" + info.id() + "=<size>)"});
}

// `config`, or where it names no whole device and the one of its largest share cannot hold a
// whole leaf's vectors beside its partitions, with the leaf on the device of the largest share
// that can (docs/decisions/164). A plan that names its whole device keeps it (refused by
// decompose where it does not fit).
Config with_room_for_whole_leaf(const Config& config, std::size_t total, std::size_t granule,
                                const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  if (streaming.footprint.whole.empty() || whole_item(config, "whole")) return config;
  std::vector<Partition> parts;
  try {
    parts = place_shares(total, std::max<std::size_t>(1, granule), config, devices, streaming);
  } catch (const MemoryShortfall&) {
    return config;  // its shares do not fit: decompose names that
  }
  const std::size_t leaf = whole_leaf_device(config);
  if (leaf >= devices.size() || holds_whole_leaf(leaf, total, devices, streaming, parts)) return config;
  const auto other = device_with_room_for_whole_leaf(config, leaf, total, devices, streaming, parts);
  if (!other) return config;
  Config moved = config;
  moved.set("whole", std::to_string(*other));
  return moved;
}

}  // namespace

std::size_t whole_leaf_device(const Config& plan) {
  if (const auto item = whole_item(plan, "whole")) return static_cast<std::size_t>(*item);
  const auto largest = std::max_element(plan.shares.begin(), plan.shares.end());
  return largest == plan.shares.end() ? 0 : static_cast<std::size_t>(largest - plan.shares.begin());
}

std::vector<Partition> split_static(std::size_t total, std::size_t granule, const Config& config,
                                    const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  granule = std::max<std::size_t>(1, granule);
  std::vector<Partition> parts = place_shares(total, granule, config, devices, streaming);
  const std::size_t leaf = whole_leaf_device(config);
  // A whole item beyond the devices is the run's to refuse, naming the item (exec/whole_leaves.cpp).
  if (!streaming.footprint.whole.empty() && leaf < devices.size() &&
      !holds_whole_leaf(leaf, total, devices, streaming, parts))
    whole_leaf_memory_error(config, leaf, total, devices, streaming, parts);
  return parts;
}

Config fit_static_shares(const Config& config, std::size_t total, std::size_t granule,
                         const std::vector<DeviceInfo>& devices, const Streaming& streaming) {
  const Footprint& f = streaming.footprint;
  if (f.empty() || total == 0 || config.shares.size() != devices.size()) return config;
  granule = std::max<std::size_t>(1, granule);
  double sum = 0;
  for (double s : config.shares) sum += s;
  if (!(sum > 0)) return config;
  const std::vector<double> room = device_rooms(config, total, granule, devices, streaming);
  std::vector<double> out(devices.size(), 0);
  for (std::size_t d = 0; d < devices.size(); ++d) out[d] = config.shares[d] / sum;
  double excess = 0;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (out[d] > room[d]) {
      excess += out[d] - room[d];
      out[d] = room[d];
    }
  if (excess <= 0) return with_room_for_whole_leaf(config, total, granule, devices, streaming);
  if (spread_excess(config, room, out, excess) > 1e-9) {
    // The devices together cannot hold the tree: the plan's own error, naming the device, the
    // vector and the sizes (a plan within the rounding slack above does fit: it stays).
    decompose(total, granule, config, devices, streaming);
    return config;
  }
  Config fitted = config;
  fitted.shares = out;
  return with_room_for_whole_leaf(fitted, total, granule, devices, streaming);
}

}  // namespace sinew::detail
