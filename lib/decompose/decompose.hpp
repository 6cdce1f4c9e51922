// decompose/decompose.hpp — the locality-aware decomposition of a tree's data over devices.
//
// One partitioning serves every leaf of the tree: all partitioned vectors are split at the same
// unit boundaries, so a channel between two stages never leaves its device. The granule is the
// least number of units every leaf can run on with a legal NDRange; shares are honoured to within
// one granule and the remainder goes to the last partition, so no unit is lost or duplicated.
#pragma once

#include "tree/analysis.hpp"

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/error.hpp>
#include <sinew/options.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

struct Partition {
  std::size_t index = 0;
  std::size_t device = 0;     // runtime device index
  unsigned sub_device = 0;    // fission sub-device (CPU)
  unsigned queue = 0;         // overlap queue (GPU)
  std::size_t first = 0;      // first unit
  std::size_t units = 0;
};

class SchedulePolicy;

// What a schedule policy plans beyond the partitions it places before the run (the dynamic
// schedule's slots and chunk sizes: decompose/schedules/dynamic/chunks.hpp).
struct PolicyPlan {
  virtual ~PolicyPlan() = default;
};

struct Decomposition {
  Config config;
  std::size_t total_units = 0;
  std::size_t granule = 1;
  const SchedulePolicy* policy = nullptr;  // the plan's schedule (Config::schedule)
  std::vector<Partition> parts;            // placed before the run (every unit, under a static split)
  std::shared_ptr<const PolicyPlan> plan;  // what else the policy planned (null: nothing)
  // Which units run on which device / sub-device / queue (the policy's explanation).
  std::string explain(const std::vector<DeviceInfo>& devices) const;
  std::string explained;  // explain()'s text, kept by the runtime's cache (empty: not kept)
};

// Units per granule: what every node constrains it to (NodeImpl::constrain: a kernel leaf gets a
// whole number of work-items, a range divisible by its required local size, and — where the total
// allows — a multiple of each device's preferred work-group multiple: warp, wavefront).
std::size_t granularity(const NodeImpl& root, const Analysis& an, const std::vector<DeviceInfo>& devices);
// `granule` with what a plan's own items ask of the partitions (NodeImpl::plan_granule: a
// divide-and-conquer crossover wants whole subproblems below it).
std::size_t plan_granularity(const NodeImpl& root, std::size_t granule, const Config& config);

// What a run allocates on a device for one tree, from its analysis alone: the buffers of one
// partition (slices, halo buffers, a swapping loop copy's twin), each so many bytes per unit of
// the partition plus its halo units (a library leaf's scratch among them), those of each
// context (replicas of vectors read whole), and those of the device that runs a leaf marked
// whole_range() (the leaf's vectors whole, exec/whole_leaves.hpp).
// On a host-unified (zero-copy) device some are the host memory itself and cost nothing. The
// executor allocates no more than this (exec/prepare.cpp; a halo buffer that holds its slice
// costs less), so a plan whose footprint fits DeviceInfo::memory() fits the device.
// Whether a device's buffers are the host memory itself (host-unified, not driven as discrete):
// what a footprint's host_on_zero_copy buffers cost nothing on, and how the executor drives it
// (Worker::zero_copy).
inline bool zero_copy_device(const DeviceInfo& d) { return !d.discrete && d.host_unified_memory; }

struct Footprint {
  struct Buffer {
    std::string vector;       // its name, for messages
    const char* what = "";    // "slice", "halo buffer", ...
    std::uint64_t unit_bytes = 0;
    std::size_t extra_units = 0;      // halo units around the partition's
    bool host_on_zero_copy = false;   // the host memory itself on a host-unified device
    std::uint64_t bytes(std::size_t units) const { return (units + extra_units) * unit_bytes; }
  };
  // A vector a leaf marked whole_range() reads or writes: its device holds it whole, in a buffer
  // of the leaf's own, beside that device's partitions — unless the run is one partition of
  // every unit on that device, whose slices are the whole vectors already.
  struct WholeBuffer {
    std::string node;    // the leaf's path
    std::string vector;  // its name
    std::uint64_t bytes = 0;
  };
  std::vector<Buffer> partition;    // every partition's
  std::vector<Buffer> context;      // once per context (unit_bytes is the whole vector's bytes)
  std::vector<WholeBuffer> whole;   // once, on the whole leaf's device (whole_leaf_device)

  bool empty() const { return partition.empty() && context.empty() && whole.empty(); }
  std::uint64_t whole_bytes() const;
  // The bytes of one partition of `units` units, and of a context's replicas.
  std::uint64_t bytes(std::size_t units, bool zero_copy) const;
  std::uint64_t context_bytes(bool zero_copy) const;
  // The most units one partition may hold when `sets` partitions' buffers live at once beside
  // the context's, in `memory` bytes with no buffer above `largest` bytes (0 when not even one
  // unit fits).
  std::size_t units_within(std::uint64_t memory, std::uint64_t largest, std::size_t sets, bool zero_copy) const;
  // The partition buffer that grows most with its units (the one a message names).
  const Buffer* largest(bool zero_copy) const;
};
Footprint memory_footprint(const NodeImpl& root, const Analysis& an);

