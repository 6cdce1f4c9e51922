// exec/spanning.hpp — the parts of a run that is one process's part of a larger one (a Cluster's
// rank): replicas, halos and reductions that exchange with the other processes through the run's
// Exchanger (exec/exchanger.hpp) where a run of one process finds everything in its own
// partitions. The tree walk is the same on every process, so each reaches these exchanges at the
// same points, in the same order.
#pragma once

#include "exec/exchanger.hpp"
#include "exec/halo.hpp"
#include "exec/reductions.hpp"
#include "exec/replicas.hpp"

#include <memory>

namespace sinew::detail {

class RunState;

// The replicas of a run split over processes: re-synchronised through the host, with every other
// process's slices gathered in beside this one's; never a slice or the user's memory.
std::unique_ptr<Replicas> spanning_replicas(RunState& run, Exchanger& exchanger);
// Halos whose units next to this process's edges come from the neighbouring processes.
std::unique_ptr<Halos> spanning_halos(RunState& run, Exchanger& exchanger);
// Reductions over every process: a predicate sees every process's values combined, a scan the
// totals of the processes before, divide and conquer's upper levels run on the root process.
std::unique_ptr<Reductions> spanning_reductions(const Analysis& an, Exchanger& exchanger);

}  // namespace sinew::detail
