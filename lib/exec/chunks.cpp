// exec/chunks.cpp — chunks a schedule cuts while the run goes, made partitions (see chunks.hpp).
#include "exec/chunks.hpp"

#include "exec/run.hpp"
#include "platform/error.hpp"

#include <ctime>
#include <utility>

namespace sinew::detail {

PartState& add_chunk(RunState& run, Worker& w, const Chunk& chunk) {
  PartState& ps = run.workers.parts.emplace_back();
  ps.chunk = {run.workers.parts.size() - 1, w.runtime_index, w.sub_device, w.queue_index, chunk.first, chunk.units};
  ps.part = &ps.chunk;
  ps.worker = &w;
  ps.taken_ms = run.now_ms();
  w.parts.push_back(&ps);
  return ps;
}

void start_taking(RunState& run, Worker& w) {
  RunSchedule::Taker& t = run.schedule.takers.at(w.index);
  t.from_ms = run.now_ms();
  t.cpu_from_ms = thread_cpu_ms();
}

void chunk_done(RunState& run, Worker& w, PartState& ps) {
  run.buffers.recycle(ps);
  const RunSchedule::Taker& t = run.schedule.takers.at(w.index);
  run.schedule.run->chunk_done(t.queue, ps.part->units, run.now_ms() - t.from_ms, thread_cpu_ms() - t.cpu_from_ms);
}

double thread_cpu_ms() {
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

PartState* take_chunk(RunState& run, Worker& w) {
  if (run.error()) return nullptr;
  PartState* ps = nullptr;
  {
    std::lock_guard lock(run.schedule.mutex);
    const auto chunk = run.schedule.run->take(run.schedule.takers.at(w.index).queue);
    if (!chunk) return nullptr;
    ps = &add_chunk(run, w, *chunk);
  }
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