// How a discrete device's share may be cut beyond one partition per queue, and what a tree
// allocates. When the tree is streamable, the share is cut into chunks dealt round-robin to the
// `overlap` queues, so each queue pipelines upload, kernels and download chunk after chunk.
// Chunks are `chunk_bytes` when it is set, else an eighth of the device's data within the tuned
// bounds (every chunk costs the driver a little; too few chunks do not overlap:
// docs/decisions/026). The last chunks shrink by halves, so the pipeline drains quickly: what
// runs after the last upload is the kernels and download of a small chunk, not of a whole one.
struct Streaming {
  bool streamable = false;
  std::size_t bytes_per_unit = 0;
  std::size_t chunk_bytes = 0;  // 0: chosen by the device's data as above
  // The tree exchanges halo units or refreshes replicas of what it writes between its partitions
  // as it runs: a discrete device's share is one partition on one queue whatever the overlap
  // level, since more queues would only add exchanges and barriers (docs/decisions/026).
  bool one_queue = false;
  // What the tree allocates per partition (empty: memory is not checked). A device's share whose
  // buffers exceed its memory (DeviceInfo::memory()) is, for a streamable tree, dragged through
  // it: cut into chunks small enough that the buffers of one chunk per queue (per sub-device on a
  // CPU; each queue reuses its buffers for its chunks, exec/prepare.cpp) fit; for any other tree
  // it is an error naming the vector, its size and the device's memory.
  Footprint footprint;
  // Why the tree cannot stream (Analysis::joined), for that error.
  Analysis::Joined joined;
  // The schedules' tuned values (RuntimeOptions::schedule_tuning).
  ScheduleTuning tuning;
};

// `tuning` where every value is in its range (ScheduleTuning's comments); otherwise throws
// sinew::Error(errc::invalid_argument) naming the value (RuntimeOptions::schedule_tuning.<name>).
const ScheduleTuning& checked_tuning(const ScheduleTuning& tuning);

// A plan that gives a device more than its memory holds (DeviceInfo::memory(), a cap included),
// refused before any data moves: errc::invalid_argument, naming the device and, by its runtime
// index, which one (identical devices share a name). Training runs such a plan without that
// device (train_on_copies).
class MemoryShortfall : public Error {
 public:
  MemoryShortfall(std::size_t device, std::string message, ErrorContext context)
      : Error(make_error_code(errc::invalid_argument), std::move(message), std::move(context)), device_index(device) {}
  std::size_t device_index;
};
[[noreturn]] inline void throw_memory_shortfall(const DeviceInfo& device, std::string message, ErrorContext context) {
  throw MemoryShortfall(device.index, std::move(message), std::move(context));
}

// The device a leaf marked whole_range() runs on under `plan` (a runtime device index): its
// `whole` item, else the device with the largest share (the first of equal ones).
std::size_t whole_leaf_device(const Config& plan);

// "48.0 KB (49152 bytes)"; "its memory cap of ... (...; the device has ...)" or "its memory of
// ...", for messages.
std::string size_text(std::uint64_t bytes);
std::string memory_text(const DeviceInfo& info);

// `config` as memory-capped devices can hold it: its schedule policy's rule
// (SchedulePolicy::fit_memory; the static rule is fit_static_shares).
Config fit_memory(const Config& config, std::size_t total, std::size_t granule, const std::vector<DeviceInfo>& devices,
                  const Streaming& streaming);
// The static rule: `config` with the shares that exceed what a device can hold (by
// Streaming::footprint and DeviceInfo::memory(), for a tree that cannot stream) moved to the
// devices with room: first to those with a share, in proportion to it, then to the others, in
// proportion to their room. A streamable tree's shares stay (its devices drag their shares
// through) but for a device that cannot hold one granule. Where the plan names no whole device
// and the device with its largest share cannot hold a whole_range() leaf's vectors beside its
// partitions, the leaf runs on the device of the largest share that can (the plan's `whole`
// item set; docs/decisions/164). Throws the error decompose() would when the devices together
// cannot hold the tree.
Config fit_static_shares(const Config& config, std::size_t total, std::size_t granule,
                         const std::vector<DeviceInfo>& devices, const Streaming& streaming);

// Whether `info` holds any part of `total` units a schedule that takes chunks while the run goes
// may give it: each chunk's buffers kept to the end of the run (schedule=dynamic, steal).
bool holds_every_chunk(const DeviceInfo& info, std::size_t total, const Streaming& streaming);

// For schedules that hand out pieces while the run goes (`schedule`: "dynamic", "steal"; `pieces`:
// what it hands out, "chunks", "ranges"), whose pieces keep their buffers to the run's end:
// - refuse_joined_tree: a tree whose partitions meet mid-run, refused naming the node;
// - require_every_piece_fits: a device that might not hold every piece, a MemoryShortfall;
// - static_where_pieces_may_not_fit: `config`, or `as_static` fitted to the devices where a device
//   with a share might not hold every piece (the plan then runs static, dragged through).
void refuse_joined_tree(const Analysis& an, const Config& config, const std::string& where,
                        const std::string& schedule);
void require_every_piece_fits(const Config& config, const DeviceInfo& info, std::size_t total,
                              const Streaming& streaming, const std::string& schedule, const std::string& pieces);
Config static_where_pieces_may_not_fit(const Config& config, const Config& as_static, std::size_t total,
                                       std::size_t granule, const std::vector<DeviceInfo>& devices,
                                       const Streaming& streaming);

// Splits `total` units by `config` over `devices`, as its schedule policy does
// (SchedulePolicy::decompose). Throws errc::invalid_argument for a config that does not fit the
// devices (Config::check).
Decomposition decompose(std::size_t total, std::size_t granule, const Config& config,
                        const std::vector<DeviceInfo>& devices, const Streaming& streaming = {});
// The static split: every unit placed before the run, each device's share rounded to whole
// granules (the last device with a share takes the rest), split over the device's queues or
// sub-devices — for a streamable tree on a discrete device, in streamed chunks dealt round its
// queues — and dragged through a device's memory where it does not hold the share at once.
std::vector<Partition> split_static(std::size_t total, std::size_t granule, const Config& config,
                                    const std::vector<DeviceInfo>& devices, const Streaming& streaming);
// "gpu:0 (name)", for messages.
std::string device_text(const DeviceInfo& info);

}  // namespace sinew::detail
