// exec/residency.hpp — a run's part for resident arrays (sinew/array.hpp): which copy of each
// bound array every partition uses, the moves that bring what a device lacks, and what the run
// leaves behind (its writes up to date where they were written, or, for a failed run, the last
// good contents).
//
// A partition on a device that keeps copies (not zero-copy) uses a piece of the array on that
// device holding exactly its units (exec/resident_array.hpp): a piece kept from an earlier run
// with the same units moves nothing; a new one is filled from a piece on the same context
// (device copies), else from the host copy, after bringing home what only another context holds.
// A zero-copy partition uses the host copy in place, brought up to date first. A vector used in a
// way slices cannot keep (read whole or with a halo, a loop copy that swaps buffers, a schedule
// that cuts chunks while the run goes) is used through the host copy as host memory is: the
// whole array brought home before the run, the devices' copies dropped where the run writes it.
//
// Thread safety: place() runs on the thread that prepares the run; fill() on each partition's
// worker, touching that partition's pieces alone; commit() and the rollback after the queues have
// finished. The run holds every array's turn (ArrayClaims) throughout.
#pragma once

#include "exec/resident_array.hpp"
#include "exec/worker.hpp"

#include <atomic>
#include <map>
#include <vector>

namespace sinew::detail {

class RunState;
struct VectorUse;

class Residency {
 public:
  explicit Residency(RunState& run) : run_(run) {}
  // A run that did not commit (it failed): every array as it was before it, where
  // ArrayOptions::keep_last_good made that possible, else the ranges it wrote marked lost. A run
  // that failed before any partition's data moved (preparing it) leaves every array as it was.
  ~Residency();
  Residency(const Residency&) = delete;
  Residency& operator=(const Residency&) = delete;

  // Before the slices are allocated: each partition's piece as its slice, and what must reach the
  // host before the run brought there.
  void place();
  // Whether `ps`'s slice of `u` is a piece of an array (the run neither uploads nor downloads it).
  bool holds(const PartState& ps, const VectorUse& u) const;
  // On `ps`'s queue, before its leaves: the copies that bring its pieces up to date.
  void fill(PartState& ps);
  // After a run without error: what it wrote is up to date where it was written.
  void commit();
  // After commit(): forgets the run's accesses (they point into the arrays as that run found
  // them), so that a kept run state (exec/kept_run.hpp) places its next run anew.
  void forget();

 private:
  struct Move {
    const ArrayPiece* source = nullptr;  // null: the host copy
    std::size_t first = 0, end = 0;
  };
  struct Access {
    ArrayState* array = nullptr;
    PartState* part = nullptr;       // null: the whole array through the host copy
    const VectorState* vector = nullptr;
    ArrayPiece* piece = nullptr;     // null: the host copy
    std::size_t first = 0, end = 0;
    bool read = false, written = false;
    bool created = false;            // the piece is new in this run
    bool into_spare = false;         // the run writes the piece's spare buffer (it reads nothing)
    bool backed_up = false;          // the spare is to hold the piece as it was
    bool backup_enqueued = false;    // and fill() has enqueued that copy
    std::vector<unsigned char> host_backup;  // the host range as it was
    std::vector<Move> moves;
  };
  void place_use(const VectorUse& u, ArrayState& array);
  void place_piece(Access& a);
  void place_host(Access& a);
  bool keeps_slices(const VectorUse& u) const;
  void rollback();

  RunState& run_;
  std::vector<Access> accesses_;
  std::map<std::pair<const PartState*, const VectorState*>, std::size_t> by_slice_;
  bool committed_ = false;
  std::atomic<bool> started_{false};  // some partition's data began to move: its kernels may have run
};

}  // namespace sinew::detail
