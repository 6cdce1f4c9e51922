// exec/nodes/copy.cpp — running the copy leaf: a device-side copy of the partition's slice.
#include "exec/nodes/runner.hpp"
#include "tree/nodes/copy.hpp"

namespace sinew::detail {
namespace {

class CopyRunner final : public LeafRunner {
 public:
  void enqueue(RunState& run, PartState& ps, const NodeImpl& n, std::size_t) const override {
    const VectorState* src = n.args[0].vector.get();
    cl::Event ev;
    ps.worker->queue().enqueueCopyBuffer(ps.slices.at(src), ps.slices.at(n.args[1].vector.get()), 0, 0,
                                         ps.part->units * src->unit * src->type.size, nullptr, run.event_of(ev));
    run.track(ps, ev, &run.path(n), true);
  }
};

}  // namespace

const NodeRunner& copy_runner() {
  static const CopyRunner runner;
  return runner;
}

}  // namespace sinew::detail
