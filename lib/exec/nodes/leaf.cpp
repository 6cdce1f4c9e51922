// exec/nodes/leaf.cpp — what every leaf's run shares: replicas re-synchronised before a leaf
// reads them whole, halo units exchanged before it reads a halo and the values it takes combined
// (exec/values.hpp), the leaf enqueued per partition (or, marked whole beside split leaves, once
// on its device: exec/whole_leaves.hpp), the replicas and halos of what it writes marked dirty.
#include "exec/nodes/runner.hpp"
#include "exec/values.hpp"
#include "platform/error.hpp"

namespace sinew::detail {

void sync_read_replicas(NodeContext& ctx, Worker& w, const NodeImpl& n) {
  for (const auto& a : n.args) {
    if (a.kind != Arg::Kind::whole || !w.dirty.count(a.vector.get())) continue;
    // A replica is read after slices changed: every worker meets here and one syncs them all.
    w.queue().finish();
    ctx.barrier().arrive_and_wait([&] { ctx.replicas().sync(a.vector.get()); });
    w.dirty.erase(a.vector.get());
  }
}

void note_written_slices(NodeContext& ctx, Worker& w, const NodeImpl& n) {
  for (const auto& a : n.args) {
    if (a.kind != Arg::Kind::partitioned || a.access == Access::read) continue;
    const VectorUse& u = ctx.analysis().use(a.vector.get());
    if (u.read_whole && ctx.replicas().tracks_writes(a.vector.get())) w.dirty.insert(a.vector.get());
    if (u.read_halo) w.halo_dirty.insert(a.vector.get());
  }
}

void LeafRunner::run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n, Step step) const {
  sync_read_replicas(ctx, w, n);
  const std::string& path = ctx.path(n);
  for (const auto& a : n.args) {
    if (a.kind != Arg::Kind::halo || !w.halo_dirty.count(a.vector.get())) continue;
    // A halo is read after slices changed: its units move from the neighbours first. With
    // several queues every worker meets here and one moves them all; one queue runs them in order.
    if (ctx.worker_count() > 1) {
      w.queue().finish();
      ctx.barrier().arrive_and_wait([&] { ctx.halos().exchange(a.vector.get(), path, step.iteration); });
    } else {
      ctx.halos().exchange(a.vector.get(), path, step.iteration);
    }
    w.halo_dirty.erase(a.vector.get());
  }
  meet_for_values(ctx, w, n);
  if (ctx.whole_leaves().gathers(n)) {
    // Marked whole beside split leaves: every worker meets here and one gathers, runs and scatters
    // it on its device (exec/whole_leaves.hpp).
    w.queue().finish();
    ctx.barrier().arrive_and_wait([&] { ctx.whole_leaves().run(ctx, n, step.iteration); });
    return;
  }
  w.leaves_run.add(&path);
  for (PartState* p : group)
    cl_call([&] { return ErrorContext{.node = path, .device = w.info().name}; },
            [&] { enqueue(ctx, *p, n, step.iteration); });
  note_written_slices(ctx, w, n);
}

void library_status(int status, const char* call, const std::string& path, const PartState& ps) {
  if (status != 0)
    throw_error(errc::library, std::string(call) + " failed with status " + std::to_string(status),
                {.api_call = call, .node = path, .device = ps.worker->info().name});
}

}  // namespace sinew::detail
