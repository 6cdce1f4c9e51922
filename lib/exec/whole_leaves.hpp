// exec/whole_leaves.hpp — leaves marked whole_range() in a tree whose other leaves run split.
//
// Such a leaf runs as one partition of every unit on one device: the plan's `whole` item names the
// device (a runtime device index), else the device with the plan's largest share
// (whole_leaf_device, decompose.hpp, which also checks that the device's memory holds the leaf's
// whole vectors beside its partitions: Footprint::whole). Every queue of
// the run meets before the leaf (its queues idle), and the last to arrive:
//   1. gathers the vectors the leaf reads (in, inout) from the partitions that hold them into
//      buffers of the whole vector on that device: device-side copies from partitions in the
//      device's context, through the host from the others;
//   2. runs the leaf there, on a queue of its own (so no fission or overlap level ever splits it,
//      and the device need not hold a partition);
//   3. scatters what the leaf writes (out, inout) back into every partition's slice, and marks
//      those slices written, so that halos and replicas are refreshed before the next leaf reads.
// Every copy of steps 1 and 3 counts in Report::copies (and Report::loop_copies inside a loop)
// as the executor's other copies do: a device-side copy in `device`, a read to the host in
// `to_host`, a write from it in `to_device`, each in `host` where its device is zero-copy; so a
// report shows what running the leaf whole moved.
// Where the run is one partition of every unit on that very device, the leaf runs on it as any
// leaf does: nothing to gather.
//
// Under the poison check the whole buffers are guarded as partitions' are, and a vector the leaf
// writes without reading (out) starts as poison: a leaf that reads outside what was gathered reads
// poison, which the check's two runs see differ.
//
// Thread safety: prepare() runs on the request's thread before any data moves; run() on the one
// thread that completes a barrier, every other queue idle; runs() once the workers have joined.
#pragma once

#include "exec/run_record.hpp"
#include "exec/worker.hpp"

#include <sinew/report.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace sinew::detail {

class NodeContext;
class RunState;

class WholeLeaves {
 public:
  explicit WholeLeaves(RunState& run) : run_(run) {}
  ~WholeLeaves();
  WholeLeaves(const WholeLeaves&) = delete;
  WholeLeaves& operator=(const WholeLeaves&) = delete;

  // Once the partitions are placed and their runners prepared: for every leaf marked whole that
  // the run must gather, its device's queue, kernel objects and whole buffers.
  void prepare();
  // Whether `n` runs through run() rather than on the partitions (a leaf marked whole, and the
  // run is not already one partition of every unit on the leaf's device).
  bool gathers(const NodeImpl& n) const { return leaves_.count(&n) > 0; }
  // Whether the run gathers any leaf.
  bool any() const { return !leaves_.empty(); }
  // Gathers, runs and scatters leaf `n` (see above) for loop step `iteration`.
  void run(NodeContext& ctx, const NodeImpl& n, std::size_t iteration);
  // What each gathered leaf did, for Report::whole_leaves.
  std::vector<WholeLeafRun> runs() const;

 private:
  struct Leaf {
    Worker worker;    // the leaf's device and its own queue
    Partition range;  // every unit
    PartState part;   // its buffers: the whole vectors it reads and writes
    std::vector<unsigned char> staging;  // through the host between contexts
    bool on_host = false;  // its device is zero-copy: its copies are within host memory
    WholeLeafRun record;
  };
  std::unique_ptr<Leaf> make_leaf(const NodeImpl& n, std::size_t device);
  void gather(Leaf& leaf, const VectorUse& u);
  void scatter(Leaf& leaf, const VectorUse& u);
  void mark_written(const VectorUse& u);
  void count_copy(const Leaf& leaf, CopyKind kind, std::uint64_t bytes);

  RunState& run_;
  std::map<const NodeImpl*, std::unique_ptr<Leaf>> leaves_;
};

}  // namespace sinew::detail
