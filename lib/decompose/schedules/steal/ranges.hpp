// decompose/schedules/steal/ranges.hpp — the work-stealing schedule's arithmetic, after Tascell's
// backtracking work stealing: each queue starts with a contiguous range of the units, sized by
// the plan's shares (as a static split: its data stays on its device unless it is stolen); it
// runs its range front to back in pieces, and a queue whose range is done steals the upper part
// of the largest range another queue has not started: the part that, by both queues' rates, ends
// both together (half where the two are alike, as Tascell's split in halves).
//
// A piece is the fraction of what its queue has left that still leaves the fastest possible
// thief its part of the rest: f / (1 - f) = piece_fraction's odds * (the queue's compute group's
// rate / the fastest other group's rate), never less than the queue's least range. A compute
// group is a discrete device (its overlap queues share its compute units, so that one of them
// stealing from another balances nothing) or any other queue. Alike groups halve what is left
// (Tascell's); a slow group's range stays finely cut, so that a fast one can take it; a fast
// group's range runs in a few large pieces, for a slow thief's part of it is small; a group no
// other could steal from runs each queue's range in one piece, as a static split does. Bounded
// by what a piece costs: a discrete device's (a launch, its transfers' latencies, the host's
// wait) cuts no finer than piece_fraction; a zero-copy queue's, which costs little, no coarser
// (a hedge against rates a load changes) (docs/decisions/155).
//
// A discrete device's queue cuts the first piece of each range it begins while no other queue of
// its device holds a piece in two, the first ScheduleTuning::Steal::first_piece_fraction of the
// range, so that uploads overlap kernels from the range's start (where another queue's piece is
// running, its kernel overlaps the upload: one cut per device at the run's start, not one per
// overlap queue; docs/decisions/184). A stolen range is the thief's own range from then on, run
// and stolen from in the same way. Every boundary but the last unit's lies on a granule; every
// unit is in exactly one piece. Pure arithmetic: tested against synthetic queues (test/unit/steal_schedule_test.cpp).
#pragma once

#include "decompose/decompose.hpp"
#include "decompose/schedule_policy.hpp"
#include "decompose/schedules/steal/leave_out.hpp"

