// exec/worker.hpp — a run's queues and partitions: a Worker is one queue (a GPU's overlap queue,
// a CPU or one of its sub-devices) with the host thread that drives it; a PartState is one
// partition it runs (its slices, its runners' state, its profiling events).
//
// Workers meet only at barriers (a replica re-synchronisation, a halo exchange, a loop
// predicate); a worker's partitions share its queue and, unless one thread feeds every device,
// its host thread.
#pragma once

#include "decompose/decompose.hpp"
#include "exec/environment.hpp"
#include "exec/leaves_run.hpp"
#include "tree/analysis.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinew::detail {

// A command's profiling event, kept for the report and the trace (profiled requests only).
struct TimedEvent {
  cl::Event event;
  const std::string* path;
  bool kernel;
};

// What a node's runner keeps per partition (its kernel object, a reduction's buffers, ...).
struct NodeState {
  virtual ~NodeState() = default;
};

struct Worker;

// One partition: its slices of the vectors, its runners' state, its profiling events.
struct PartState {
  const Partition* part = nullptr;
  Partition chunk;      // a chunk the schedule cut while the run went: its own partition (`part` points here)
  double taken_ms = 0;  // when its worker took that chunk, in the run
  Worker* worker = nullptr;
  std::map<const VectorState*, cl::Buffer> slices;
  // Vectors read with a halo: the slice with its halo units around it (exec/halo.hpp); which of
  // them hold the slice itself (the slice is a sub-buffer of it), and which are the host memory.
  std::map<const VectorState*, cl::Buffer> halos;
  std::set<const VectorState*> halo_holds_slice, halo_in_place;
  // The halo buffers whose constant boundary is written (it never changes), by buffer: a loop
  // copy that swaps (below) brings a second one.
  std::set<cl_mem> halo_filled;
  // The loop copies that swap buffers instead (Analysis::swap_copies), as they stand on this
  // partition: whether they may here, the twin of the destination's halo buffer that holds the
  // source's slice (when the destination's slice lives in its halo buffer), whether the two
  // vectors' buffers are swapped now, and whether a swap replaced a copy since the loop began.
  struct Swap {
    bool allowed = false, swapped = false, used = false;
    cl::Buffer twin;
  };
  std::map<const NodeImpl*, Swap> swaps;
  std::unordered_map<const NodeImpl*, std::unique_ptr<NodeState>> nodes;
  std::vector<TimedEvent> events;
  std::vector<std::pair<cl::Buffer, void*>> maps;  // zero-copy results mapped, to unmap after the wait
  std::vector<cl::Buffer> guarded;  // poison check: the buffers its slices and halos lie inside
  std::vector<std::size_t> pooled;  // its device buffers' entries in the buffer ledger (BufferLedger::recycle)
  cl::Buffer scratch;               // its library calls' (BufferLedger::scratch_buffer)

  template <class S>
  S& state(const NodeImpl& n) {
    return static_cast<S&>(*nodes.at(&n));
  }
};

// One queue and the host thread that drives it through its partitions.
struct Worker {
  std::size_t index = 0;          // its place in the run's workers
  Device* device = nullptr;
  std::size_t runtime_index = 0;  // the device's index in Runtime::devices()
  cl::Context context;
  cl::Device cl_device;
  unsigned sub_device = 0, queue_index = 0;
  bool zero_copy = false;  // host-unified CPU device: buffers use the host memory directly
  std::unique_ptr<QueueSlot> slot;
  std::vector<PartState*> parts;
  // A streamed tree's worker (its partitions all placed before the run) runs its partitions one
  // after another on its in-order queue, each uploaded, computed and downloaded before the next
  // begins there: it allocates one buffer per vector and role, for its largest partition
  // (`reuse_units`, 0: none), and hands the same buffers to every partition. So a device's memory
  // holds one chunk's buffers per queue, however large its share (drag-through, decompose.hpp).
  std::size_t reuse_units = 0;
  std::map<std::pair<const VectorState*, int>, cl::Buffer> reused;
  // Walking the tree: identical in every worker, since all walk the same tree.
  std::set<const VectorState*> dirty;  // slices written since the replicas were synced
  std::set<const VectorState*> halo_dirty;  // slices written since their halos were exchanged
  std::set<const NodeImpl*> pending;   // map_reduce values read back but not combined
  std::set<const NodeImpl*> values_met;  // map_reduce values combined for kernels since they ran (exec/values.hpp)
  int loop_depth = 0;                  // loops whose body it is running (Report::loop_copies)
  LeavesRun leaves_run;                // the leaves given to its queue, for a failed wait's error
  // Its thread's times, in the run.
  double host_start_ms = 0;     // when it began
  double host_enqueued_ms = 0;  // when it had enqueued everything (then it waits)
  double host_end_ms = 0;       // when its queue had finished everything
  bool drained = false;         // its queue finished without an error
  cl::CommandQueue& queue() { return slot->queue; }
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (at least 1): a sub-buffer's origin must be a multiple.
  std::size_t base_alignment() const {
    return std::max<std::size_t>(1, cl_device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8);
  }
  const DeviceInfo& info() const { return device->info(); }
};

}  // namespace sinew::detail
