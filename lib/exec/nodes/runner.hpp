// exec/nodes/runner.hpp — how each node kind runs: one runner per kind (exec/nodes/<kind>.cpp),
// found by the node's type in the registry (exec/nodes/registry.cpp). The tree's node classes
// (lib/tree/nodes/) describe and check; their runners prepare and enqueue, seeing the run through
// a NodeContext (exec/nodes/node_context.hpp). Adding a kind: docs/ARCHITECTURE.md, "Adding a
// skeleton".
#pragma once

#include "exec/nodes/node_context.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace sinew::detail {

// A worker's partitions that run a node together (all of them, or one streamed partition).
using Group = std::vector<PartState*>;

// Where in the tree a node runs: the enclosing loop's step (0 outside loops) and loop depth.
struct Step {
  std::size_t iteration = 0;
  int loop_depth = 0;
};

class NodeRunner {
 public:
  virtual ~NodeRunner() = default;
  // Once per worker, before any data moves: programs, kernel objects, per-partition state
  // (PartState::nodes). Runs on the request's thread; may throw sinew::Error for a limit a
  // device cannot meet.
  virtual void prepare(NodeContext& ctx, Worker& w, const NodeImpl& n) const {
    (void)ctx;
    (void)w;
    (void)n;
  }
  // Whether what prepare() made (PartState::nodes, the worker's kernel objects) serves a later
  // run of the same partitions as it is, so that a kept run state (exec/kept_run.hpp) may run
  // again without preparing: nothing in it changes while a run goes. False unless a kind says so.
  virtual bool serves_identical_runs() const { return false; }
  // Enqueues the node's work for `group` on the worker's queue (from the worker's thread).
  virtual void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n, Step step) const = 0;
  // Waits until what combine() reads of the worker's partitions is on the host (for a loop's
  // predicate: the queue may go on with the rest of the iteration meanwhile). By default, until
  // the worker's queue has finished.
  virtual void wait_values(NodeContext& ctx, Worker& w, const NodeImpl& n) const {
    (void)ctx;
    (void)n;
    w.queue().finish();
  }
  // The buffer on `ps`'s device that holds the partition's value of `n` once what `run` enqueued
  // has run (a map_reduce's result), for kernels that read it through a pointer (sinew::value);
  // null for kinds that produce no value.
  virtual const cl::Buffer* value_buffer(PartState& ps, const NodeImpl& n) const {
    (void)ps;
    (void)n;
    return nullptr;
  }
  // Once every partition's queue has finished what `run` enqueued (at a loop's barrier or after
  // the workers joined), for nodes that run() put in Worker::pending: combines the partitions'
  // values on the host.
  virtual void combine(NodeContext& ctx, const NodeImpl& n) const {
    (void)ctx;
    (void)n;
  }
  // When a loop whose body holds `n` has run its last iteration for `group` (on the worker's
  // thread): what an iteration left for the loop's end (a copy that swapped buffers restores
  // copy semantics).
  virtual void loop_ended(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n) const {
    (void)ctx;
    (void)w;
    (void)group;
    (void)n;
  }
};

// A leaf: for each partition of the group, its work on the partition's queue. The replicas the
// leaf reads whole are re-synchronised first when slices were written since (every worker meets
// at a barrier, one syncs them all), and the slices it writes mark those replicas dirty.
class LeafRunner : public NodeRunner {
 public:
  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n, Step step) const final;
  virtual void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& n, std::size_t iteration) const = 0;
};

// What LeafRunner::run does around a leaf's work, for leaves whose run is their own (a scan's
// partitions meet mid-run): before it, the replicas `n` reads whole are re-synchronised if
// slices were written since (every worker meets at a barrier); after it, the replicas of the
// slices it writes are marked dirty.
void sync_read_replicas(NodeContext& ctx, Worker& w, const NodeImpl& n);
void note_written_slices(NodeContext& ctx, Worker& w, const NodeImpl& n);

// The runner of a node's kind; throws std::logic_error for a kind nobody registered.
const NodeRunner& runner_of(const NodeImpl& n);

// Runs a node (its runner's run()): what inner nodes call for their children.
inline void interpret(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& n, Step step) {
  runner_of(n).run(ctx, w, group, n, step);
}

// A library call's status: sinew::Error(errc::library) naming the call, node and device.
void library_status(int status, const char* call, const std::string& path, const PartState& ps);

}  // namespace sinew::detail
