// tree/nodes/variants.hpp — per-device kernel variants (sinew::variants): one leaf with an
// implementation per device kind. The node stands in the tree as a leaf with its fallback's
// arguments, so the tree's data flow is the fallback's; every variant reads and writes the same
// vectors the same way (checked before any device work), and its runner (exec/nodes/variants.cpp)
// runs on each partition the variant of its device's kind.
#pragma once

#include "tree/node.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinew::detail {

class VariantsNode final : public NodeImpl {
 public:
  std::string_view kind() const override { return "variants"; }
  bool is_leaf() const override { return true; }
  std::string title() const override;  // "variants of kernel 'blocked' (blockmm.cl)"
  std::string short_label() const override { return name.empty() ? fallback->short_label() : name; }
  void dump_settings(std::ostream& s) const override;
  void sign(std::ostream& s, const std::function<std::string(const VectorState*)>& id) const override;
  void check_structure(const std::string& path, StructureFacts& facts) const override;
  void check_flow(const Analysis& an, const std::string& path) const override;
  void check_shapes(const Analysis& an, const std::string& path) const override;
  void constrain(GranuleRules& rules, const std::vector<DeviceInfo>& devices) const override;
  bool assumes_aligned_buffers() const override;
  const VectorState* library_scratch() const override;
  bool runs_whole() const override { return fallback->runs_whole(); }
  std::shared_ptr<VectorState> range() const override { return fallback->range(); }
  std::string argument_label(std::size_t i) const override { return fallback->argument_label(i); }
  std::vector<std::pair<std::string, const NodeImpl*>> stand_ins() const override;

  // The leaf that runs on devices of `kind`: its variant, else the fallback.
  const NodeImpl& leaf_for(DeviceKind kind) const;

  std::shared_ptr<NodeImpl> fallback;
  std::vector<std::pair<DeviceKind, std::shared_ptr<NodeImpl>>> by_kind;  // one per kind at most
};

}  // namespace sinew::detail
