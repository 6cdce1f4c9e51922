// exec/prepare.cpp — a run's state before any data moves: its workers and their queues, every
// program and kernel object (through the node runners), the device limits, the buffers.
#include "exec/chunks.hpp"
#include "exec/halo.hpp"
#include "exec/host_copy.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <tuple>

namespace sinew::detail {

RunState::RunState(Environment& e, const NodeImpl& r, const Analysis& a, const std::vector<Binding>& b,
                   const Decomposition& d, bool p)
    : env(e), root(r), an(a), bindings(b), dec(d), profile(p) {}

RunState::~RunState() {
  for (auto& w : workers) {
    if (!w.slot) continue;
    if (!w.drained) {
      try {
        w.queue().finish();  // nothing may still touch host memory once the request is over
      } catch (...) {
      }
      try {
        unmap_deferred(w);
      } catch (...) {
      }
    }
    env.queues->release(w.cl_device, std::move(w.slot));
  }
  for (auto& b : pooled_)
    if (b.buffer()) env.buffers->release(b.context, b.bytes, std::move(b.buffer), b.limit);
}

cl::Buffer RunState::device_buffer(const cl::Context& context, std::size_t bytes, const DeviceInfo& info,
                                   PartState* owner) {
  cl::Buffer b = env.buffers->acquire(context, bytes);
  std::lock_guard lock(pooled_mutex_);
  if (owner) owner->pooled.push_back(pooled_.size());
  pooled_.push_back({context, bytes, b, static_cast<std::size_t>(info.memory() / 2), &info});
  auto& [now, peak] = held_[&info];
  peak = std::max(peak, now += bytes);
  return b;
}

void RunState::recycle(PartState& ps) {
  std::lock_guard lock(pooled_mutex_);
  for (std::size_t i : ps.pooled) {
    Pooled& b = pooled_[i];
    if (!b.buffer()) continue;
    held_[b.device].first -= b.bytes;
    env.buffers->release(b.context, b.bytes, std::move(b.buffer), b.limit);
    b.buffer = cl::Buffer();
  }
  ps.pooled.clear();
}

std::map<const DeviceInfo*, std::uint64_t> RunState::allocated() const {
  std::lock_guard lock(pooled_mutex_);
  std::map<const DeviceInfo*, std::uint64_t> out;
  for (const auto& [device, held] : held_) out[device] = held.second;
  return out;
}

cl::Buffer RunState::chunk_buffer(PartState& ps, const VectorState* v, int role, std::size_t extra_units) {
  Worker& w = *ps.worker;
  const std::size_t ub = v->unit * v->type.size;
  if (!w.reuse_units) return partition_buffer(ps, (ps.part->units + extra_units) * ub, ub);
  auto [it, made] = w.reused.try_emplace({v, role});
  if (made) it->second = partition_buffer(ps, (w.reuse_units + extra_units) * ub, ub);
  return it->second;
}

cl::Buffer RunState::partition_buffer(PartState& ps, std::size_t bytes, std::size_t unit_bytes) {
  Worker& w = *ps.worker;
  if (w.zero_copy) return device_buffer(w.context, bytes, w.info(), &ps);
  if (!poison) {
    // A dynamic schedule's chunks come in many sizes: rounded up to two leading binary digits
    // (at most half again), a finished chunk's buffers serve the later chunks and the next
    // request's (the pool matches sizes exactly). Nothing reads a buffer's own size.
    if (dec.is_dynamic())
      if (const int low = std::bit_width(bytes) - 2; low > 0) {
        const std::size_t step = std::size_t{1} << low;
        bytes = std::max(bytes, std::min<std::size_t>((bytes + step - 1) / step * step, w.info().max_alloc));
      }
    return device_buffer(w.context, bytes, w.info(), &ps);
  }
  // Guards of a few units (a stencil reads a unit or two beyond), at least 64 KB, aligned so the
  // sub-buffer's origin is legal.
  const std::size_t align = w.base_alignment();
  const std::size_t guard = (std::max<std::size_t>(65536, 4 * unit_bytes) + align - 1) / align * align;
  cl::Buffer parent = device_buffer(w.context, bytes + 2 * guard, w.info());
  w.queue().enqueueFillBuffer(parent, poison, 0, bytes + 2 * guard);
  ps.guarded.push_back(parent);
  cl_buffer_region region{guard, std::max<std::size_t>(bytes, 1)};
  return parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
}

void RunState::count_copy(const Worker& w, CopyKind kind, std::uint64_t bytes) {
  std::lock_guard lock(copies_mutex_);
  for (Copies* c : {&copies, w.loop_depth > 0 ? &loop_copies : nullptr}) {
    if (!c) continue;
    CopyCount& n = kind == CopyKind::value       ? c->values
                   : w.zero_copy                 ? c->host
                   : kind == CopyKind::to_device ? c->to_device
                   : kind == CopyKind::to_host   ? c->to_host
                                                 : c->device;
    ++n.count;
    n.bytes += bytes;
  }
}

void RunState::keep_error() {
  std::lock_guard lock(error_mutex_);
  if (!error_) error_ = std::current_exception();
}

namespace {

// What the run will allocate (memory_footprint: the buffers of each partition, or of a streaming
// worker's largest, and each context's replicas) fits every device's memory, and each buffer its
// largest allocation. decompose() planned for this; a plan made elsewhere is caught here.
void check_memory(RunState& run) {
  const Footprint f = memory_footprint(run.an);
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
  for (const auto& w : run.workers) {
    for (const auto& b : f.partition) {
      if (w.reuse_units) add(w, b, b.bytes(w.reuse_units));
      else
        for (const PartState* ps : w.parts) add(w, b, b.bytes(ps->part->units));
    }
  }
  for (const auto& [handle, cs] : run.contexts)
    for (const auto& b : f.context) add(*cs.workers.front(), b, b.unit_bytes);
  for (const auto& [dev, bytes] : total)
    if (bytes > dev->info().memory())
      throw_error(errc::invalid_argument,
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
  if (ps.worker->context() == run.host_context && run.replica_in_user.count(dst)) return;  // see user_replica_context
  if (!ps.halo_holds_slice.count(dst)) {
    swap.allowed = true;  // slices alone swap
    return;
  }
  const VectorUse& s = run.an.use(src);
  const VectorUse& d = run.an.use(dst);
  if (run.host_slice(ps, s)) return;
  const std::size_t ub = d.vector->unit * d.vector->type.size;
  swap.twin = run.partition_buffer(ps, (ps.part->units + d.halo_before + d.halo_after) * ub, ub);
  cl_buffer_region region{d.halo_before * ub, ps.part->units * ub};
  ps.slices[src] = swap.twin.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
  swap.allowed = true;
}

// A written vector read whole whose one partition holds every unit needs no replica: kernels read
// the slice, which the tree's leaves write in place (and a loop's closing copy swaps), so no
// iteration re-replicates it, as none would by hand. Unless a leaf reads it whole while writing
// its slice: that leaf reads a snapshot.
// A leaf reads `u` whole while writing its slice: it reads a snapshot, so the replica must be a
// buffer of its own.
bool read_as_snapshot(const RunState& run, const VectorUse& u) {
  bool snapshot = false;
  visit(run.root, [&](const NodeImpl& n) {
    if (!n.is_leaf()) return;
    bool whole = false, writes = false;
    for (const auto& a : n.args) {
      if (a.vector != u.vector) continue;
      whole = whole || a.kind == Arg::Kind::whole;
      writes = writes || (a.kind == Arg::Kind::partitioned && a.access != Access::read);
    }
    snapshot = snapshot || (whole && writes);
  });
  return snapshot;
}

bool replica_in_slice(const RunState& run, const VectorUse& u) {
  // (Part of a larger run over several processes, the others' slices come in through the
  // exchanger into a replica of its own.)
  if (!u.read_whole || !u.written || !u.partitioned || run.dec.is_dynamic() || run.parts.size() != 1 || run.exchanger)
    return false;
  if (run.parts.front().part->units * u.vector->unit != u.elements) return false;
  return !read_as_snapshot(run, u);
}

// Split over contexts, the one context of zero-copy devices may take the user's memory as its
// replica of a written bound vector: its slices are that memory already, so a refresh brings it
// only the others' slices (read straight into it), and the other contexts take its slices from
// there, with no copy through staging (a hand-written split moves the same). Only with one
// worker there (partitions on other queues of that context would read what one of them writes
// meanwhile) and no other zero-copy context (its slices are the user's memory too, written while
// this one reads). Its partitions then copy instead of swapping (PartState::swaps): a sweep
// writing its slice into the user's memory would overwrite what it reads.
cl_context user_replica_context(const RunState& run) {
  if (run.contexts.size() < 2 || run.dec.is_dynamic() || run.exchanger) return nullptr;
  cl_context found = nullptr;
  for (const auto& [handle, cs] : run.contexts) {
    if (!cs.workers.front()->zero_copy) continue;
    if (found || cs.workers.size() != 1) return nullptr;
    found = handle;
  }
  return found;
}

// Slices per partition, replicas per context. On a host-unified device a bound vector's slice
// is the user's memory itself (zero copy); replicas are too, unless the tree writes the vector.
void allocate(RunState& run) {
  run.host_context = user_replica_context(run);
  for (const auto& u : run.an.vectors) {
    if (replica_in_slice(run, u)) run.replica_in_slice.insert(u.vector.get());
    if (run.host_context && u.read_whole && u.written && u.bound() && u.partitioned && !u.read_halo && !u.aligned &&
        !read_as_snapshot(run, u))
      run.replica_in_user.insert(u.vector.get());
  }
  for (auto& ps : run.parts) allocate_slices(run, ps);
  for (auto& [handle, cs] : run.contexts) {
    for (const auto& u : run.an.vectors) {
      if (!u.read_whole) continue;
      run.has_replicas = true;
      if (run.replica_in_slice.count(u.vector.get())) continue;
      if (handle == run.host_context && run.replica_in_user.count(u.vector.get())) {
        cs.whole[u.vector.get()] = cl::Buffer(cs.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, u.bytes(), run.host_of(u));
        continue;
      }
      if (run.whole_in_user(*cs.workers.front(), u))
        cs.whole[u.vector.get()] = cl::Buffer(cs.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, u.bytes(), run.host_of(u));
      else
        cs.whole[u.vector.get()] = run.device_buffer(cs.context, u.bytes(), cs.workers.front()->info());
    }
  }
}

}  // namespace

void allocate_slices(RunState& run, PartState& ps) {
  Worker& w = *ps.worker;
  for (const auto& u : run.an.vectors)
    if (u.partitioned && u.read_halo) allocate_halo(run, ps, u);  // may make the slice part of the halo buffer
  for (const NodeImpl* copy : run.an.swap_copies) allocate_swap(run, ps, *copy);
  for (const auto& u : run.an.vectors) {
    if (!u.partitioned) continue;
    if (ps.slices.count(u.vector.get()) || !u.slice_used()) continue;
    const std::size_t bytes = run.slice_bytes(ps, u);
    if (run.host_slice(ps, u)) {
      cl_mem_flags flags = CL_MEM_USE_HOST_PTR | (u.written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
      ps.slices[u.vector.get()] = cl::Buffer(w.context, flags, bytes, run.host_of(u) + run.slice_offset(ps, u));
    } else {
      ps.slices[u.vector.get()] = run.chunk_buffer(ps, u.vector.get(), RunState::kSliceRole, 0);
    }
  }
}

void prepare(RunState& run) {
  // A dynamic schedule starts from the rates its plan's earlier runs measured
  // (DynamicChunks::seeded). Where they leave one discrete device alone, the run is that device's
  // static split, and only its queues are workers: another device's idle worker made the run one
  // with CPU work (its waits napping rather than blocking in the driver) and drove the first
  // queue from a pool thread, where the static split blocks and drives it from the calling
  // thread (H100 machine, Mandelbrot 4096², the CPU 260x slower: dynamic so left alone ran
  // 0.4-1.2 ms over the GPU's static split of 4.1 ms). Likewise any device whose slots would
  // stop at their first ask gets no worker (DynamicChunks::taking_part), its slots stopped.
  std::optional<std::size_t> alone;
  std::set<std::size_t> taking;  // dynamic: the devices given workers (empty: every device)
  if (run.dec.is_dynamic()) {
    run.chunks = run.dec.dynamic.seeded();
    taking = run.chunks.taking_part(run.dec.total_units, run.dec.granule);
    alone = run.chunks.alone_device(taking);
  }
  // Partitions that share a (device, sub-device, queue) share a worker; workers in that order.
  std::set<std::tuple<std::size_t, unsigned, unsigned>> keys;
  for (const auto& p : run.dec.is_dynamic() ? run.dec.dynamic.slots : run.dec.parts)
    if (taking.empty() || taking.count(p.device)) keys.emplace(p.device, p.sub_device, p.queue);
  run.workers.resize(keys.size());
  std::size_t i = 0;
  for (const auto& key : keys) {
    auto& w = run.workers[i++];
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
    w.zero_copy = !info.discrete && info.host_unified_memory;
    w.slot = run.env.queues->acquire(w.context, w.cl_device, run.profile);
    w.slot->staging.wait = w.slot->results.wait = run.env.wait;
  }
  run.parts.resize(run.dec.parts.size());
  for (std::size_t p = 0; p < run.dec.parts.size(); ++p) {
    auto& ps = run.parts[p];
    ps.part = &run.dec.parts[p];
    for (auto& w : run.workers)
      if (w.runtime_index == ps.part->device && w.sub_device == ps.part->sub_device && w.queue_index == ps.part->queue)
        ps.worker = &w;
    ps.worker->parts.push_back(&ps);
  }
  // A dynamic schedule: each worker's slot, and its first chunk cut now (in slot order), so that
  // it is prepared, checked and allocated below like any partition; the rest is taken as it runs.
  if (run.dec.is_dynamic()) {
    for (auto& w : run.workers)
      for (std::size_t s = 0; s < run.dec.dynamic.slots.size(); ++s) {
        const Partition& p = run.dec.dynamic.slots[s];
        if (w.runtime_index == p.device && w.sub_device == p.sub_device && w.queue_index == p.queue) w.dynamic_slot = s;
      }
    run.progress.assign(run.dec.dynamic.slots.size(), {});
    for (std::size_t s = 0; s < run.dec.dynamic.slots.size() && !taking.empty(); ++s)
      run.progress[s].stopped = !taking.count(run.dec.dynamic.slots[s].device);
    if (alone) {
      // One discrete device takes everything: its static split's chunks, cut now, in order.
      run.streamed_alone = true;  // (the other devices' slots are stopped above: taking is {*alone})
      for (const Partition& p : run.chunks.alone[*alone])
        for (auto& w : run.workers)
          if (w.runtime_index == p.device && w.queue_index == p.queue) cut_chunk(run, w, p.units);
    } else {
      // The probes first: a slot that takes everything left would leave them nothing.
      for (auto& w : run.workers)
        if (run.chunks.probes.at(w.dynamic_slot))
          cut_chunk(run, w, run.chunks.probe(w.dynamic_slot, run.dec.granule));
      for (auto& w : run.workers)
        if (!run.chunks.probes[w.dynamic_slot]) cut_chunk(run, w);
    }
  }
  for (auto& w : run.workers) {
    auto [it, inserted] = run.contexts.try_emplace(w.context(), ContextState{w.context, {}, {}});
    it->second.workers.push_back(&w);
  }
  // A streamed tree's workers (static schedule) reuse their buffers from partition to partition.
  if (run.an.streamable && !run.dec.is_dynamic())
    for (auto& w : run.workers)
      for (const PartState* ps : w.parts) w.reuse_units = std::max(w.reuse_units, ps->part->units);
  check_memory(run);
  for (auto& ps : run.parts) run.by_unit.push_back(&ps);
  std::sort(run.by_unit.begin(), run.by_unit.end(),
            [](const PartState* a, const PartState* b) { return a->part->first < b->part->first; });
  for (const auto& u : run.an.vectors) {
    if (!u.read_halo || u.fill.empty()) continue;
    // The boundary's element over the widest side: every piece beyond an edge is written from it.
    auto& fill = run.halo_fill[u.vector.get()];
    const std::size_t elements = std::max(u.halo_before, u.halo_after) * u.vector->unit;
    for (std::size_t i = 0; i < elements; ++i) fill.insert(fill.end(), u.fill.begin(), u.fill.end());
  }
  run.cpu_work = std::any_of(run.workers.begin(), run.workers.end(), [](const Worker& w) { return !w.info().discrete; });
  // Staged copies: split over helper threads where no CPU device needs the host's cores.
  {
    const auto staging_queues = static_cast<std::size_t>(
        std::count_if(run.workers.begin(), run.workers.end(), [](const Worker& w) { return !w.zero_copy; }));
    const HostCopy copy(run.env.threads,
                        copy_ways(run.env.copy_threads, run.cpu_work, staging_queues, run.env.hardware_threads));
    for (auto& w : run.workers) w.slot->staging.copy = w.slot->results.copy = copy;
    run.copy_threads = staging_queues && !all_direct(run) ? copy.ways() : 1;
  }
  // Programs and kernel objects once per worker (its partitions share its queue), what depends
  // on a partition's size once per partition.
  visit(run.root, [&](const NodeImpl& n) {
    const NodeRunner& runner = runner_of(n);
    for (auto& w : run.workers)
      cl_call([&] { return ErrorContext{.node = run.path(n), .device = w.info().name}; },
              [&] { runner.prepare(run, w, n); });
  });
  cl_call({.api_call = "clCreateBuffer"}, [&] { allocate(run); });
  // What the runners allocated beside the vectors' buffers (a scan's levels, a divide-and-conquer
  // node's scratch and upper levels) is not in the footprint decompose() planned with: the
  // device's memory is checked against what was allocated, still before any data moves. (The
  // poison check's guards around every buffer are not the tree's: not counted.)
  for (const auto& [info, bytes] : run.allocated())
    if (!run.poison && bytes > info->memory())
      throw_error(errc::invalid_argument,
                  "the run's buffers on " + info->id() + " (" + info->name + ") add up to " + size_text(bytes) +
                      ", more than " + memory_text(*info) + " (its vectors' slices with the tree's scratch: a scan's "
                      "levels, a divide-and-conquer node's buffers)",
                  {.device = info->name,
                   .fix = "give " + info->id() + " a smaller share, run the tree on another device, or raise its "
                          "memory cap ($SINEW_MEMORY_CAP=" + info->id() + "=<size>)"});
}

}  // namespace sinew::detail
