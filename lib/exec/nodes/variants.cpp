// exec/nodes/variants.cpp — running per-device kernel variants: each worker prepares, and each
// partition runs, the variant of its device's kind (DeviceInfo::variant_kind), through that
// leaf's own runner. What every leaf's run shares (replicas, halos, written slices) is done once
// for the variants node by LeafRunner::run: every variant moves the same data (tree/nodes/variants.cpp).
#include "exec/nodes/runner.hpp"
#include "tree/nodes/variants.hpp"

#include <stdexcept>

namespace sinew::detail {
namespace {

const NodeImpl& leaf_on(const Worker& w, const NodeImpl& node) {
  return static_cast<const VariantsNode&>(node).leaf_for(w.info().variant_kind());
}

// The variant's runner: a leaf's, as the tree check allows only leaves that run on their own
// partitions.
const LeafRunner& leaf_runner(const NodeImpl& leaf) {
  const auto* runner = dynamic_cast<const LeafRunner*>(&runner_of(leaf));
  if (!runner) throw std::logic_error("sinew: a variant '" + leaf.title() + "' whose runner is no leaf's");
  return *runner;
}

class VariantsRunner final : public LeafRunner {
 public:
  void prepare(NodeContext& ctx, Worker& w, const NodeImpl& node) const override {
    const NodeImpl& leaf = leaf_on(w, node);
    leaf_runner(leaf).prepare(ctx, w, leaf);
  }
  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& node, std::size_t iteration) const override {
    const NodeImpl& leaf = leaf_on(*ps.worker, node);
    leaf_runner(leaf).enqueue(ctx, ps, leaf, iteration);
  }
};

}  // namespace

const NodeRunner& variants_runner() {
  static const VariantsRunner runner;
  return runner;
}

}  // namespace sinew::detail
