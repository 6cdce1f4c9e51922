// exec/chunks.hpp — the run's schedule as the executor keeps it: the policy's run
// (decompose/schedule_policy.hpp: ScheduleRun) and, per worker, its queue there. Under a policy
// that takes chunks while the run goes (ScheduleRun::takes_chunks) each chunk is a partition of
// its own that runs the whole tree on the worker that took it (upload, every stage, download: it
// stays resident on that device), as a streamed partition does; the policy says which units.
#pragma once

#include "decompose/schedule_policy.hpp"
#include "exec/worker.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace sinew::detail {

class RunState;

struct RunSchedule {
  std::unique_ptr<ScheduleRun> run;  // the policy's
  // Per worker (Worker::index): its queue in run->queues(), and when it began taking chunks, in
  // the run and in its thread's CPU time (what a chunk's busy and host times are counted from).
  struct Taker {
    std::size_t queue = 0;
    double from_ms = 0, cpu_from_ms = 0;
  };
  std::vector<Taker> takers;
  // Workers take chunks and append them to the run's partitions at once: one at a time, so that
  // a chunk's partition index follows the order the policy cut them in.
  std::mutex mutex;
  bool takes_chunks() const { return run->takes_chunks(); }
};

// Appends `chunk` as a partition of `w` (to the run's and `w`'s partitions), with neither runner
// state nor buffers yet.
PartState& add_chunk(RunState& run, Worker& w, const Chunk& chunk);

// `w` begins taking chunks: its clocks start now.
void start_taking(RunState& run, Worker& w);

// `w`'s chunk `ps` has finished (its results are in host memory): the policy learns its units,
// `w`'s busy time and its thread's CPU time since it began (ScheduleRun::chunk_done); its device
// buffers go back to the pool. From `w`'s thread.
void chunk_done(RunState& run, Worker& w, PartState& ps);

// The CPU time of the calling thread, in ms (0 where the clock is missing).
double thread_cpu_ms();

// `w`'s next chunk from the policy (ScheduleRun::take), made ready as prepare() makes every
// partition before a run (its runners' per-partition state, its buffers); nullptr once `w` takes
// no more, or once a worker has failed (the others stop taking work). From `w`'s thread.
PartState* take_chunk(RunState& run, Worker& w);

}  // namespace sinew::detail
