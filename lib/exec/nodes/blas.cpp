// exec/nodes/blas.cpp — running the CLBlast leaves on a partition's slices.
#include "exec/library_setup_guard.hpp"
#include "exec/nodes/runner.hpp"
#include "tree/nodes/blas.hpp"

#include <clblast.h>

#include <utility>

namespace sinew::detail {
namespace {

// CLBlast 1.5.3 fills its static tuning database when the first Database is constructed, without
// a lock (CLBlast issue 486): two device threads making their first call at once race on it (ASan:
// heap-use-after-free in clblast::Database::Database; docs/decisions/032). So the
// first call of each routine on each device — which builds that database and compiles the
// routine's program — is made under one process-wide lock; every later call, which only sets
// arguments and enqueues, runs unlocked, so devices never wait for each other's kernels.
enum class Routine { axpy, gemm };

LibrarySetupGuard<std::pair<cl_device_id, Routine>>& clblast_calls() {
  static LibrarySetupGuard<std::pair<cl_device_id, Routine>> calls;  // one for every routine: the database is shared
  return calls;
}

template <class F>
clblast::StatusCode first_alone(cl_device_id device, Routine routine, F&& f) {
  return clblast_calls().call({device, routine}, f,
                              [](clblast::StatusCode s) { return s == clblast::StatusCode::kSuccess; });
}

class AxpyRunner final : public LeafRunner {
 public:
  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& node, std::size_t) const override {
    const auto& n = static_cast<const AxpyNode&>(node);
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    const std::size_t elements = ps.part->units * n.args[0].vector->unit;
    auto st = first_alone(ps.worker->cl_device(), Routine::axpy, [&] {
      return clblast::Axpy<float>(elements, n.alpha, ps.slices.at(n.args[0].vector.get())(), 0, 1,
                                  ps.slices.at(n.args[1].vector.get())(), 0, 1, &q, ctx.event_of(e));
    });
    library_status(static_cast<int>(st), "clblast::Axpy", ctx.path(n), ps);
    ctx.track(ps, cl::Event(e), &ctx.path(n), true);
  }
};

class GemmRunner final : public LeafRunner {
 public:
  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& node, std::size_t) const override {
    const auto& n = static_cast<const GemmNode&>(node);
    cl_command_queue q = ps.worker->queue()();
    cl_event e = nullptr;
    const auto& b = ctx.replicas().of(ps, n.args[1].vector.get());
    auto st = first_alone(ps.worker->cl_device(), Routine::gemm, [&] {
      return clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                  ps.part->units, n.n, n.k, n.alpha, ps.slices.at(n.args[0].vector.get())(), 0, n.k,
                                  b(), 0, n.n, n.beta, ps.slices.at(n.args[2].vector.get())(), 0, n.n, &q,
                                  ctx.event_of(e));
    });
    library_status(static_cast<int>(st), "clblast::Gemm", ctx.path(n), ps);
    ctx.track(ps, cl::Event(e), &ctx.path(n), true);
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
