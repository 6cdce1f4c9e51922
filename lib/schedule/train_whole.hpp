// schedule/train_whole.hpp — training's choice of the device a leaf marked whole_range() runs on.
//
// A whole leaf runs on the device the plan's `whole` item names, else on the device with the
// plan's largest share (exec/whole_leaves.hpp). Which device is faster depends on the leaf's
// kernel there and on moving its vectors to it and back, which no share says. So after the
// trainer's plan, where that plan splits the work over more than one device and does not name
// the whole device itself, the plan with whole=<d> is measured for every other device d that can
// hold the leaf's vectors, within what the trainer left of the training's budget (the executions its trainer announces,
// Trainer::executions, and its time budget, TimeBudget, on the trainer's clock: its ledger goes
// on, builds aside). The trainer is given that many executions fewer (whole_device_runs), so
// that its own last runs cannot leave the choice without the runs it needs. The fastest
// measured plan is the training's, with its `whole` item set, so that the knowledge base stores
// the choice with the plan and the run that uses it runs the leaf where it was measured.
//
// Internal to lib/schedule; used on the training's thread.
#pragma once

#include "schedule/train.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinew::detail {

// What a whole leaf's device holds for it: its vectors' bytes together, and the largest one's
// (one buffer each).
struct WholeLeafNeeds {
  std::uint64_t bytes = 0;
  std::uint64_t largest = 0;
};

// The runtime indices of the devices whose memory (DeviceInfo::memory(), max_alloc) holds a
// whole leaf's vectors.
std::vector<std::size_t> devices_holding(const std::vector<DeviceInfo>& devices, const WholeLeafNeeds& needs);

// The executions choose_whole_device may take for `candidates` with `options`: one device is
// the trainer's, each other one is measured options.quality times; 0 for fewer than two.
std::size_t whole_device_runs(const std::vector<std::size_t>& candidates, const TrainingOptions& options);

// Measures the whole leaf's other devices (`candidates`, devices_holding) with `result.best` (see
// above) for a TrainingPurpose::train request, each `options.quality` times (their median
// counts), while the training's runs stay within `executions` and its time budget
// (time_budget(options), on the clock of the trainer's TrainingLedger, which goes on from
// `result`), and makes the fastest measured plan `result.best`: its points, executions, seconds,
// builds and what ended the training written to `result`. Leaves `result` as it is where there is
// nothing to choose (one candidate, a plan of one device, one that names its whole device or does
// not place shares); measures nothing where no budget is left.
void choose_whole_device(TrainingResult& result, const std::vector<DeviceInfo>& devices,
                         const std::vector<std::size_t>& candidates, const Measure& measure,
                         const TrainingOptions& options, std::size_t executions, const Progress& progress = {});

}  // namespace sinew::detail
