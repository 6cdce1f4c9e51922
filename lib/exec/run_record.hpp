// exec/run_record.hpp — what a run did, as its parts note it while it goes, for its Report: the
// executor's own copies (all of them, and those inside a loop's body), halo exchanges,
// divide-and-conquer levels, loop iterations and when preparation ended.
//
// Thread safety: copies and levels are noted by every worker at once (locked); exchanges and
// iterations only by the one thread that holds a barrier or runs the first worker.
#pragma once

#include "exec/worker.hpp"

#include <sinew/report.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace sinew::detail {

// What one of the executor's own copies was, for Report::copies: where it lands there follows
// the worker's device (a zero-copy device's transfers and copies are within host memory).
enum class CopyKind { to_device, to_host, on_device, value };

class RunRecord {
 public:
  // Counts one of the executor's own copies on `w`'s queue (Report::copies, and loop_copies
  // inside a loop's body).
  void count_copy(const Worker& w, CopyKind kind, std::uint64_t bytes);
  // The same for a queue that is no worker's (a leaf run whole: exec/whole_leaves.hpp): `on_host`
  // where its device is zero-copy, `in_loop` where the workers are inside a loop's body.
  void count_copy(bool on_host, bool in_loop, CopyKind kind, std::uint64_t bytes);
  // Counts a transfer between the host and a discrete device made on no worker's queue, before
  // the run's leaves (a resident array's copy brought home: exec/residency.hpp).
  void count_transfer(CopyKind kind, std::uint64_t bytes);
  // One device's part of a divide-and-conquer level: merged with the other devices' parts of
  // the same node and level (its devices joined, the slowest time, the bytes added up).
  void note_level(const LevelReport& part);

  Copies copies() const;
  Copies loop_copies() const;
  std::vector<LevelReport> levels() const;

  // Forgets what a run noted, for the next run of a kept run state (exec/kept_run.hpp); the copy
  // threads, chosen while preparing, stay.
  void reset();

  std::vector<HaloExchange> exchanges;  // in the order they ran
  std::size_t iterations = 0;           // the outermost loops' iterations
  double prepared_ms = 0;               // when preparation ended, in the run
  unsigned copy_threads = 1;            // threads per staged copy (HostCopy::ways, Report::copy_threads)

 private:
  mutable std::mutex mutex_;
  Copies copies_, loop_copies_;
  std::vector<LevelReport> levels_;
};

}  // namespace sinew::detail
