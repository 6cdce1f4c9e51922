// schedule/derive.hpp — a plan for an input training never saw, from what training measured at
// other inputs of the same tree (Interpolation::cost_model).
//
// Training measures each device alone at every level of its own dimension (a discrete device's
// overlap levels, a CPU's fissions) at every input it trains, and the knowledge base keeps those
// runs. Per device and level, their times over the input's size fit a line (fixed ms + ms per
// element; schedule/model/linear_cost.hpp, least squares of the relative residuals, so the small
// sizes' fixed costs count as much as the large sizes' rates). At the new size the fits predict
// each device alone at each level, and at each combination of levels the split that makes the
// devices finish together (schedule/model/equal_finish.hpp); the fastest prediction is the plan.
// So a size far from the trained ones gets the device and the level that fit it, not the nearest
// size's plan (docs/decisions/015).
#pragma once

#include "schedule/model/linear_cost.hpp"

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/kb.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

// The input's size for the cost model: the bound vectors' elements summed (features "*.size").
double input_size(const KbFeatures& features);

// One device's time alone at one level over the input size.
struct CostFit {
  std::size_t device = 0;
  Config level;           // the device alone at this level (Config::single, its overlap or fission)
  LinearCost cost;        // its time in the input size: fixed ms + ms per element
  std::size_t sizes = 0;  // distinct sizes behind the fit
  double at(double size) const { return cost.at(size); }
};

struct CostPlan {
  Config config;
  double predicted_ms = 0;
  double size = 0;                // the query's input size
  std::vector<CostFit> fits;
  double split_factor = 1;        // the measured splits' time over the fits' prediction (at least 1)
  std::size_t split_plans = 0;    // the split plans measured at the size behind split_factor
  std::string str() const;  // the plan, its prediction and the fits, for a progress line
  // Each device alone at the level its fits predict fastest at `size` (its Config::single), in
  // device order: what a derived plan's check measures each device alone at.
  std::vector<Config> alone_levels(std::size_t devices) const;
};

// The derivation's tuned values (docs/decisions/016); the defaults are pinned by
// test/unit/derive_test.cpp.
struct DerivationTuning {
  // A split must be predicted this much faster than the fastest device alone to be chosen: the
  // fits see each device alone, not what two devices driven by one host cost each other (host
  // memory bandwidth, the host threads feeding a GPU beside a CPU device's work-groups). Where the
  // other sizes' runs measured splits and the fastest of them ran slower than the fastest split
  // the fits predict at their size by more than this (CostPlan::split_factor, at the measured size
  // nearest the query), a split must be predicted that much faster instead.
  double split_margin = 0.10;
};

// The plan the fits of `runs` (the tree's runs, any features) predict fastest at `query`, from
// the runs whose other features (those not "*.size") equal the query's. Empty when some device
// has no level measured alone at two sizes or more: then the nearest input's plan stands.
std::optional<CostPlan> derive_from_costs(const std::vector<DeviceInfo>& devices, const std::vector<KbRun>& runs,
                                          const KbFeatures& query, const DerivationTuning& tuning = {});

}  // namespace sinew::detail
