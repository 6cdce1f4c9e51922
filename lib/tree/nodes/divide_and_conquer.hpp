// tree/nodes/divide_and_conquer.hpp — the divide-and-conquer leaf (the HPU skeleton): a user's
// leaf kernel solves subproblems of `leaf_size` elements, a combine kernel merges `fanout`
// neighbouring solved subproblems at a time, breadth-first, level after level, in place on one
// vector. Which levels run split over the devices and which on one device is the plan's: the
// node kind's two plan items, registered here (crossover=3, upper=1).
#pragma once

#include "tree/node.hpp"
#include "tree/nodes/kernel.hpp"

#include <sinew/config.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace sinew::detail {

// The highest crossover level a plan may name (2^40 elements in leaves of one, fan-out 2).
inline constexpr unsigned kMaxCrossover = 40;

// The plan items of divide and conquer: the levels below `crossover` run split over the devices
// by the shares, the levels from it up on runtime device `upper` (unset: the device with the
// largest share). Unset crossover: 0, every level on `upper`. Other trees ignore both.
std::optional<unsigned> crossover_item(const Config& plan);
std::optional<std::size_t> upper_item(const Config& plan);
void set_crossover_item(Config& plan, unsigned level);
void set_upper_item(Config& plan, std::size_t device);

class DivideAndConquerNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "divide_and_conquer"; }
  bool is_leaf() const override { return true; }
  std::string short_label() const override;
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;
  void constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const override;
  std::size_t plan_granule(const Config& plan) const override;
  std::string_view trainer() const override { return "dc_model"; }
  // Per level, the leaves first: the bound vector's elements over subproblem(level), rounded up.
  LevelShape level_shape(const Analysis& an) const override;
  // The upper levels gather every partition's subproblems on one device.
  bool joins_partitions() const override { return true; }

  // args: {inout(v)}.
  const VectorState& vector() const { return *args.front().vector; }

  // Levels for n elements: the leaf level and the combine levels up to one subproblem.
  std::size_t levels(std::size_t n) const;
  // Elements of one subproblem at `level` (leaf_size * fanout^level), saturating.
  std::size_t subproblem(std::size_t level) const;
  // The plan's crossover level, at most `levels`.
  static std::size_t crossover(const Config& plan, std::size_t levels);

  std::shared_ptr<const KernelNode> leaf, combine;
  DivideAndConquerSettings settings;
};

}  // namespace sinew::detail
