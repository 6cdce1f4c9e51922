// exec/chunks.cpp — cutting and readying the dynamic schedule's chunks (see chunks.hpp).
#include "exec/chunks.hpp"

#include "exec/nodes/runner.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

namespace sinew::detail {

PartState* cut_chunk(RunState& run, Worker& w, std::size_t exactly) {
  if (run.error()) return nullptr;
  std::lock_guard lock(run.chunk_mutex);
  const std::size_t total = run.dec.total_units;
  DynamicChunks::Progress& mine = run.progress.at(w.dynamic_slot);
  if (run.next_unit >= total || mine.stopped) return nullptr;
  const std::size_t left = total - run.next_unit;
  const std::size_t units =
      exactly ? std::min(left, exactly) : run.chunks.take(w.dynamic_slot, left, run.dec.granule, run.progress);
  if (units == 0) {
    mine.stopped = true;  // the others finish the rest sooner than it would finish its least chunk
    return nullptr;
  }
  mine.held += units;
  PartState& ps = run.parts.emplace_back();
  ps.chunk = {run.parts.size() - 1, w.runtime_index, w.sub_device, w.queue_index, run.next_unit, units};
  ps.part = &ps.chunk;
  ps.worker = &w;
  ps.taken_ms = run.now_ms();
  run.next_unit += units;
  w.parts.push_back(&ps);
  return &ps;
}

void chunk_done(RunState& run, Worker& w, PartState& ps) {
  run.recycle(ps);
  std::lock_guard lock(run.chunk_mutex);
  DynamicChunks::Progress& mine = run.progress.at(w.dynamic_slot);
  mine.held -= std::min(mine.held, ps.part->units);
  mine.done += ps.part->units;
  mine.busy_ms = run.now_ms() - w.chunks_from_ms;
  mine.host_ms = thread_cpu_ms() - w.cpu_from_ms;
}

double thread_cpu_ms() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

PartState* take_chunk(RunState& run, Worker& w) {
  PartState* ps = cut_chunk(run, w);
  if (!ps) return nullptr;
  // The runners make their per-partition state for the worker's partitions: the chunk is,
  // for that moment, the worker's only one (what they do per worker is found again in the
  // queue's caches: kernel objects, programs).
  std::vector<PartState*> taken{ps};
  std::swap(w.parts, taken);
  try {
    visit(run.root, [&](const NodeImpl& n) {
      cl_call([&] { return ErrorContext{.node = run.path(n), .device = w.info().name}; },
              [&] { runner_of(n).prepare(run, w, n); });
    });
  } catch (...) {
    std::swap(w.parts, taken);
    throw;
  }
  std::swap(w.parts, taken);
  cl_call({.api_call = "clCreateBuffer", .device = w.info().name}, [&] { allocate_slices(run, *ps); });
  return ps;
}

}  // namespace sinew::detail
