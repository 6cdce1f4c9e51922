// exec/transfer.cpp — moving a run's data (see transfer.hpp).
#include "exec/transfer.hpp"

#include "exec/exchanger.hpp"
#include "exec/halo.hpp"

#include "platform/error.hpp"

namespace sinew::detail {

bool staged(const RunState& run, const void* host, std::size_t bytes) {
  return run.env.transfer == TransferMode::staged && !(run.env.is_pinned && run.env.is_pinned(host, bytes));
}

bool all_direct(const RunState& run) {
  for (const auto& u : run.an.vectors)
    if (u.partitioned && u.bound() && staged(run, run.host_of(u), u.bytes())) return false;
  return true;
}

void to_device(RunState& run, PartState& ps, const cl::Buffer& buf, std::size_t offset, const void* host,
               std::size_t bytes, const std::string* label) {
  Worker& w = *ps.worker;
  run.count_copy(w, CopyKind::to_device, bytes);
  if (!w.zero_copy && staged(run, host, bytes)) {  // a CPU device copies from any memory at its speed
    std::vector<cl::Event> events;
    w.slot->staging.upload(w.queue(), buf, offset, host, bytes, events);
    for (auto& ev : events) run.track(ps, ev, label, false);
  } else {
    cl::Event ev;
    w.queue().enqueueWriteBuffer(buf, CL_FALSE, offset, bytes, host, nullptr, run.event_of(ev));
    run.track(ps, ev, label, false);
  }
}

void to_host(RunState& run, PartState& ps, const cl::Buffer& buf, std::size_t offset, void* host, std::size_t bytes,
             const std::string* label, std::vector<Staging::Pending>* later) {
  Worker& w = *ps.worker;
  run.count_copy(w, CopyKind::to_host, bytes);
  if (!w.zero_copy && staged(run, host, bytes)) {
    std::vector<cl::Event> events;
    if (later) later->push_back(w.slot->results.begin_download(w.queue(), buf, offset, host, bytes, events));
    else w.slot->staging.download(w.queue(), buf, offset, host, bytes, events);
    for (auto& ev : events) run.track(ps, ev, label, false);
  } else {
    cl::Event ev;
    w.queue().enqueueReadBuffer(buf, CL_FALSE, offset, bytes, host, nullptr, run.event_of(ev));
    run.track(ps, ev, label, false);
  }
}

void upload_replicas(RunState& run, Worker& w) {
  static const std::string upload_path = "upload";
  ContextState& cs = run.contexts.at(w.context());
  // Under a dynamic schedule, the first that took a chunk before the run: only those take any
  // (a slot stopped by the stop rule, or one that came after the last unit, takes none later).
  Worker* first = cs.workers.front();
  if (run.dec.is_dynamic())
    for (Worker* o : cs.workers)
      if (!o->parts.empty()) {
        first = o;
        break;
      }
  if (first != &w || w.parts.empty()) return;
  cl_call({.api_call = "upload", .device = w.info().name}, [&] {
    bool wrote = false;
    for (const auto& u : run.an.vectors) {
      if (!u.read_whole || !u.bound() || run.whole_in_user(w, u) || run.replica_in_slice.count(u.vector.get()))
        continue;
      if (w.context() == run.host_context && run.replica_in_user.count(u.vector.get())) continue;  // the user's memory
      to_device(run, *w.parts.front(), cs.whole.at(u.vector.get()), 0, run.host_of(u), u.bytes(), &upload_path);
      wrote = true;
    }
    if (wrote) w.queue().finish();  // other queues of the context read the replicas
  });
}

void upload(RunState& run, PartState& ps) {
  static const std::string upload_path = "upload";
  cl_call([&] { return ErrorContext{.api_call = "upload", .device = ps.worker->info().name}; }, [&] {
    for (const auto& u : run.an.vectors) {
      if (!u.partitioned || !u.bound()) continue;
      if (u.read_halo) upload_halo(run, ps, u);  // the slice too, where it is part of the halo buffer
      // (A slice that is the vector's replica too holds what the kernels read whole.)
      const bool read = u.read_partitioned || run.replica_in_slice.count(u.vector.get());
      if (!read || run.host_slice(ps, u) || ps.halo_holds_slice.count(u.vector.get())) continue;
      to_device(run, ps, ps.slices.at(u.vector.get()), 0, run.host_of(u) + run.slice_offset(ps, u),
                run.slice_bytes(ps, u), &upload_path);
    }
  });
}

void download(RunState& run, PartState& ps, std::vector<Staging::Pending>* later) {
  static const std::string download_path = "download";
  Worker& w = *ps.worker;
  cl_call([&] { return ErrorContext{.api_call = "download", .device = w.info().name}; }, [&] {
    for (const auto& u : run.an.vectors) {
      if (!u.partitioned || !u.bound() || !u.written) continue;
      auto& buf = ps.slices.at(u.vector.get());
      const std::size_t bytes = run.slice_bytes(ps, u);
      if (!run.host_slice(ps, u)) {
        to_host(run, ps, buf, 0, run.host_of(u) + run.slice_offset(ps, u), bytes, &download_path, later);
      } else if (w.info().host_pointer_aliased) {
        // The buffer is the host memory itself (probed): the results are there once the
        // queue has finished. (The map and unmap cost a 50M-float split some 40 us at its end.)
      } else {
        // The buffer is the host memory: mapping makes the device's writes visible there. The
        // in-order queue runs map then unmap; the worker's final wait covers both. One thread
        // feeding every device unmaps after the wait (PoCL's unmap waits for the map).
        void* p = w.queue().enqueueMapBuffer(buf, CL_FALSE, CL_MAP_READ, 0, bytes);
        if (run.defer_unmaps) ps.maps.emplace_back(buf, p);
        else w.queue().enqueueUnmapMemObject(buf, p);
      }
    }
  });
}

void finish_downloads(RunState& run, PartState& ps, std::vector<Staging::Pending>& later) {
  static const std::string download_path = "download";
  Worker& w = *ps.worker;
  cl_call([&] { return ErrorContext{.api_call = "download", .device = w.info().name}; }, [&] {
    for (auto& p : later) {
      std::vector<cl::Event> events;
      w.slot->results.finish_download(w.queue(), p, events);
      for (auto& ev : events) run.track(ps, ev, &download_path, false);
    }
  });
  later.clear();
}

void abandon_downloads(Worker& w, std::vector<Staging::Pending>& later) {
  for (auto& p : later) w.slot->results.abandon(p);
  later.clear();
}

namespace {

const std::string sync_path = "sync";

// A slice of `v` into a context's replica `whole` on the context's own queue.
void copy_into_replica(RunState& run, PartState& ps, const VectorUse& u, const cl::Buffer& whole) {
  cl::Event ev;
  run.count_copy(*ps.worker, CopyKind::on_device, run.slice_bytes(ps, u));
  ps.worker->queue().enqueueCopyBuffer(ps.slices.at(u.vector.get()), whole, 0, run.slice_offset(ps, u),
                                       run.slice_bytes(ps, u), nullptr, run.event_of(ev));
  run.track(ps, ev, &sync_path, false);
}

// The user's memory is the host context's replica (RunState::replica_in_user) and holds that
// context's slices: the others' slices are read into it, while each other context takes the host
// context's slices from it and copies its own into its replica; then the slices of third contexts.
void sync_through_user(RunState& run, const VectorUse& u) {
  const VectorState* v = u.vector.get();
  auto finish_all = [&] {
    for (auto& w : run.workers) w.queue().finish();
  };
  for (auto& ps : run.parts)
    if (ps.worker->context() != run.host_context && ps.part->units)
      to_host(run, ps, ps.slices.at(v), 0, run.host_of(u) + run.slice_offset(ps, u), run.slice_bytes(ps, u), &sync_path);
  bool third = false;
  for (auto& [handle, cs] : run.contexts) {
    if (handle == run.host_context) continue;
    for (auto& ps : run.parts) {
      if (!ps.part->units) continue;
      if (ps.worker->context() == handle)
        copy_into_replica(run, ps, u, cs.whole.at(v));
      else if (ps.worker->context() == run.host_context)
        to_device(run, *cs.workers.front()->parts.front(), cs.whole.at(v), run.slice_offset(ps, u),
                  run.host_of(u) + run.slice_offset(ps, u), run.slice_bytes(ps, u), &sync_path);
      else
        third = true;
    }
  }
  finish_all();
  if (!third) return;
  for (auto& [handle, cs] : run.contexts) {
    if (handle == run.host_context) continue;
    for (auto& ps : run.parts)
      if (ps.part->units && ps.worker->context() != handle && ps.worker->context() != run.host_context)
        to_device(run, *cs.workers.front()->parts.front(), cs.whole.at(v), run.slice_offset(ps, u),
                  run.host_of(u) + run.slice_offset(ps, u), run.slice_bytes(ps, u), &sync_path);
  }
  finish_all();
}

}  // namespace

void sync_replicas(RunState& run, const VectorState* v) {
  const VectorUse& u = run.an.use(v);
  auto finish_all = [&] {
    for (auto& w : run.workers) w.queue().finish();
  };
  cl_call({.api_call = "replica sync", .argument = "vector '" + v->name + "'"}, [&] {
    if (run.exchanger) {
      // Part of a larger run: this process's slices to the host, every other process's in
      // beside them, the whole vector to each context's replica.
      auto& host = run.staging[v];
      host.resize(u.bytes());
      for (auto& ps : run.parts)
        to_host(run, ps, ps.slices.at(v), 0, host.data() + run.slice_offset(ps, u), run.slice_bytes(ps, u), &sync_path);
      finish_all();
      run.exchanger->gather_slices(u, host.data());
      for (auto& [handle, cs] : run.contexts)
        to_device(run, *cs.workers.front()->parts.front(), cs.whole.at(v), 0, host.data(), host.size(), &sync_path);
      finish_all();
      return;
    }
    if (run.replica_in_user.count(v)) return sync_through_user(run, u);
    if (run.contexts.size() > 1) {
      run.staging[v].resize(u.elements * v->type.size);
      for (auto& ps : run.parts)
        if (ps.part->units)
          to_host(run, ps, ps.slices.at(v), 0, run.staging[v].data() + run.slice_offset(ps, u),
                  run.slice_bytes(ps, u), &sync_path);
      finish_all();
    }
    for (auto& [handle, cs] : run.contexts) {
      for (auto& ps : run.parts) {
        if (!ps.part->units) continue;
        if (ps.worker->context() == handle)
          copy_into_replica(run, ps, u, cs.whole.at(v));
        else
          to_device(run, *cs.workers.front()->parts.front(), cs.whole.at(v), run.slice_offset(ps, u),
                    run.staging[v].data() + run.slice_offset(ps, u), run.slice_bytes(ps, u), &sync_path);
      }
    }
    finish_all();
  });
}

void unmap_deferred(Worker& w) {
  bool any = false;
  for (PartState* p : w.parts)
    while (!p->maps.empty()) {
      auto [buffer, ptr] = std::move(p->maps.back());
      p->maps.pop_back();  // once tried, never again
      w.queue().enqueueUnmapMemObject(buffer, ptr);
      any = true;
    }
  if (any) w.queue().finish();
}

}  // namespace sinew::detail
