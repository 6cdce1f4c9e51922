// exec/run.hpp — one execution request's state, shared by the executor's parts: preparation
// (prepare.cpp), transfers (transfer.cpp), tree interpretation (the node runners of exec/nodes/),
// driving and waiting (drive.cpp) and the report (report.cpp).
//
// A request's partitions are grouped by queue (device, sub-device, overlap queue) into workers;
// each worker's partitions share its queue and, unless one thread feeds every device, its host
// thread. Workers meet only at barriers (a replica re-synchronisation, a loop predicate).
#pragma once

#include "decompose/decompose.hpp"
#include "exec/barrier.hpp"
#include "exec/environment.hpp"
#include "tree/analysis.hpp"

#include <sinew/report.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
class Exchanger;

// One partition: its slices of the vectors, its runners' state, its profiling events.
struct PartState {
  const Partition* part = nullptr;
  Partition chunk;      // a dynamic schedule's chunk: its own partition (`part` points here)
  double taken_ms = 0;  // when its worker took it (dynamic schedule), in the run
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
  std::vector<std::size_t> pooled;  // its device buffers in the run's pooled list (RunState::recycle)

  template <class S>
  S& state(const NodeImpl& n) {
    return static_cast<S&>(*nodes.at(&n));
  }
};

// One queue (a GPU's overlap queue, a CPU or one of its sub-devices) and the host thread that
// drives it through its partitions.
struct Worker {
  Device* device = nullptr;
  std::size_t runtime_index = 0;  // the device's index in Runtime::devices()
  cl::Context context;
  cl::Device cl_device;
  unsigned sub_device = 0, queue_index = 0;
  std::size_t dynamic_slot = 0;  // the dynamic schedule's slot it is (Decomposition::dynamic)
  double chunks_from_ms = 0;     // when it began its first chunk (the stop rule's rate), in the run
  double cpu_from_ms = 0;        // its thread's CPU time then (the stop rule's occupancy, DynamicChunks::net)
  bool zero_copy = false;  // host-unified CPU device: buffers use the host memory directly
  std::unique_ptr<QueueSlot> slot;
  std::vector<PartState*> parts;
  // A streamed tree's worker (static schedule) runs its partitions one after another on its
  // in-order queue, each uploaded, computed and downloaded before the next begins there: it
  // allocates one buffer per vector and role, for its largest partition (`reuse_units`, 0: none),
  // and hands the same buffers to every partition. So a device's memory holds one chunk's
  // buffers per queue, however large its share (drag-through, decompose.hpp).
  std::size_t reuse_units = 0;
  std::map<std::pair<const VectorState*, int>, cl::Buffer> reused;
  // Walking the tree: identical in every worker, since all walk the same tree.
  std::set<const VectorState*> dirty;  // slices written since the replicas were synced
  std::set<const VectorState*> halo_dirty;  // slices written since their halos were exchanged
  std::set<const NodeImpl*> pending;   // map_reduce values read back but not combined
  double host_start_ms = 0;            // when this worker's thread began, in the run
  double host_enqueued_ms = 0;         // when it had enqueued everything (then it waits)
  double host_end_ms = 0;              // when its queue had finished everything
  bool drained = false;                // its queue finished without an error
  int loop_depth = 0;                  // loops whose body it is running (Report::loop_copies)
  cl::CommandQueue& queue() { return slot->queue; }
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (at least 1): a sub-buffer's origin must be a multiple.
  std::size_t base_alignment() const {
    return std::max<std::size_t>(1, cl_device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8);
  }
  const DeviceInfo& info() const { return device->info(); }
};

// What one of the executor's own copies was, for Report::copies: where it lands there follows
// the worker's device (a zero-copy device's transfers and copies are within host memory).
enum class CopyKind { to_device, to_host, on_device, value };

// The workers of one OpenCL context and the replicas of the vectors read whole.
struct ContextState {
  cl::Context context;
  std::vector<Worker*> workers;
  std::map<const VectorState*, cl::Buffer> whole;
};

class RunState {
 public:
  RunState(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
           const Decomposition& dec, bool profile);
  // Waits for whatever was enqueued (nothing may touch host memory once a request is over),
  // returns queues and buffers to their pools. Never throws.
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  Environment& env;
  const NodeImpl& root;
  const Analysis& an;
  const std::vector<Binding>& bindings;
  const Decomposition& dec;
  const bool profile;
  // The poison check (RuntimeOptions::poison_check): this byte fills the guard regions around
  // every slice and halo buffer on discrete devices, and halo units nobody writes; 0: off.
  std::uint8_t poison = 0;
  // A process's part of a larger run (a Cluster's rank): what it exchanges with the others
  // (exec/exchanger.hpp); null for a run of one process.
  Exchanger* exchanger = nullptr;

