// exec/kept_run.hpp — a run's prepared state kept for the next identical run (docs/decisions/168).
//
// A loop of runs of one tree on the same data (the framework's iterative use: saxpy over resident
// arrays a hundred times) would otherwise prepare every run anew: workers and queues from the
// pool, every node's kernel objects and per-partition state, the memory check, and give them back
// at its end. A KeptRun holds the state of the last run made through it, and a run identical to
// it runs on that state: the schedule's run started anew, the resident arrays placed anew, then
// the feed, the wait, the residency's commit and the report, as any run (exec/run.hpp,
// prepare_again()).
//
// Identical: the same decomposition (the same object: a changed plan, a balancer's move, a
// trainer's step bring another), the same schedule memory, the same environment, and bindings
// equal field by field (the same vectors and results, the same host addresses, lengths and types,
// the same resident arrays, each still alive). Anything else runs prepared afresh, and its state
// replaces the kept one; a run that is never kept (below: profiled, poison-checked, a Cluster
// rank's part) leaves the kept state as it is.
//
// Kept only after a run that succeeded and whose state serves another run unchanged:
//   - not profiled (a trace profiles every run), no poison check, not a process's part of a
//     larger run (a Cluster's rank);
//   - no schedule that cuts chunks, before or while the run goes;
//   - no vector read whole (replicas) or with a halo, no loop copy that swaps buffers, no leaf
//     gathered whole;
//   - no device buffer from the pool (a kept state never holds memory another run could use:
//     its slices are resident arrays' pieces, or the user's memory on a zero-copy device);
//   - every node's runner says its prepared state serves identical runs
//     (NodeRunner::serves_identical_runs: kernels, pipelines and maps).
// What may change between identical runs is all re-read on every run: the residency is placed
// anew (a host write through the array's access, another tree's run or a failed run that moved or
// dropped pieces: the moves a freshly prepared run would make, the same errors), kernels' arguments
// are set at every launch from the slices the residency gives, host vectors are read in place
// (zero-copy) at the same addresses. A run that fails on the kept state takes it with it (its rollback as a prepared run's);
// the next runs prepared afresh.
//
// The kept state holds the queues it took from the pool until it is replaced or its owner (the
// prepared tree, which the runtime gives up before its queue pool) goes, and no resident array
// (their pieces belong to the arrays). Between its runs its queues hold no build number
// (QueueBuild): each run takes back the numbers its kernels were built with, and where another
// queue holds one then, the run is prepared afresh. So trees that each keep a state build their
// programs with the same few numbers as trees that keep none (docs/decisions/133).
//
// Thread safety: execute() may be called from several threads; a run takes the kept state for
// itself, so one running at the same time prepares afresh (and the last to finish is kept).
#pragma once

#include "decompose/decompose.hpp"
#include "exec/executor.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace sinew::detail {

class RunState;

class KeptRun {
 public:
  KeptRun();
  ~KeptRun();
  KeptRun(const KeptRun&) = delete;
  KeptRun& operator=(const KeptRun&) = delete;

  // execute() over `dec`, on the kept state where the run is identical to the last one kept
  // (Report::prepared_again).
  Report execute(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
                 const std::shared_ptr<const Decomposition>& dec, const RunSettings& settings);
 private:
  struct State;
  std::unique_ptr<State> take(const Environment& env, const std::vector<Binding>& bindings,
                              const Decomposition& dec, ScheduleMemory* memory);
  void keep(std::unique_ptr<State> state);

  std::mutex mutex_;
  std::unique_ptr<State> kept_;
};

}  // namespace sinew::detail
