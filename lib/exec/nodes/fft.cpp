// exec/nodes/fft.cpp — running the clFFT leaf: one batched in-place transform per partition, with
// the plan baked for the partition's queue (see FftPlans).
#include "exec/nodes/runner.hpp"
#include "tree/nodes/fft.hpp"

namespace sinew::detail {
namespace {

class FftRunner final : public LeafRunner {
 public:
  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& node, std::size_t) const override {
    const auto& n = static_cast<const FftNode&>(node);
    const VectorState* v = n.args[0].vector.get();
    auto plan = ctx.env().fft->get(ps.worker->context, ps.worker->queue(), v->unit, ps.part->units);
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    cl_mem buf = ps.slices.at(v)();
    std::lock_guard lock(FftPlans::enqueue_mutex());
    auto st = clfftEnqueueTransform(plan, n.direction == FftDirection::forward ? CLFFT_FORWARD : CLFFT_BACKWARD, 1, &q,
                                    0, nullptr, ctx.event_of(e), &buf, nullptr, nullptr);
    library_status(static_cast<int>(st), "clfftEnqueueTransform", ctx.path(n), ps);
    ctx.track(ps, cl::Event(e), &ctx.path(n), true);
  }
};

}  // namespace

const NodeRunner& fft_runner() {
  static const FftRunner runner;
  return runner;
}

}  // namespace sinew::detail