  std::vector<Worker> workers;
  // A deque: a dynamic schedule's workers append chunks while others run theirs (references stay).
  std::deque<PartState> parts;
  // The dynamic schedule's cursor: units before it are taken (under chunk_mutex).
  std::mutex chunk_mutex;
  std::size_t next_unit = 0;
  std::vector<DynamicChunks::Progress> progress;  // per slot, for the stop rule (under chunk_mutex)
  // The dynamic schedule's slots as this run starts: the plan's, seeded from the rates its
  // earlier runs measured (DynamicChunks::seeded); they remember this run's when it succeeds.
  DynamicChunks chunks;
  // Every chunk cut before the run, a discrete device's static split (DynamicChunks::alone): each
  // queue streams its chunks as a static split's worker does.
  bool streamed_alone = false;
  std::map<cl_context, ContextState> contexts;
  std::optional<Barrier> barrier;  // one party per host thread (per worker where it is met)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double prepared_ms = 0;
  bool cpu_work = false;       // some partition runs on a host-unified (CPU) device
  unsigned copy_threads = 1;   // threads per staged copy (HostCopy::ways, Report::copy_threads)
  bool defer_unmaps = false;   // zero-copy results are unmapped after the wait (one feeding thread)
  bool has_replicas = false;   // some vector is read whole
  // Written vectors read whole whose replica is the slice of the run's one partition (it holds
  // every unit): kernels read the slice itself, so nothing re-replicates them (replica_of).
  std::set<const VectorState*> replica_in_slice;
  // Written bound vectors read whole whose replica in the one context of zero-copy devices (one
  // worker there) is the user's memory itself, which holds that context's slices already: the
  // other contexts' slices are read straight into it and written to their replicas from it.
  std::set<const VectorState*> replica_in_user;
  cl_context host_context = nullptr;  // that context
  std::map<const VectorState*, std::vector<unsigned char>> staging;  // replica sync between contexts
  std::map<std::string, Value> results;  // map_reduce outputs, written at barriers and after the join
  bool loop_done = false;                // a loop predicate's verdict, read after its barrier
  std::size_t iterations = 0;
  // Halos: the partitions in unit order (an exchange finds a unit's partition), each constant
  // boundary's element repeated over the widest side, the exchanges so far and their trace labels.
  std::vector<PartState*> by_unit;
  std::map<const VectorState*, std::vector<unsigned char>> halo_fill;
  std::vector<HaloExchange> exchanges;
  std::map<std::string, std::string> labels;  // stable strings for TimedEvent::path
  // Divide-and-conquer levels as they finish (workers add theirs under the mutex).
  std::mutex levels_mutex;
  std::vector<LevelReport> levels;

  double now_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const std::string& path(const NodeImpl& n) const { return an.path(n); }

  // The host memory bound to `u` (which must be bound).
  char* host_of(const VectorUse& u) const {
    return static_cast<char*>(bindings[static_cast<std::size_t>(u.binding)].data);
  }
  std::size_t slice_offset(const PartState& ps, const VectorUse& u) const {
    return ps.part->first * u.vector->unit * u.vector->type.size;
  }
  std::size_t slice_bytes(const PartState& ps, const VectorUse& u) const {
    return ps.part->units * u.vector->unit * u.vector->type.size;
  }
  // The slice is the user's memory itself: a bound vector on a host-unified CPU device, unless
  // its halo units are exchanged (then it is part of a halo buffer of the device's own), or a
  // leaf's kernels count on aligned buffers (VectorUse::aligned) and the slice's memory is not
  // aligned to the device's base address alignment (it is staged in a buffer of the device's).
  bool host_slice(const PartState& ps, const VectorUse& u) const {
    const Worker& w = *ps.worker;
    return w.zero_copy && u.bound() && !u.exchanged() &&
           (!u.aligned || aligned_for(w, host_of(u) + slice_offset(ps, u)));
  }
  // A vector read whole and never written is the user's memory itself on a zero-copy device, on
  // the same terms.
  bool whole_in_user(const Worker& w, const VectorUse& u) const {
    return w.zero_copy && u.bound() && !u.written && (!u.aligned || aligned_for(w, host_of(u)));
  }
  static bool aligned_for(const Worker& w, const void* host) {
    return reinterpret_cast<std::uintptr_t>(host) % w.base_alignment() == 0;
  }

