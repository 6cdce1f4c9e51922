// exec/transfer.cpp — moving a run's data (see transfer.hpp).
#include "exec/transfer.hpp"

#include "exec/run.hpp"
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
  run.record.count_copy(w, CopyKind::to_device, bytes);
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
  run.record.count_copy(w, CopyKind::to_host, bytes);
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

void upload(RunState& run, PartState& ps) {
  static const std::string upload_path = "upload";
  run.residency.fill(ps);
  cl_call([&] { return ErrorContext{.api_call = "upload", .device = ps.worker->info().name}; }, [&] {
    for (const auto& u : run.an.vectors) {
      if (!u.partitioned || !u.bound() || run.residency.holds(ps, u)) continue;
      if (u.read_halo) run.halos->upload(ps, u);  // the slice too, where it is part of the halo buffer
      // (A slice that is the vector's replica too holds what the kernels read whole.)
      const bool read = u.read_partitioned || run.replicas->in_slice(u.vector.get());
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
      if (!u.partitioned || !u.bound() || !u.written || run.residency.holds(ps, u)) continue;
      auto& buf = ps.slices.at(u.vector.get());
      const std::size_t bytes = run.slice_bytes(ps, u);
      if (!run.host_slice(ps, u)) {
        to_host(run, ps, buf, 0, run.host_of(u) + run.slice_offset(ps, u), bytes, &download_path, later);
      } else if (w.info().host_pointer_aliased) {
        // The buffer is the host memory itself (probed): the results are there once the
        // queue has finished, with no map and unmap (docs/decisions/030).
      } else {
        // The buffer is the host memory: mapping makes the device's writes visible there. The
        // in-order queue runs map then unmap; the worker's final wait covers both. One thread
        // feeding every device unmaps after the wait (PoCL's unmap waits for the map).
        void* p = w.queue().enqueueMapBuffer(buf, CL_FALSE, CL_MAP_READ, 0, bytes);
        if (run.workers.defer_unmaps) ps.maps.emplace_back(buf, p);
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