#include <sinew/options.hpp>

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace sinew::detail {

// What runs of one steal plan learn from each other: the part of the units each device ran in
// the plan's last run, where stealing left the work balanced; the next run starts its ranges
// there, so that it steals only what changed since. Not the parts the devices' rates would give:
// an irregular workload's rate per unit depends on where the units lie (docs/decisions/176).
// And which device the runs leave out, where their work slows the others' (leave_out.hpp).
// Locked: the runs of one plan may overlap.
struct StealMemory final : ScheduleMemory {
  std::mutex mutex;
  std::vector<double> shares;  // per runtime device (empty: no run finished yet)
  LeaveOut leave_out;
};

struct StealPlan final : PolicyPlan {
  std::vector<Partition> queues;  // who takes ranges: device, sub_device, queue (first/units unused)
  std::vector<double> weights;    // per queue: its device's share split over its queues; they add up to 1
  std::vector<bool> moves_data;   // per queue: its device is driven as discrete (its pieces are uploaded)
  // The plan's least_range for every device rounded up to whole granules (at least one); without
  // one, the units over least_range_parts * queues. The least range a queue takes: a piece of
  // its own, a stolen one.
  std::size_t least_units = 1;
  // Per runtime device, the plan's size thresholds (plan items least_range and most_range, 0:
  // none): its queues take no range smaller than the first (but the last of the units), nor
  // larger than the second.
  std::vector<std::size_t> least_of_device, most_of_device;
  ScheduleTuning::Steal tuning;

  // The least units queue `queue` takes, in whole granules: the plan's least range, its
  // device's least_range.
  std::size_t least_range(std::size_t queue, std::size_t granule) const;
  // The most units queue `queue` takes at once, in whole granules (at least one); 0: no bound.
  std::size_t most_range(std::size_t queue, std::size_t granule) const;
  // The compute group of queue `queue`: a discrete device's queues share its compute units (one
  // group: one of them stealing from another balances nothing); every other queue (a CPU's
  // sub-device, a zero-copy device) is its own. Equal numbers, one group.
  std::size_t compute_group(std::size_t queue) const;
  // The plan's weight of each runtime device (its queues' summed).
  std::vector<double> device_weights() const;
  // Per runtime device: too slow to help, by the plan's weights: two of its least ranges at its
  // planned rate end after the others have run all `total` units at theirs (with one, the run's
  // end would hang on that range ending on time). Such a device takes no range and has no worker
  // in any run (its range, however small, would be the run's end). Never the device of the
  // largest weight.
  std::vector<bool> too_slow_to_help(std::size_t total, std::size_t granule) const;
  // The weights a run starts from: the shares its plan's last runs left (`remembered`, per
  // runtime device; empty: the plan's), each device's split over its queues as the plan's are. A
  // device the plan gives a share keeps at least one least range of `total` units, but the device
  // the run leaves out (`left_out`) and those too slow to help, whose queues get none and steal
  // nothing.
  std::vector<double> weights_for_run(std::vector<double> remembered, std::optional<std::size_t> left_out,
                                      std::size_t total, std::size_t granule) const;
  // The schedule's settings for leaving a device out (ScheduleTuning::Steal::leave_out_*).
  LeaveOut::Settings leave_out_settings() const;
};

// One run's ranges and what its queues did; the run's lock (StealRun) guards it.
class StealRanges {
 public:
  struct Queue {
    std::size_t next = 0, end = 0;  // [next, end): its range, not started
    std::size_t held = 0, done = 0;  // units of its pieces running, and finished
    double busy_ms = 0;              // from its first piece's start to its last finished one's end
    // Its first piece was cut small (a queue that moves data): that piece's units and time,
    // which its rate leaves out (its upload overlapped no kernel, and its few units say little
    // of the pieces that follow).
    bool cut_first = false;
    std::size_t first_units = 0;
    double first_ms = 0;
    bool stopped = false;            // took nothing when it asked holding no piece: it takes no more
    bool begun = false;              // a piece of its present range was taken (false again after a steal)
    std::size_t rest = 0;            // units its next piece takes: the rest of a first piece cut in two
  };

  // Each queue's first range: `weights`' parts of `total` units, contiguous in queue order, each
  // in whole granules, the last queue with a weight taking the rest.
  StealRanges(const StealPlan& plan, std::size_t total, std::size_t granule, const std::vector<double>& weights);

  // Queue `queue`'s next piece: of its own range, else of a range it steals; nothing once neither
  // is left (it stops).
  std::optional<Chunk> take(std::size_t queue);
  // The first piece of queue `queue`'s own range (nothing where its range is empty): cut before
  // the run, it steals nothing.
  std::optional<Chunk> first_piece(std::size_t queue);
  // A piece of `units` of queue `queue` finished, `busy_ms` after its first piece began.
  void done(std::size_t queue, std::size_t units, double busy_ms);

  const std::vector<Queue>& queues() const { return queues_; }
  const std::vector<Handover>& handovers() const { return handovers_; }
  // The units each runtime device's queues finished, indexed by runtime device.
  std::vector<std::size_t> done_per_device() const;

 private:
  // The units of queue `queue`'s next piece of its own range (0: the range is empty): its
  // piece_fraction() of what is left of it, or the rest of a first piece cut in two.
  std::size_t piece(std::size_t queue) const;
  // The fraction of what is left of its range queue `queue`'s next piece takes (see the file's
  // comment); 1 where no other compute group could steal from it.
  double piece_fraction(std::size_t queue) const;
  // Whether another queue of queue `queue`'s compute group holds a piece (its kernel may be
  // running).
  bool group_busy(std::size_t queue) const;
  // Moves the upper part of the largest range not started of another queue to `thief`; false
  // where that part would be under the thief's least range.
  bool steal(std::size_t thief);
  // Each queue's rate in units per ms: measured once a piece of it has finished (a piece after
  // its first where that was cut small), else its weight scaled as the measured queues' rates
  // are to their weights.
  std::vector<double> rates() const;

  const StealPlan& plan_;
  std::size_t total_, granule_;
  std::vector<double> weights_;
  std::vector<Queue> queues_;
  std::vector<Handover> handovers_;
};

// The steal plan of `dec` (decomposed by the steal schedule); throws std::logic_error for
// another's.
const StealPlan& steal_plan(const Decomposition& dec);

}  // namespace sinew::detail
