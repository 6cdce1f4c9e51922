// exec/exchanger.hpp — a run that is one process's part of a larger one (a Cluster's rank): the
// units it runs, and what it exchanges with the other processes as it goes.
//
// The executor knows nothing of how the processes talk (MPI lives in the runtime module, which
// implements this interface). Such a run's replicas, halos and reductions (exec/spanning.hpp)
// call the exchanger where a single process would read other partitions' data: a replica
// re-synchronisation (every process's slices of a vector read whole), a halo exchange (the
// neighbouring processes' edge units), a loop's predicate and a kernel that takes a result as a
// value (every process's values of the iteration's reductions), a scan's carry (the totals of the processes before), the upper levels
// of divide and conquer (every process's part to the root process and back). No node runner
// calls it. The tree walk is the same on every process, so each calls the exchanger at the same
// points, in the same order: the calls are collective. A call
// throws sinew::Error when another process failed or did not answer in time; the run then ends
// with that error as with any other.
//
// The analysis is the whole tree's (every process binds whole-sized host vectors); the
// decomposition covers only [first, first + units), in the tree's unit numbering, so slices,
// halo buffers and kernel offsets are where one process would have them.
#pragma once

#include "tree/analysis.hpp"

#include <sinew/report.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace sinew::detail {

class Exchanger {
 public:
  virtual ~Exchanger() = default;

  // The units this process runs. `root`: the process that runs what one process runs for all
  // (the upper levels of divide and conquer); the others send it their parts.
  std::size_t first = 0, units = 0;
  bool root = false;

  // `whole` holds every unit of `u` on the host, this process's up to date: fills in every other
  // process's slice.
  virtual void gather_slices(const VectorUse& u, unsigned char* whole) = 0;
  // Halo units of `u` between neighbouring processes: sends this process's first halo_after
  // units (`head`, to the process before) and last halo_before units (`tail`, to the process
  // after); receives the halo_before units that precede `first` into `before` and the halo_after
  // units that follow the last unit into `after` (none beyond the vector's edges).
  virtual void exchange_halo(const VectorUse& u, const unsigned char* head, const unsigned char* tail,
                             unsigned char* before, unsigned char* after) = 0;
  // The predicate's (and a value argument's) view of a reduction: this process's value of `reduction` (a map_reduce node)
  // in `results` replaced by every process's, combined.
  virtual void combine(const NodeImpl& reduction, std::map<std::string, Value>& results) = 0;

  // A scan's carry: every process gives its values (`mine`, any number of `value_bytes` each:
  // its non-empty partitions' totals in unit order); returns those of the processes before this
  // one, in process (unit) order. `what` names the exchange in errors.
  virtual std::vector<unsigned char> values_before(const std::vector<unsigned char>& mine, std::size_t value_bytes,
                                                   const std::string& what) = 0;
  // `whole` holds every unit of `u` on the host, this process's up to date: on the root, fills in
  // every other process's units; elsewhere, sends this process's units to the root.
  virtual void gather_to_root(const VectorUse& u, unsigned char* whole) = 0;
  // The root's `whole` is complete: every other process's units of it into its own `whole`.
  virtual void scatter_from_root(const VectorUse& u, unsigned char* whole) = 0;
};

}  // namespace sinew::detail
