// decompose/footprint.cpp — what a run allocates on a device for a tree (memory_footprint) and
// how many units of it a device's memory holds.
#include "decompose/decompose.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

namespace sinew::detail {

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

std::uint64_t Footprint::whole_bytes() const {
  std::uint64_t sum = 0;
  for (const auto& b : whole) sum += b.bytes;
  return sum;
}

const Footprint::Buffer* Footprint::largest(bool zero_copy) const {
  const Buffer* out = nullptr;
  for (const auto& b : partition)
    if (!(zero_copy && b.host_on_zero_copy) && (!out || b.unit_bytes > out->unit_bytes)) out = &b;
  return out;
}

Footprint memory_footprint(const NodeImpl& root, const Analysis& an) {
  Footprint f;
  // As exec/prepare.cpp allocates them: a slice unless a halo buffer holds it (counted apart
  // here, an upper bound), a halo buffer per vector read with a halo (in place on a zero-copy
  // device only away from the vector's edges: counted), a swapping copy's twin, replicas; and
  // as the library leaves take it, their scratch (exec/nodes/fft.cpp).
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
  // One scratch per partition, the largest any leaf takes (they run one after another).
  std::optional<Footprint::Buffer> scratch;
  visit(root, [&](const NodeImpl& n) {
    const VectorState* v = n.library_scratch();
    if (v && (!scratch || v->unit * v->type.size > scratch->unit_bytes))
      scratch = Footprint::Buffer{v->name, "library scratch", v->unit * v->type.size, 0, false};
  });
  if (scratch) f.partition.push_back(*scratch);
  // Each leaf marked whole_range() allocates its own whole buffer of every vector it reads or
  // writes (exec/whole_leaves.cpp), once per vector.
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.runs_whole()) return;
    std::set<const VectorState*> counted;
    for (const Arg& a : n.args)
      if (a.kind == Arg::Kind::partitioned && counted.insert(a.vector.get()).second)
        f.whole.push_back({path, a.vector->name, an.use(a.vector.get()).bytes()});
  });
  return f;
}

bool holds_every_chunk(const DeviceInfo& info, std::size_t total, const Streaming& streaming) {
  const bool zero_copy = zero_copy_device(info);
  const Footprint& f = streaming.footprint;
  return f.bytes(total, zero_copy) + f.context_bytes(zero_copy) <= info.memory() &&
         f.units_within(info.largest_allocation(), info.largest_allocation(), 1, zero_copy) >= total;
}

void refuse_joined_tree(const Analysis& an, const Config& config, const std::string& where,
                        const std::string& schedule) {
  if (an.streamable) return;
  const auto& j = an.joined;
  throw_error(errc::invalid_argument,
              where + " " + config.str() + " asks for the " + schedule +
                  " schedule, but the tree's partitions depend on each other: '" + j.node + "' " + j.why,
              {.node = j.node, .argument = j.argument, .fix = "use schedule=static for this tree (" + j.fix + ")"});
}

void require_every_piece_fits(const Config& config, const DeviceInfo& info, std::size_t total,
                              const Streaming& streaming, const std::string& schedule, const std::string& pieces) {
  if (streaming.footprint.empty() || !info.memory() || holds_every_chunk(info, total, streaming)) return;
  throw_memory_shortfall(info,
                         "plan " + config.str() + " asks for the " + schedule + " schedule, whose " + pieces +
                             " keep their buffers to the end of the run, but device " + device_text(info) +
                             " might take more of the tree than " + memory_text(info) + " holds (all of it needs " +
                             size_text(streaming.footprint.bytes(total, zero_copy_device(info))) +
                             ")",
                         {.device = info.name,
                          .fix = "use schedule=static: a static share larger than the device's memory is dragged "
                                 "through it in chunks"});
}

Config static_where_pieces_may_not_fit(const Config& config, const Config& as_static, std::size_t total,
                                       std::size_t granule, const std::vector<DeviceInfo>& devices,
                                       const Streaming& streaming) {
  if (streaming.footprint.empty() || total == 0 || config.shares.size() != devices.size()) return config;
  double sum = 0;
  for (double s : config.shares) sum += s;
  if (!(sum > 0)) return config;
  for (std::size_t d = 0; d < devices.size(); ++d)
    if (devices[d].memory() && config.shares[d] > 0 && !holds_every_chunk(devices[d], total, streaming))
      return fit_static_shares(as_static, total, std::max<std::size_t>(1, granule), devices, streaming);
  return config;
}

}  // namespace sinew::detail
