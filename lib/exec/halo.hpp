// exec/halo.hpp — the halo buffers of vectors read with sinew::halo: their layout, how they are
// filled from the host, and how only their halo units move between partitions.
//
// Each partition keeps, per vector read with a halo, one buffer of (before + units + after)
// units: the slice at unit `before`, the neighbours' units around it (PartState::halos). Where the
// slice's offset in it is a multiple of the device's base address alignment, the partition's
// slice is a sub-buffer of it, so what a leaf writes (a loop's copy, an earlier stage) lands in
// place; elsewhere the slice is its own buffer and an exchange copies it in first. A vector that
// the tree only reads is filled once, from the host, halo included (a zero-copy CPU device reads a
// partition that is not at an edge of the vector in place); one that the tree writes exchanges
// its halo units before the next halo read (exchange_halo), on the devices where the partitions
// share a context and through the host between contexts.
#pragma once

#include "exec/run.hpp"

namespace sinew::detail {

// The partition's halo buffer of `u` (and its slice, when that can be part of it). Before any
// data moves.
void allocate_halo(RunState& run, PartState& ps, const VectorUse& u);
// Fills the partition's halo buffer of the bound vector `u` from the host: its slice and halo,
// the boundary beyond the vector's edges.
void upload_halo(RunState& run, PartState& ps, const VectorUse& u);
// Brings every partition's halo units of `v` up to date from its neighbours' slices (and the
// boundary), after leaves wrote them; `reader` is the leaf that reads the halo next. Runs on one
// thread while every queue is idle (at a barrier, or with one worker); returns once the copies
// are enqueued (several workers: finished). Records the exchange for the report.
void exchange_halo(RunState& run, const VectorState* v, const std::string& reader, std::size_t iteration);

}  // namespace sinew::detail
