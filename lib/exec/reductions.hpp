// exec/reductions.hpp — what a run's partitions combine on the host where they meet: the
// map_reduce results (kept for the report and for loop predicates), a scan's carries, and
// divide and conquer's upper levels over the whole vector.
//
// In a run of one process every partition is here, so there is nothing more to combine. A run
// split over processes (exec/spanning.hpp) combines every process's values for a predicate,
// takes the scan totals of the processes before it, and sends its parts to the root process for
// the upper levels.
//
// Thread safety: called by the one thread that completes a barrier (or after the workers
// joined); `results` and `loop_done` are written there and read after the barrier.
#pragma once

#include "tree/analysis.hpp"

#include <sinew/report.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sinew::detail {

class Reductions {
 public:
  virtual ~Reductions() = default;

  std::map<std::string, Value> results;  // map_reduce outputs, written at barriers and after the join
  bool loop_done = false;                // a loop predicate's verdict, read after its barrier
  // Results that kernels take as values (exec/values.hpp), combined over every partition and
  // process: written at a barrier, read by every worker after it.
  std::map<const ResultState*, Value> arguments;

  // The value a kernel takes of `producer`'s result (a map_reduce node whose value in `results`
  // is this run's): that one here; every process's combined in a run split over processes.
  virtual Value for_argument(const NodeImpl& producer, const std::string& name) {
    (void)producer;
    return results.at(name);
  }

  // The results a loop predicate judges, once this run's values of `reductions` (map_reduce
  // nodes) are in `results`: those themselves here; every process's combined, written into
  // `scratch`, in a run split over processes (where `results` keep this process's own, which the
  // caller combines once the run is over).
  virtual const std::map<std::string, Value>& for_predicate(const std::set<const NodeImpl*>& reductions,
                                                            std::map<std::string, Value>& scratch) {
    (void)reductions;
    (void)scratch;
    return results;
  }
  // A scan's carry: this run's values (`mine`, `value_bytes` each: its non-empty partitions'
  // totals in unit order) given, the values of the processes before this one, in process (unit)
  // order; none here. `what` names the exchange in errors.
  virtual std::vector<unsigned char> values_before(const std::vector<unsigned char>& mine, std::size_t value_bytes,
                                                   const std::string& what) {
    (void)mine;
    (void)value_bytes;
    (void)what;
    return {};
  }

  // The units of the whole tree this run holds, where it is one process's part of a larger run
  // (divide and conquer's levels must be alike on every process); none here.
  struct Span {
    std::size_t first = 0, units = 0;
  };
  virtual std::optional<Span> process_span() const { return std::nullopt; }
  // Whether this run computes what every process's parts combine into (divide and conquer's upper
  // levels): here it does; split over processes, only the root does.
  virtual bool combines_whole() const { return true; }
  // `whole` holds every unit of `u` on the host that this run has: where others hold the rest,
  // the root gets them (the others send theirs); nothing here.
  virtual void gather_to_root(const VectorUse& u, unsigned char* whole) {
    (void)u;
    (void)whole;
  }
  // The root's `whole` is complete: every other process's units of it into its own `whole`;
  // nothing here.
  virtual void scatter_from_root(const VectorUse& u, unsigned char* whole) {
    (void)u;
    (void)whole;
  }
};

}  // namespace sinew::detail
