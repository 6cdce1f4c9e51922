// exec/nodes/blas.cpp — running the CLBlast leaves on a partition's slices.
#include "exec/nodes/runner.hpp"
#include "tree/nodes/blas.hpp"

#include <clblast.h>

namespace sinew::detail {
namespace {

class AxpyRunner final : public LeafRunner {
 public:
  void enqueue(RunState& run, PartState& ps, const NodeImpl& node, std::size_t) const override {
    const auto& n = static_cast<const AxpyNode&>(node);
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    const std::size_t elements = ps.part->units * n.args[0].vector->unit;
    auto st = clblast::Axpy<float>(elements, n.alpha, ps.slices.at(n.args[0].vector.get())(), 0, 1,
                                   ps.slices.at(n.args[1].vector.get())(), 0, 1, &q, run.event_of(e));
    library_status(static_cast<int>(st), "clblast::Axpy", run.path(n), ps);
    run.track(ps, cl::Event(e), &run.path(n), true);
  }
};

class GemmRunner final : public LeafRunner {
 public:
  void enqueue(RunState& run, PartState& ps, const NodeImpl& node, std::size_t) const override {
    const auto& n = static_cast<const GemmNode&>(node);
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    const auto& b = run.contexts.at(ps.worker->context()).whole.at(n.args[1].vector.get());
    auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                   ps.part->units, n.n, n.k, n.alpha, ps.slices.at(n.args[0].vector.get())(), 0, n.k,
                                   b(), 0, n.n, n.beta, ps.slices.at(n.args[2].vector.get())(), 0, n.n, &q,
                                   run.event_of(e));
    library_status(static_cast<int>(st), "clblast::Gemm", run.path(n), ps);
    run.track(ps, cl::Event(e), &run.path(n), true);
  }
};

}  // namespace

const NodeRunner& axpy_runner() {
  static const AxpyRunner runner;
  return runner;
}

const NodeRunner& gemm_runner() {
  static const GemmRunner runner;
  return runner;
}

}  // namespace sinew::detail
