// exec/executor.hpp — running a tree with a decomposition on every device at once.
//
// The executor knows nothing of how the decomposition was chosen. Per partition it uploads the
// slice of each input, runs the tree's nodes in order on the partition's queue (each kind through
// its runner, exec/nodes/), and downloads the slice of each output; all partitions' queues work
// concurrently. The plan's schedule policy says which queues take part and, where it deals chunks
// out as the run goes, which units each takes (decompose/schedule_policy.hpp). A vector read whole
// is replicated once per context and re-synchronised (gathered and redistributed) whenever leaves
// have written its slices since. Loop predicates and reductions are the only other host steps.
// The parts: exec/run.hpp.
#pragma once

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"
#include "exec/environment.hpp"
#include "exec/exchanger.hpp"
#include "tree/analysis.hpp"

#include <sinew/report.hpp>

#include <cstdint>

namespace sinew::detail {

// How one run goes beyond its tree, data and decomposition.
struct RunSettings {
  // On profiling queues, with every partition's and kernel's device times in the report.
  bool profile = false;
  // 0: none; else the slices and halo buffers of discrete devices are surrounded by this byte
  // (RuntimeOptions::poison_check).
  std::uint8_t poison = 0;
  // The run is one process's part of a larger one (exec/exchanger.hpp); null: a run of one process.
  Exchanger* exchanger = nullptr;
  // What the plan's earlier runs left its schedule policy (SchedulePolicy::new_memory; null: none).
  ScheduleMemory* schedule_memory = nullptr;
};

// Builds every program and kernel the run needs and checks the device limits (work-group size,
// allocation size, memory) — all before any data moves. Then runs the tree over `bindings` (of
// the shapes `an` was made for), and returns the report.
Report execute(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
               const Decomposition& dec, const RunSettings& settings = {});

}  // namespace sinew::detail
