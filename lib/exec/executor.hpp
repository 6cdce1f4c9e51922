// exec/executor.hpp — running a tree with a decomposition on every device at once.
//
// The executor knows nothing of how the decomposition was chosen. Per partition it uploads the
// slice of each input, runs the tree's nodes in order on the partition's queue (each kind through
// its runner, exec/nodes/), and downloads the slice of each output; all partitions' queues work
// concurrently. A vector read whole is replicated once per context and re-synchronised (gathered
// and redistributed) whenever leaves have written its slices since. Loop predicates and
// reductions are the only other host steps. The parts: exec/run.hpp.
#pragma once

#include "decompose/decompose.hpp"
#include "exec/environment.hpp"
#include "exec/exchanger.hpp"
#include "tree/analysis.hpp"

#include <sinew/report.hpp>

#include <cstdint>

namespace sinew::detail {

// Builds every program and kernel the run needs and checks the device limits (work-group size,
// allocation size, memory) — all before any data moves. Then runs the tree over `bindings` (of
// the shapes `an` was made for), and returns the report; with `profile`, on profiling queues,
// with every partition's and kernel's device times. `poison` (0: none) surrounds the slices and
// halo buffers of discrete devices with that byte (RuntimeOptions::poison_check). `exchanger`:
// the run is one process's part of a larger one (exec/exchanger.hpp).
Report execute(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
               const Decomposition& dec, bool profile = false, std::uint8_t poison = 0,
               Exchanger* exchanger = nullptr);

}  // namespace sinew::detail
