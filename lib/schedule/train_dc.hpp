// schedule/train_dc.hpp — training a divide-and-conquer tree (sinew::divide_and_conquer): the plan
// is a crossover level, the device of the levels from it up, and the shares of the levels below
// it. The trainer "dc_model", named by the node kind (NodeImpl::trainer).
#pragma once

#include "schedule/train.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace sinew::detail {

// The HPU paper's model (Section V), measured: each device's time for each level with every
// element on it (one run per device), and the cost of moving the vector to it and back (that
// run's time beyond its levels). A level split by shares takes each device its share of its
// whole-vector time (the levels below a crossover have many subproblems: every device is
// saturated), so the split levels end when the slowest device's part does; the crossover moves
// the vector through the host to the upper device and back once.
struct DcModel {
  std::vector<std::vector<double>> level_ms;  // [device][level]
  std::vector<double> transfer_ms;            // [device]
  // Subproblems at each level: a device's part of the split levels is whole subproblems of the
  // highest of them, so shares come in steps of 1 / subproblems[crossover - 1].
  std::vector<std::size_t> subproblems;

  std::size_t levels() const { return level_ms.empty() ? 0 : level_ms.front().size(); }
  // The plan for `crossover` (1 .. levels - 1) and `upper`: shares below the crossover
  // proportional to each device's rate over those levels (they finish together).
  Config plan(std::size_t crossover, std::size_t upper) const;
  // Everything on `device` (no crossing).
  Config single(std::size_t device) const;
  // The model's time for a plan made by plan() or single().
  double predict(const Config& c) const;
  // The fastest plan the model knows: every crossover level on every upper device, and each
  // device alone.
  Config best() const;
};

// Training for a divide-and-conquer tree with `subproblems[l]` subproblems at level l: each device
// alone (the model's runs), the model's best plan, then every crossover level on the model's
// upper device with the model's shares, then the shares below the best measured level moved by
// TrainingTuning::crossover_share_move each way; the fastest measured plan wins.
// TrainingResult::strategy is "dc_model"; `analytic` is set to the model's plan. A derived
// plan's check and the balancer's level 2 skip the sweep: the model's runs, its plan for this
// size and `start` (the plan of the nearest size, its crossover within this size's levels) are
// measured, and the faster kept.
TrainingResult train_divide_and_conquer(const std::vector<DeviceInfo>& devices, const Measure& measure,
                                        const TrainingOptions& options, const std::vector<std::size_t>& subproblems,
                                        const Progress& progress = {}, Config* analytic = nullptr,
                                        const std::optional<Config>& start = {});

}  // namespace sinew::detail
