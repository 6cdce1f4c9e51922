// exec/chunks.cpp — cutting and readying the dynamic schedule's chunks (see chunks.hpp).
#include "exec/chunks.hpp"

#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

namespace sinew::detail {

PartState* cut_chunk(RunState& run, Worker& w, std::size_t exactly) {
  if (run.error()) return nullptr;
  ChunkCursor& c = run.cursor;
  const std::size_t slot = c.takers.at(w.index).slot;
  std::lock_guard lock(c.mutex);
  const std::size_t total = run.dec.total_units;
  DynamicChunks::Progress& mine = c.progress.at(slot);
  if (c.next_unit >= total || mine.stopped) return nullptr;
  const std::size_t left = total - c.next_unit;
  const std::size_t units = exactly ? std::min(left, exactly) : c.chunks.take(slot, left, run.dec.granule, c.progress);
  if (units == 0) {
    mine.stopped = true;  // the others finish the rest sooner than it would finish its least chunk
    return nullptr;
  }
  mine.held += units;
  PartState& ps = run.workers.parts.emplace_back();
  ps.chunk = {run.workers.parts.size() - 1, w.runtime_index, w.sub_device, w.queue_index, c.next_unit, units};
  ps.part = &ps.chunk;
  ps.worker = &w;
  ps.taken_ms = run.now_ms();
  c.next_unit += units;
  w.parts.push_back(&ps);
  return &ps;
}

void start_taking(RunState& run, Worker& w) {
  ChunkCursor::Taker& t = run.cursor.takers.at(w.index);
  t.from_ms = run.now_ms();
  t.cpu_from_ms = thread_cpu_ms();
}

void chunk_done(RunState& run, Worker& w, PartState& ps) {
  run.buffers.recycle(ps);
  ChunkCursor& c = run.cursor;
  const ChunkCursor::Taker& t = c.takers.at(w.index);
  std::lock_guard lock(c.mutex);
  DynamicChunks::Progress& mine = c.progress.at(t.slot);
  mine.held -= std::min(mine.held, ps.part->units);
  mine.done += ps.part->units;
  mine.busy_ms = run.now_ms() - t.from_ms;
  mine.host_ms = thread_cpu_ms() - t.cpu_from_ms;
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
    prepare_runners(run, w);
  } catch (...) {
    std::swap(w.parts, taken);
    throw;
  }
  std::swap(w.parts, taken);
  cl_call({.api_call = "clCreateBuffer", .device = w.info().name}, [&] { allocate_slices(run, *ps); });
  return ps;
}

}  // namespace sinew::detail
