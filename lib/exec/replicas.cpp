// exec/replicas.cpp — the replicas of vectors read whole (see replicas.hpp).
#include "exec/replicas.hpp"

#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <iterator>

namespace sinew::detail {
namespace {

const std::string sync_path = "sync";

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

// A vector read whole whose one partition holds every unit needs no replica: kernels read the
// slice, which the tree's leaves write in place (and a loop's closing copy swaps), so no iteration
// re-replicates it, as none would by hand; read-only, the device holds it once and the kernels
// reading it partitioned and whole share its cache lines, as one buffer by hand does. Unless a
// leaf reads it whole while writing its slice (a snapshot).
bool replica_is_slice(const RunState& run, const VectorUse& u) {
  if (!u.read_whole || !u.partitioned || run.schedule.takes_chunks() || run.workers.parts.size() != 1)
    return false;
  if (run.workers.parts.front().part->units * u.vector->unit != u.elements) return false;
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
ReplicaPlace user_replica_place(const RunState& run) {
  const ReplicaPlace none{nullptr, nullptr};
  if (run.workers.contexts.size() < 2 || run.schedule.takes_chunks()) return none;
  ReplicaPlace found = none;
  for (const auto& [place, cs] : run.workers.contexts) {
    if (!cs.workers.front()->zero_copy) continue;
    if (found.first || cs.workers.size() != 1) return none;
    found = place;
  }
  return found;
}

// Whether the run's places span several OpenCL contexts (then some slices move through the host).
bool spans_contexts(const RunState& run) {
  const auto& places = run.workers.contexts;
  return !places.empty() && places.begin()->first.first != std::prev(places.end())->first.first;
}

// A slice of `v` into a context's replica `whole` on the context's own queue.
void copy_into_replica(RunState& run, PartState& ps, const VectorUse& u, const cl::Buffer& whole) {
  cl::Event ev;
  run.record.count_copy(*ps.worker, CopyKind::on_device, RunState::slice_bytes(ps, u));
  ps.worker->queue().enqueueCopyBuffer(ps.slices.at(u.vector.get()), whole, 0, RunState::slice_offset(ps, u),
                                       RunState::slice_bytes(ps, u), nullptr, run.event_of(ev));
  run.track(ps, ev, &sync_path, false);
}

// A slice of `v` from another device of the replica's context into `to`'s replica `whole`, on
// `to`'s queue: a device-side copy (the slice's writes have ended: replicas are synchronised
// at a barrier every queue reaches idle).
void copy_across_devices(RunState& run, PartState& from, PartState& to, const VectorUse& u, const cl::Buffer& whole) {
  cl::Event ev;
  run.record.count_copy(*to.worker, CopyKind::on_device, RunState::slice_bytes(from, u));
  to.worker->queue().enqueueCopyBuffer(from.slices.at(u.vector.get()), whole, 0, RunState::slice_offset(from, u),
                                       RunState::slice_bytes(from, u), nullptr, run.event_of(ev));
  run.track(to, ev, &sync_path, false);
}

void finish_all(RunState& run) {
  for (auto& w : run.workers.list) w.queue().finish();
}

}  // namespace

void Replicas::plan() {
  if (may_share_memory()) {
    host_place_ = user_replica_place(run_);
    host_context_ = host_place_.first;
  }
  for (const auto& u : run_.an.vectors) {
    if (may_share_memory() && replica_is_slice(run_, u)) in_slice_.insert(u.vector.get());
    if (host_context_ && u.read_whole && u.written && u.bound() && u.partitioned && !u.read_halo && !u.aligned &&
        !read_as_snapshot(run_, u))
      in_user_.insert(u.vector.get());
  }
}

void Replicas::allocate() {
  for (auto& [place, cs] : run_.workers.contexts) {
    auto& whole = whole_[place];
    for (const auto& u : run_.an.vectors) {
      if (!u.read_whole) continue;
      any_ = true;
      const VectorState* v = u.vector.get();
      if (in_slice_.count(v)) continue;
      if (in_user_memory(place.first, v)) {
        whole[v] = cl::Buffer(cs.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, u.bytes(), run_.host_of(u));
        continue;
      }
      if (run_.whole_in_user(*cs.workers.front(), u))
        whole[v] = cl::Buffer(cs.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, u.bytes(), run_.host_of(u));
      else
        whole[v] = run_.buffers.device_buffer(cs.context, u.bytes(), cs.workers.front()->info());
    }
  }
}

const cl::Buffer& Replicas::of(const PartState& ps, const VectorState* v) const {
  if (in_slice_.count(v)) return ps.slices.at(v);
  return whole_.at(replica_place(*ps.worker)).at(v);
}

void Replicas::upload(Worker& w) {
  static const std::string upload_path = "upload";
  // The first worker of the context that has partitions: only those run any (under a schedule
  // that cuts chunks as the run goes, a worker that took none before the run takes none later).
  const ContextState& cs = run_.workers.contexts.at(replica_place(w));
  Worker* first = cs.workers.front();
  for (Worker* o : cs.workers)
    if (!o->parts.empty()) {
      first = o;
      break;
    }
  if (first != &w || w.parts.empty()) return;
  cl_call({.api_call = "upload", .device = w.info().name}, [&] {
    bool wrote = false;
    for (const auto& u : run_.an.vectors) {
      const VectorState* v = u.vector.get();
      if (!u.read_whole || !u.bound() || run_.whole_in_user(w, u) || in_slice_.count(v)) continue;
      if (in_user_memory(w.context(), v)) continue;  // the user's memory
      to_device(run_, *w.parts.front(), whole_.at(replica_place(w)).at(v), 0, run_.host_of(u), u.bytes(), &upload_path);
      wrote = true;
    }
    if (wrote) w.queue().finish();  // other queues of the place read the replicas
  });
}

// The user's memory is the host context's replica and holds that context's slices: the others'
// slices are read into it, while each other context takes the host context's slices from it and
// copies its own into its replica and takes those of other devices of its context on the device;
// then the slices of third contexts.
void Replicas::sync_through_user(const VectorUse& u) {
  const VectorState* v = u.vector.get();
  RunState& run = run_;
  for (auto& ps : run.workers.parts)
    if (ps.worker->context() != host_context_ && ps.part->units)
      to_host(run, ps, ps.slices.at(v), 0, run.host_of(u) + RunState::slice_offset(ps, u), RunState::slice_bytes(ps, u),
              &sync_path);
  bool third = false;
  for (auto& [place, cs] : run.workers.contexts) {
    if (place == host_place_) continue;
    const cl::Buffer& whole = whole_.at(place).at(v);
    PartState& first = *cs.workers.front()->parts.front();
    for (auto& ps : run.workers.parts) {
      if (!ps.part->units) continue;
      if (replica_place(*ps.worker) == place)
        copy_into_replica(run, ps, u, whole);
      else if (ps.worker->context() == place.first)
        copy_across_devices(run, ps, first, u, whole);
      else if (ps.worker->context() == host_context_)
        to_device(run, first, whole, RunState::slice_offset(ps, u), run.host_of(u) + RunState::slice_offset(ps, u),
                  RunState::slice_bytes(ps, u), &sync_path);
      else
        third = true;
    }
  }
  finish_all(run);
  if (!third) return;
  for (auto& [place, cs] : run.workers.contexts) {
    if (place == host_place_) continue;
    for (auto& ps : run.workers.parts)
      if (ps.part->units && ps.worker->context() != place.first && ps.worker->context() != host_context_)
        to_device(run, *cs.workers.front()->parts.front(), whole_.at(place).at(v), RunState::slice_offset(ps, u),
                  run.host_of(u) + RunState::slice_offset(ps, u), RunState::slice_bytes(ps, u), &sync_path);
  }
  finish_all(run);
}

void Replicas::sync(const VectorState* v) {
  RunState& run = run_;
  const VectorUse& u = run.an.use(v);
  cl_call({.api_call = "replica sync", .argument = "vector '" + v->name + "'"}, [&] {
    if (in_user_.count(v)) return sync_through_user(u);
    if (spans_contexts(run)) {
      auto& host = staging_[v];
      host.resize(u.elements * v->type.size);
      for (auto& ps : run.workers.parts)
        if (ps.part->units)
          to_host(run, ps, ps.slices.at(v), 0, host.data() + RunState::slice_offset(ps, u), RunState::slice_bytes(ps, u),
                  &sync_path);
      finish_all(run);
    }
    for (auto& [place, cs] : run.workers.contexts) {
      const cl::Buffer& whole = whole_.at(place).at(v);
      PartState& first = *cs.workers.front()->parts.front();
      for (auto& ps : run.workers.parts) {
        if (!ps.part->units) continue;
        if (replica_place(*ps.worker) == place)
          copy_into_replica(run, ps, u, whole);
        else if (ps.worker->context() == place.first)
          copy_across_devices(run, ps, first, u, whole);
        else
          to_device(run, first, whole, RunState::slice_offset(ps, u), staging_[v].data() + RunState::slice_offset(ps, u),
                    RunState::slice_bytes(ps, u), &sync_path);
      }
    }
    finish_all(run);
  });
}

}  // namespace sinew::detail
