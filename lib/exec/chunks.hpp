// exec/chunks.hpp — the dynamic schedule's chunks (Config::schedule == dynamic): units dealt out
// from one cursor while the run goes, each chunk a partition of its own that runs the whole tree
// on the worker that took it (upload, every stage, download: it stays resident on that device),
// as a streamed partition does.
//
// Every unit is in exactly one chunk: the cursor only moves forward, under ChunkCursor::mutex.
#pragma once

#include "decompose/decompose.hpp"
#include "exec/worker.hpp"

#include <cstddef>
#include <mutex>
#include <vector>

namespace sinew::detail {

class RunState;

// The cursor of a run under the dynamic schedule, and what the stop rule knows of each slot.
struct ChunkCursor {
  std::mutex mutex;
  std::size_t next_unit = 0;  // units before it are taken (under mutex)
  std::vector<DynamicChunks::Progress> progress;  // per slot, for the stop rule (under mutex)
  // The slots as this run starts: the plan's, seeded from the rates its earlier runs measured
  // (DynamicChunks::seeded); they remember this run's when it succeeds.
  DynamicChunks chunks;
  // Every chunk cut before the run, a discrete device's static split (DynamicChunks::alone): each
  // queue streams its chunks as a static split's worker does.
  bool streamed_alone = false;
  // Per worker (Worker::index): its slot, and when it began its first chunk, in the run and in
  // its thread's CPU time (the stop rule's rate and occupancy, DynamicChunks::net).
  struct Taker {
    std::size_t slot = 0;
    double from_ms = 0, cpu_from_ms = 0;
  };
  std::vector<Taker> takers;
};

// Cuts `w`'s next chunk from the cursor, sized for its slot (DynamicChunks::take; `exactly`:
// that many units, a probe's or a static split's chunk), and appends it to the run's and `w`'s
// partitions, with neither runner state nor buffers yet. nullptr once every unit is taken, or
// once a worker has failed (the others stop taking work).
PartState* cut_chunk(RunState& run, Worker& w, std::size_t exactly = 0);

// `w` begins taking chunks: its clocks for the stop rule's rate and occupancy start now.
void start_taking(RunState& run, Worker& w);

// `w`'s chunk `ps` has finished (its results are in host memory): its units count towards the
// slot's measured rate (DynamicChunks::take), and its thread's CPU time since its first chunk
// towards its occupancy (DynamicChunks::net); its device buffers go back to the pool. From `w`'s
// thread.
void chunk_done(RunState& run, Worker& w, PartState& ps);

// The CPU time of the calling thread, in ms (0 where the clock is missing).
double thread_cpu_ms();

// The next chunk for `w`, cut and made ready as prepare() makes every partition before a run
// (its runners' per-partition state, its buffers); nullptr as cut_chunk. From `w`'s thread.
PartState* take_chunk(RunState& run, Worker& w);

}  // namespace sinew::detail
