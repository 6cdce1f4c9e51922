// schedule/trainer.hpp — trainers as plug-ins: the interface and the registry by name.
//
// A trainer answers a training request (any TrainingPurpose) with the fastest plan it measured.
// The built-in ones: "even_split", "cpu_assisted" and "model" (the user's Strategy: to_string of
// its value is the trainer's name, and the name the knowledge base stores with a trained plan)
// and "dc_model" (a divide-and-conquer tree's crossover, named by its node kind:
// NodeImpl::trainer). The three strategies share their flows (schedule/train_search.hpp: a
// derived plan's check, level 2 and a pinned device's screening are flows over the same parts,
// not trainers of their own); every trainer spends one ledger (schedule/train_ledger.hpp).
// Adding a trainer: docs/ARCHITECTURE.md, "Adding a trainer".
#pragma once

#include "schedule/train.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinew::detail {

// What a trainer is asked: the devices, how to run the tree, the options (purpose included),
// where to start, and what the tree's own trainer needs of the tree.
struct TrainingRequest {
  const std::vector<DeviceInfo>& devices;
  const Measure& measure;   // a timed run, recorded by the caller
  const Measure& untimed;   // an untimed first run (a new fission's, a device alone's)
  const TrainingOptions& options;
  const Progress& progress;
  const std::optional<Config>& start;  // e.g. the nearest knowledge-base entry's plan
  // The subproblems at each level of the tree's node that named the trainer
  // (NodeImpl::level_subproblems); empty for the strategies' trainers.
  const std::vector<std::size_t>& levels;
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  // The registered name: a Strategy's spelling, or the one a node kind names.
  virtual std::string_view name() const = 0;
  // The executions a training with `options` may take (what the user is told before it starts).
  virtual std::size_t executions(const TrainingOptions& options) const { return options.max_executions; }
  // Measures plans for `request` and returns the fastest (TrainingResult::strategy: name()).
  // Throws sinew::Error for a request it cannot serve (no device, a device out of range).
  virtual TrainingResult train(const TrainingRequest& request) const = 0;
};

// Registers `trainer` under its name. Throws sinew::Error (invalid_argument) where that name is
// registered already. Thread-safe; registered trainers live as long as the process.
void register_trainer(std::unique_ptr<const Trainer> trainer);
// The trainer registered as `name`. Throws sinew::Error (invalid_argument) naming the registered
// ones where none is.
const Trainer& find_trainer(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> trainer_names();

// The trainer of a request: the tree's own (`tree_trainer`, a node kind's: NodeImpl::trainer)
// where it has one, but for one device's screening (one device alone has no plan items of the
// node to train: its levels are screened as any tree's); else the strategy's.
const Trainer& trainer_for(const TrainingOptions& options, std::string_view tree_trainer = {});

}  // namespace sinew::detail
