// exec/prepare.cpp — a run's state before any data moves: its workers and their queues, every
// program and kernel object (through the node runners), the device limits, the buffers.
#include "exec/chunks.hpp"
#include "exec/host_copy.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

namespace sinew::detail {

namespace {

// What the run will allocate (memory_footprint: the buffers of each partition, or of a streaming
// worker's largest, and each context's replicas) fits every device's memory, and each buffer its
// largest allocation. decompose() planned for this; a plan made elsewhere is caught here.
void check_memory(RunState& run) {
  const Footprint f = memory_footprint(run.root, run.an);
  std::map<const Device*, std::uint64_t> total;
  auto add = [&](const Worker& w, const Footprint::Buffer& b, std::uint64_t bytes) {
    const auto& info = w.info();
    if (w.zero_copy && b.host_on_zero_copy) return;
    if (bytes > info.largest_allocation())
      throw_error(errc::invalid_argument,
                  std::string("the ") + b.what + " of vector '" + b.vector + "' needs " + std::to_string(bytes) +
                      " bytes, more than the device's largest allocation (" +
                      std::to_string(info.largest_allocation()) + ")",
                  {.argument = "vector '" + b.vector + "'", .device = info.name,
                   .fix = "give this device a smaller share, or split the data over more devices"});
    total[w.device] += bytes;
  };
  for (const auto& w : run.workers.list) {
    for (const auto& b : f.partition) {
      if (w.reuse_units) add(w, b, b.bytes(w.reuse_units));
      else
        for (const PartState* ps : w.parts) add(w, b, b.bytes(ps->part->units));
    }
  }
  for (const auto& [handle, cs] : run.workers.contexts)
    for (const auto& b : f.context) add(*cs.workers.front(), b, b.unit_bytes);
  for (const auto& [dev, bytes] : total)
    if (bytes > dev->info().memory())
      throw_memory_shortfall(dev->info(),
                  "the device's partitions need " + std::to_string(bytes) + " bytes of device memory, more than it has (" +
                      std::to_string(dev->info().memory()) + ")",
                  {.device = dev->info().name,
                   .fix = "give this device a smaller share, use more devices, or raise its memory cap "
                          "(RuntimeOptions::memory_cap)"});
}

// A loop copy that may swap buffers (Analysis::swap_copies): where the destination's slice lives
// in its halo buffer, the source's slice is made the same place in a twin of that buffer, so the
// two swap whole (unless the source's slice must be the user's memory: then this partition
// copies).
void allocate_swap(RunState& run, PartState& ps, const NodeImpl& copy) {
  const VectorState* src = copy.args[0].vector.get();
  const VectorState* dst = copy.args[1].vector.get();
  auto& swap = ps.swaps[&copy];
  if (run.replicas->in_user_memory(ps.worker->context(), dst)) return;  // see Replicas
  if (!ps.halo_holds_slice.count(dst)) {
    swap.allowed = true;  // slices alone swap
    return;
  }
  const VectorUse& s = run.an.use(src);
  const VectorUse& d = run.an.use(dst);
  if (run.host_slice(ps, s)) return;
  const std::size_t ub = d.vector->unit * d.vector->type.size;
  swap.twin = run.buffers.partition_buffer(ps, (ps.part->units + d.halo_before + d.halo_after) * ub, ub);
  cl_buffer_region region{d.halo_before * ub, ps.part->units * ub};
  ps.slices[src] = swap.twin.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
  swap.allowed = true;
}

// Slices per partition, replicas per context. On a host-unified device a bound vector's slice
// is the user's memory itself (zero copy); replicas are too, unless the tree writes the vector.
void allocate(RunState& run) {
  run.replicas->plan();
  for (auto& ps : run.workers.parts) allocate_slices(run, ps);
  run.replicas->allocate();
}

}  // namespace

void allocate_slices(RunState& run, PartState& ps) {
  Worker& w = *ps.worker;
  for (const auto& u : run.an.vectors)
    if (u.partitioned && u.read_halo) run.halos->allocate(ps, u);  // may make the slice part of the halo buffer
  for (const NodeImpl* copy : run.an.swap_copies) allocate_swap(run, ps, *copy);
  for (const auto& u : run.an.vectors) {
    if (!u.partitioned) continue;
    if (ps.slices.count(u.vector.get()) || !u.slice_used()) continue;
    const std::size_t bytes = run.slice_bytes(ps, u);
    if (run.host_slice(ps, u)) {
      cl_mem_flags flags = CL_MEM_USE_HOST_PTR | (u.written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
      ps.slices[u.vector.get()] = cl::Buffer(w.context, flags, bytes, run.host_of(u) + run.slice_offset(ps, u));
    } else {
      ps.slices[u.vector.get()] = run.buffers.chunk_buffer(ps, u.vector.get(), BufferLedger::kSliceRole, 0);
    }
  }
}

namespace {

// Partitions that share a (device, sub-device, queue) share a worker; workers in that order, each
// with a queue from the pool. `keys`: the queues that take part.
void make_workers(RunState& run, const std::set<std::tuple<std::size_t, unsigned, unsigned>>& keys) {
  run.workers.list.resize(keys.size());
  std::size_t i = 0;
  for (const auto& key : keys) {
    auto& w = run.workers.list[i];
    w.index = i++;
    w.runtime_index = std::get<0>(key);
    w.device = run.env.devices.at(w.runtime_index);
    w.sub_device = std::get<1>(key);
    w.queue_index = std::get<2>(key);
    const auto& info = w.info();
    if (!info.discrete) {
      const auto& fs = w.device->fission(run.dec.config.fission);
      w.context = fs.context;
      w.cl_device = fs.devices.at(w.sub_device);
    } else {
      w.context = w.device->context();
      w.cl_device = w.device->device();
    }
    w.zero_copy = zero_copy_device(info);
    w.slot = run.env.queues->acquire(w.context, w.cl_device, run.profile);
    w.slot->staging.wait = w.slot->results.wait = run.env.wait;
  }
}

// The decomposition's partitions, each on its worker.
void place_partitions(RunState& run) {
  run.workers.parts.resize(run.dec.parts.size());
  for (std::size_t p = 0; p < run.dec.parts.size(); ++p) {
    auto& ps = run.workers.parts[p];
    ps.part = &run.dec.parts[p];
    for (auto& w : run.workers.list)
      if (w.runtime_index == ps.part->device && w.sub_device == ps.part->sub_device && w.queue_index == ps.part->queue)
        ps.worker = &w;
    ps.worker->parts.push_back(&ps);
  }
}

// Each worker's queue in the schedule's run (RunSchedule::takers); the worker of each queue (null
// for a queue no worker has).
std::vector<Worker*> assign_takers(RunState& run) {
  RunSchedule& schedule = run.schedule;
  const auto& queues = schedule.run->queues();
  schedule.takers.assign(run.workers.list.size(), {});
  std::vector<Worker*> worker_of(queues.size(), nullptr);
  for (auto& w : run.workers.list)
    for (std::size_t q = 0; q < queues.size(); ++q)
      if (w.runtime_index == queues[q].device && w.sub_device == queues[q].sub_device &&
          w.queue_index == queues[q].queue) {
        schedule.takers[w.index].queue = q;
        worker_of[q] = &w;
      }
  return worker_of;
}

// The run's schedule: the policy's run of the plan (its queues, the chunks it cuts before the
// run), each worker's queue there, and the chunks cut before the run on their workers, in the
// order the policy cut them, so that they are prepared, checked and allocated like any partition.
void start_schedule(RunState& run) {
  const std::vector<Worker*> worker_of = assign_takers(run);
  for (const auto& [q, chunk] : run.schedule.run->chunks_before_run()) add_chunk(run, *worker_of.at(q), chunk);
}

// Staged copies: split over helper threads (docs/decisions/172).
void share_copy_threads(RunState& run) {
  const auto& list = run.workers.list;
  run.workers.cpu_work = std::any_of(list.begin(), list.end(), [](const Worker& w) { return !w.info().discrete; });
  const auto staging_queues =
      static_cast<std::size_t>(std::count_if(list.begin(), list.end(), [](const Worker& w) { return !w.zero_copy; }));
  const HostCopy copy(run.env.threads,
                      copy_ways(run.env.copy_threads, run.workers.cpu_work, staging_queues, run.env.hardware_threads));
  for (auto& w : run.workers.list) w.slot->staging.copy = w.slot->results.copy = copy;
  run.record.copy_threads = staging_queues && !all_direct(run) ? copy.ways() : 1;
}

// What the runners allocated beside the vectors' buffers (a scan's levels, a divide-and-conquer
// node's scratch and upper levels) is not in the footprint decompose() planned with: the
// device's memory is checked against what was allocated, still before any data moves. (The
// poison check's guards around every buffer are not the tree's: not counted.)
void check_allocated(RunState& run) {
  for (const auto& [info, bytes] : run.buffers.allocated())
    if (!run.buffers.poison() && bytes > info->memory())
      throw_memory_shortfall(*info,
                  "the run's buffers on " + info->id() + " (" + info->name + ") add up to " + size_text(bytes) +
                      ", more than " + memory_text(*info) + " (its vectors' slices with the tree's scratch: a scan's "
                      "levels, a divide-and-conquer node's buffers)",
                  {.device = info->name,
                   .fix = "give " + info->id() + " a smaller share, run the tree on another device, or raise its "
                          "memory cap ($SINEW_MEMORY_CAP=" + info->id() + "=<size>)"});
}

}  // namespace

void prepare_runners(RunState& run, Worker& w) {
  NodeContext ctx(run);
  visit(run.root, [&](const NodeImpl& n) {
    cl_call([&] { return ErrorContext{.node = run.path(n), .device = w.info().name}; },
            [&] { runner_of(n).prepare(ctx, w, n); });
  });
}

bool prepare_again(RunState& run, ScheduleMemory* memory) {
  std::unique_ptr<ScheduleRun> schedule = run.dec.policy->start_run(run.dec, memory);
  if (schedule->takes_chunks() || schedule->queues().size() != run.workers.list.size() ||
      !schedule->chunks_before_run().empty())
    return false;
  run.schedule.run = std::move(schedule);
  const std::vector<Worker*> worker_of = assign_takers(run);
  if (std::find(worker_of.begin(), worker_of.end(), nullptr) != worker_of.end()) return false;
  run.start = std::chrono::steady_clock::now();
  run.record.reset();
  run.workers.defer_unmaps = false;
  for (auto& w : run.workers.list) {
    w.dirty.clear();
    w.halo_dirty.clear();
    w.pending.clear();
    w.values_met.clear();
    w.loop_depth = 0;
    w.leaves_run = {};
    w.host_start_ms = w.host_enqueued_ms = w.host_end_ms = 0;
    w.drained = false;
  }
  for (auto& ps : run.workers.parts) {
    ps.events.clear();
    ps.maps.clear();
  }
  cl_call({.api_call = "resident array"}, [&] { run.residency.place(); });
  return true;
}

void prepare(RunState& run, ScheduleMemory* memory) {
  run.schedule.run = run.dec.policy->start_run(run.dec, memory);
  const bool takes_chunks = run.schedule.takes_chunks();
  std::set<std::tuple<std::size_t, unsigned, unsigned>> keys;
  for (const auto& q : run.schedule.run->queues()) keys.emplace(q.device, q.sub_device, q.queue);
  make_workers(run, keys);
  place_partitions(run);
  run.buffers.round_partition_sizes(takes_chunks);
  start_schedule(run);
  for (auto& w : run.workers.list)
    run.workers.contexts.try_emplace(replica_place(w), ContextState{w.context, {}}).first->second.workers.push_back(&w);
  // A streamed tree's workers (partitions placed before the run) reuse their buffers from
  // partition to partition.
  if (run.an.streamable && !takes_chunks)
    for (auto& w : run.workers.list)
      for (const PartState* ps : w.parts) w.reuse_units = std::max(w.reuse_units, ps->part->units);
  check_memory(run);
  run.halos->plan();
  share_copy_threads(run);
  // Programs and kernel objects once per worker (its partitions share its queue), what depends
  // on a partition's size once per partition.
  NodeContext ctx(run);
  visit(run.root, [&](const NodeImpl& n) {
    const NodeRunner& runner = runner_of(n);
    for (auto& w : run.workers.list)
      cl_call([&] { return ErrorContext{.node = run.path(n), .device = w.info().name}; },
              [&] { runner.prepare(ctx, w, n); });
  });
  // Once every program is built: a run refused here leaves its resident arrays untouched.
  cl_call({.api_call = "resident array"}, [&] { run.residency.place(); });
  cl_call({.api_call = "clCreateBuffer"}, [&] { allocate(run); });
  run.whole_leaves.prepare();
  check_allocated(run);
}

}  // namespace sinew::detail