  // Where a command's event goes: nowhere unless the request is profiled (an event is a driver
  // object per command, which only the report and the trace read).
  cl::Event* event_of(cl::Event& ev) const { return profile ? &ev : nullptr; }
  cl_event* event_of(cl_event& ev) const { return profile ? &ev : nullptr; }  // for the libraries' C calls
  // Keeps a command's event for the report and the trace (profiled requests only).
  void track(PartState& ps, cl::Event ev, const std::string* path, bool kernel) {
    if (profile) ps.events.push_back({std::move(ev), path, kernel});
  }

  // The replica of `v` a kernel of `ps` reads whole: its context's, or the slice that holds it all.
  const cl::Buffer& replica_of(const PartState& ps, const VectorState* v) const {
    if (replica_in_slice.count(v)) return ps.slices.at(v);
    return contexts.at(ps.worker->context()).whole.at(v);
  }

  // Counts one of the executor's own copies (Report::copies, and loop_copies inside a loop's body).
  void count_copy(const Worker& w, CopyKind kind, std::uint64_t bytes);
  Copies copies, loop_copies;

  // A device buffer from the runtime's pool, returned to it when the request ends.
  // `owner`: the partition whose buffer it is, so that recycle() finds it.
  cl::Buffer device_buffer(const cl::Context& context, std::size_t bytes, const DeviceInfo& info,
                           PartState* owner = nullptr);
  // A dynamic schedule's finished chunk gives its device buffers back to the runtime's pool at
  // once, for the chunks taken after it (allocating a GPU buffer per chunk cost each chunk
  // hundreds of microseconds). Only once its commands have all finished.
  void recycle(PartState& ps);
  // A partition's own device buffer (a slice, a halo buffer): from the pool, or, with the poison
  // check on, a sub-buffer in the middle of a pooled one whose guards hold the poison byte, so a
  // kernel reading past its ends reads poison. `unit_bytes` sizes the guards.
  cl::Buffer partition_buffer(PartState& ps, std::size_t bytes, std::size_t unit_bytes);
  // A partition's buffer for vector `v` in a role (kSliceRole, kHaloRole) holding its units plus
  // `extra_units`: partition_buffer's, or the worker's buffer for that vector and role that every
  // partition of a streaming worker shares (Worker::reuse_units).
  static constexpr int kSliceRole = 0, kHaloRole = 1;
  cl::Buffer chunk_buffer(PartState& ps, const VectorState* v, int role, std::size_t extra_units);
  // The most device memory the run held at once per device (by the device's DeviceInfo): every
  // buffer it holds until it ends, less those a dynamic schedule's finished chunks gave back
  // (Report::device_bytes).
  std::map<const DeviceInfo*, std::uint64_t> allocated() const;

  // The first error of any worker; the others' are dropped.
  void keep_error();
  std::exception_ptr error() const { return error_; }

 private:
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::mutex copies_mutex_;
  mutable std::mutex pooled_mutex_;  // a dynamic schedule's workers allocate their chunks' buffers at once
  struct Pooled {
    cl::Context context;
    std::size_t bytes;
    cl::Buffer buffer;
    std::size_t limit;
    const DeviceInfo* device;
  };
  std::vector<Pooled> pooled_;
  std::map<const DeviceInfo*, std::pair<std::uint64_t, std::uint64_t>> held_;  // bytes now, the most
};

// The parts of an execution, in the order execute() calls them.
// Builds every program and kernel the run needs and checks the device limits (work-group
// sizes, allocation sizes, memory), then allocates the buffers — all before any data moves.
void prepare(RunState& run);
// A partition's slices (and halo buffers) of the vectors it uses: prepare() makes them for every
// partition, a dynamic schedule's worker for each chunk it takes while the run goes.
void allocate_slices(RunState& run, PartState& ps);
// Runs every worker's partitions (a thread per queue, or one thread feeding every device) and
// waits for their queues; the first error is kept in the run.
void drive(RunState& run);
// The report of a finished run, and its Chrome trace when one is asked for.
Report report(RunState& run, double joined_ms);

}  // namespace sinew::detail
