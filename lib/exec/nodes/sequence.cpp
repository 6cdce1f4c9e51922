// exec/nodes/sequence.cpp — running pipelines and maps: their children in order on the same
// partitions, so channels between stages never leave the device.
#include "exec/nodes/runner.hpp"

namespace sinew::detail {
namespace {

class SequenceRunner final : public NodeRunner {
 public:
  bool serves_identical_runs() const override { return true; }  // it keeps no state
  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n, Step step) const override {
    for (const auto& c : n.children) interpret(ctx, w, group, *c, step);
  }
};

}  // namespace

const NodeRunner& sequence_runner() {
  static const SequenceRunner runner;
  return runner;
}

}  // namespace sinew::detail
