// decompose/schedules/steal/run.hpp — one run of a steal plan: the queues' ranges under one lock
// (StealRanges), the first piece of each cut before the run, pieces and steals as it goes, and
// what the run leaves the plan's next (StealMemory): the parts its devices ran, and its time for
// the way it ran, with every device or one left out (LeaveOut). A run's time is its wall time, from
// its start to its last worker's end.
#pragma once

#include "decompose/schedules/steal/ranges.hpp"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

class StealRun final : public ScheduleRun {
 public:
  // `memory`: the plan's; null: the run starts from the plan's shares and leaves nothing.
  StealRun(const Decomposition& dec, StealMemory* memory);

  // The plan's queues but those of the device the run leaves out: it has no worker. Each one's
  // Partition::index is its index among the plan's queues.
  const std::vector<Partition>& queues() const override { return queues_; }
  bool takes_chunks() const override { return true; }
  // A queue's pieces come from its own range and a thief takes only what no queue has enqueued:
  // two pieces in flight from the first, so that a discrete queue's transfers overlap kernels
  // from its range's start (docs/decisions/140).
  bool pipelined_from_first_chunk() const override { return true; }
  // Each queue's first piece of its own range, in queue order (a queue with an empty range
  // steals when it first asks); every piece of every queue where the queues taking part are one
  // compute group (all_cut_before_run()).
  std::vector<std::pair<std::size_t, Chunk>> chunks_before_run() override;
  // The queues taking part are one compute group (one discrete device's overlap queues, or one
  // queue): none could take a range another would not run as soon, so every piece is cut before
  // the run and each queue streams its pieces, two in flight (exec/drive.cpp's
  // drive_cut_before_run; the plan's other devices left out, or too slow to help).
  bool all_cut_before_run() const override { return one_group_; }
  std::optional<Chunk> take(std::size_t queue) override;
  void chunk_done(std::size_t queue, std::size_t units, double busy_ms, double host_ms) override;
  // Keeps the part of the units each device ran for the plan's next run (a device the run left
  // out keeps its part of the run before), and the run's time for the way it ran: `run_ms`, what
  // the program waited, a device's cost outside its pieces (its worker's start, its buffers)
  // included.
  void finished(double run_ms) override;
  // Who stole what from whom: per thief and victim device, the ranges and their units; the device
  // the run left out, and why.
  std::string taken_notes(const std::vector<DeviceInfo>& devices) const override;
  std::vector<Handover> handovers() const override;

 private:
  // What the plan's runs so far left this one, read once as it starts.
  struct Start {
    std::vector<double> shares;
    std::optional<std::size_t> left_out;
    bool trial = false;  // the way the kept one is measured against
    std::optional<std::size_t> kept;
    double kept_ms = 0, other_ms = 0;
  };
  static Start start_of(StealMemory* memory);
  // The run's queue that is the plan's queue `plan_queue` (the run's queues() are the plan's
  // that take part, in order; StealRanges counts the plan's).
  std::size_t position(std::size_t plan_queue) const;

  const StealPlan& plan_;
  StealMemory* memory_;
  std::size_t total_;
  Start start_;
  std::vector<double> weights_;      // per plan queue, the run's
  std::vector<Partition> queues_;    // the queues taking part
  std::vector<std::size_t> taking_;  // each one's index among the plan's queues
  bool one_group_ = false;           // all_cut_before_run()
  mutable std::mutex mutex_;
  StealRanges ranges_;  // under mutex_
};

}  // namespace sinew::detail
