// exec/nodes/copy.cpp — running the copy leaf: a device-side copy of the partition's slice.
#include "exec/nodes/runner.hpp"
#include "tree/nodes/copy.hpp"

#include <utility>

namespace sinew::detail {
namespace {

// A copy that ends a loop's body (Analysis::swap_copies) swaps its vectors' buffers instead,
// where the partition allows (PartState::swaps): the next iteration reads the new values from
// what was the source's buffer and overwrites the old ones in what was the destination's. When
// the loop ends, one real copy makes both vectors hold the last values, as copies would have.
class CopyRunner final : public LeafRunner {
 public:
  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& n, std::size_t) const override {
    if (auto it = ps.swaps.find(&n); it != ps.swaps.end() && it->second.allowed) {
      swap(ps, n, it->second);
      it->second.used = true;
      return;
    }
    copy(ctx, ps, n, n.args[0].vector.get(), n.args[1].vector.get());
  }

  void loop_ended(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n) const override {
    bool copied = false;
    for (PartState* ps : group) {
      auto it = ps->swaps.find(&n);
      if (it == ps->swaps.end() || !it->second.used) continue;
      PartState::Swap& s = it->second;
      const VectorState* src = n.args[0].vector.get();
      const VectorState* dst = n.args[1].vector.get();
      if (s.swapped) {
        swap(*ps, n, s);  // each vector in its own buffers again; the last values are in src's
        copy(ctx, *ps, n, src, dst);
      } else {
        copy(ctx, *ps, n, dst, src);  // the last values are in dst's own buffer
      }
      s.used = false;
      copied = true;
    }
    if (copied) note_written_slices(ctx, w, n);
  }

 private:
  static void copy(NodeContext& ctx, PartState& ps, const NodeImpl& n, const VectorState* from, const VectorState* to) {
    cl::Event ev;
    ps.worker->queue().enqueueCopyBuffer(ps.slices.at(from), ps.slices.at(to), 0, 0,
                                         ps.part->units * from->unit * from->type.size, nullptr, ctx.event_of(ev));
    ctx.track(ps, ev, &ctx.path(n), true);
  }

  static void swap(PartState& ps, const NodeImpl& n, PartState::Swap& s) {
    std::swap(ps.slices.at(n.args[0].vector.get()), ps.slices.at(n.args[1].vector.get()));
    if (s.twin()) std::swap(ps.halos.at(n.args[1].vector.get()), s.twin);
    s.swapped = !s.swapped;
  }
};

}  // namespace

const NodeRunner& copy_runner() {
  static const CopyRunner runner;
  return runner;
}

}  // namespace sinew::detail
