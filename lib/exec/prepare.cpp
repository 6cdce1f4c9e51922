// exec/prepare.cpp — a run's state before any data moves: its workers and their queues, every
// program and kernel object (through the node runners), the device limits, the buffers.
#include "exec/chunks.hpp"
#include "exec/halo.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <bit>
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
  pooled_.push_back({context, bytes, b, static_cast<std::size_t>(info.global_memory / 2)});
  return b;
}

void RunState::recycle(PartState& ps) {
  std::lock_guard lock(pooled_mutex_);
  for (std::size_t i : ps.pooled) {
    Pooled& b = pooled_[i];
    if (b.buffer()) env.buffers->release(b.context, b.bytes, std::move(b.buffer), b.limit);
    b.buffer = cl::Buffer();
  }
  ps.pooled.clear();
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

// Every slice and replica fits the device's largest allocation, and all of them its memory.
void check_memory(RunState& run) {
  std::map<const Device*, std::uint64_t> total;
  std::set<std::pair<const Device*, const VectorState*>> replicas;
  for (auto& ps : run.parts) {
    const auto& info = ps.worker->info();
    for (const auto& u : run.an.vectors) {
      const std::uint64_t esize = u.vector->type.size;
      auto check = [&](std::uint64_t bytes, const char* what) {
        if (bytes > info.max_alloc)
          throw_error(errc::invalid_argument,
                      std::string(what) + " of vector '" + u.vector->name + "' needs " + std::to_string(bytes) +
                          " bytes, more than the device's largest allocation (" + std::to_string(info.max_alloc) + ")",
                      {.argument = "vector '" + u.vector->name + "'", .device = info.name,
                       .fix = "give this device a smaller share, or split the data over more devices"});
        total[ps.worker->device] += bytes;
      };
      if (u.partitioned) check(ps.part->units * u.vector->unit * esize, "the slice");
      if (u.read_halo)
        check((ps.part->units + u.halo_before + u.halo_after) * u.vector->unit * esize, "the slice with its halo");
      if (u.read_whole && replicas.emplace(ps.worker->device, u.vector.get()).second) check(u.elements * esize, "the replica");
    }
  }
  for (const auto& [dev, bytes] : total)
    if (bytes > dev->info().global_memory)
      throw_error(errc::invalid_argument,
                  "the device's partitions need " + std::to_string(bytes) + " bytes of device memory, more than it has (" +
                      std::to_string(dev->info().global_memory) + ")",
                  {.device = dev->info().name, .fix = "give this device a smaller share, or use more devices"});
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
  if (run.host_slice(*ps.worker, s)) return;
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
    if (run.host_context && u.read_whole && u.written && u.bound() && u.partitioned && !u.read_halo &&
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
      if (cs.workers.front()->zero_copy && u.bound() && !u.written)
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
    if (run.host_slice(w, u)) {
      cl_mem_flags flags = CL_MEM_USE_HOST_PTR | (u.written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
      ps.slices[u.vector.get()] = cl::Buffer(w.context, flags, bytes, run.host_of(u) + run.slice_offset(ps, u));
    } else {
      ps.slices[u.vector.get()] = run.partition_buffer(ps, bytes, u.vector->unit * u.vector->type.size);
    }
  }
}

void prepare(RunState& run) {
  // Partitions that share a (device, sub-device, queue) share a worker; workers in that order.
  std::set<std::tuple<std::size_t, unsigned, unsigned>> keys;
  for (const auto& p : run.dec.is_dynamic() ? run.dec.dynamic.slots : run.dec.parts)
    keys.emplace(p.device, p.sub_device, p.queue);
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
    for (auto& w : run.workers) cut_chunk(run, w);
  }
  for (auto& w : run.workers) {
    auto [it, inserted] = run.contexts.try_emplace(w.context(), ContextState{w.context, {}, {}});
    it->second.workers.push_back(&w);
  }
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
  // Programs and kernel objects once per worker (its partitions share its queue), what depends
  // on a partition's size once per partition.
  visit(run.root, [&](const NodeImpl& n) {
    const NodeRunner& runner = runner_of(n);
    for (auto& w : run.workers)
      cl_call([&] { return ErrorContext{.node = run.path(n), .device = w.info().name}; },
              [&] { runner.prepare(run, w, n); });
  });
  cl_call({.api_call = "clCreateBuffer"}, [&] { allocate(run); });
}

}  // namespace sinew::detail
