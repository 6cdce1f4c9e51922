// exec/nodes/fft.cpp — running the clFFT leaf: one batched in-place transform per partition, with
// the plan baked for the partition's queue (see FftPlans) and its scratch from the run's ledger.
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
    // A long transform's intermediate buffer comes from the run's ledger, within the device's
    // memory (and its cap): left to clFFT, each plan would keep one of its own.
    std::size_t scratch_bytes = 0;
    std::lock_guard lock(FftPlans::enqueue_mutex());
    library_status(static_cast<int>(clfftGetTmpBufSize(plan, &scratch_bytes)), "clfftGetTmpBufSize", ctx.path(n), ps);
    const cl::Buffer scratch = scratch_bytes ? ctx.buffers().scratch_buffer(ps, scratch_bytes) : cl::Buffer();
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    cl_mem buf = ps.slices.at(v)();
    auto st = clfftEnqueueTransform(plan, n.direction == FftDirection::forward ? CLFFT_FORWARD : CLFFT_BACKWARD, 1, &q,
                                    0, nullptr, ctx.event_of(e), &buf, nullptr, scratch());
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
