// exec/chunks.hpp — the dynamic schedule's chunks (Config::schedule == dynamic): units dealt out
// from one cursor while the run goes, each chunk a partition of its own that runs the whole tree
// on the worker that took it (upload, every stage, download: it stays resident on that device),
// as a streamed partition does.
//
// Every unit is in exactly one chunk: the cursor only moves forward, under RunState::chunk_mutex.
#pragma once

#include "exec/run.hpp"

namespace sinew::detail {

// Cuts `w`'s next chunk from the cursor, sized for its slot (DynamicChunks::take; `exactly`:
// that many units, a probe's or a static split's chunk), and appends it to run.parts and w.parts,
// with neither runner state nor buffers yet. nullptr once every unit is taken, or once a worker
// has failed (the others stop taking work).
PartState* cut_chunk(RunState& run, Worker& w, std::size_t exactly = 0);

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
