// exec/whole_leaves.cpp — leaves run whole beside split ones: gathered, run, scattered (see
// whole_leaves.hpp).
#include "exec/whole_leaves.hpp"

#include "decompose/decompose.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "platform/error.hpp"
#include "platform/plan_items.hpp"

#include <algorithm>
#include <limits>

namespace sinew::detail {
namespace {

const std::string gather_path = "whole gather", scatter_path = "whole scatter";

bool reads(const Arg& a) { return a.kind == Arg::Kind::partitioned && a.access != Access::write; }
bool writes(const Arg& a) { return a.kind == Arg::Kind::partitioned && a.access != Access::read; }

// The run is one partition of every unit on `device`: the leaf is whole there already.
bool whole_already(const RunState& run, std::size_t device) {
  if (run.workers.parts.size() != 1) return false;
  const Partition& p = *run.workers.parts.front().part;
  return p.device == device && p.units == run.dec.total_units;
}

// A value through a pointer is the producer's buffer on each partition, which the whole leaf's
// partition lacks.
void refuse_values_through_pointers(const RunState& run, const NodeImpl& n) {
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const Arg& a = n.args[i];
    if (a.kind != Arg::Kind::value || !run.an.values_through_pointers.count({&n, i})) continue;
    throw_error(errc::invalid_argument,
                "leaf '" + run.path(n) + "' runs whole beside split leaves and takes result '" + a.result->name +
                    "' through a pointer, which only the partitions' own buffers hold",
                {.node = run.path(n), .argument = n.argument_label(i),
                 .fix = "declare the kernel parameter by value (" + a.result->name +
                        " as a scalar), or run the tree as one partition"});
  }
}

void finish_all(RunState& run) {
  for (auto& w : run.workers.list) w.queue().finish();
}

}  // namespace

WholeLeaves::~WholeLeaves() {
  for (auto& [node, leaf] : leaves_) {
    if (!leaf->worker.slot) continue;
    try {
      leaf->worker.queue().finish();
    } catch (...) {
    }
    run_.env.queues->release(leaf->worker.cl_device, std::move(leaf->worker.slot));
  }
}

std::unique_ptr<WholeLeaves::Leaf> WholeLeaves::make_leaf(const NodeImpl& n, std::size_t device) {
  refuse_values_through_pointers(run_, n);
  auto leaf = std::make_unique<Leaf>();
  Device& d = *run_.env.devices.at(device);
  Worker& w = leaf->worker;
  w.index = std::numeric_limits<std::size_t>::max();  // none of the run's workers
  w.device = &d;
  w.runtime_index = device;
  w.context = d.context();
  w.cl_device = d.device();
  w.slot = run_.env.queues->acquire(w.context, w.cl_device, run_.profile);
  leaf->on_host = zero_copy_device(d.info());
  leaf->range = {.device = device, .first = 0, .units = run_.dec.total_units};
  leaf->part.part = &leaf->range;
  leaf->part.worker = &w;
  w.parts.push_back(&leaf->part);
  std::size_t largest = 0;
  for (const Arg& a : n.args) {
    if (!reads(a) && !writes(a)) continue;
    const VectorUse& u = run_.an.use(a.vector.get());
    if (leaf->part.slices.count(u.vector.get())) continue;
    const std::size_t unit_bytes = u.vector->unit * u.vector->type.size;
    leaf->part.slices[u.vector.get()] = run_.buffers.partition_buffer(leaf->part, u.bytes(), unit_bytes);
    largest = std::max(largest, u.bytes());
  }
  leaf->staging.resize(largest);
  leaf->record = {.node = run_.path(n), .device = device};
  NodeContext ctx(run_);
  runner_of(n).prepare(ctx, w, n);
  return leaf;
}

void WholeLeaves::prepare() {
  if (run_.an.whole_range.empty()) return;
  const std::size_t device = whole_leaf_device(run_.dec.config);
  if (device >= run_.env.devices.size())
    throw_error(errc::invalid_argument,
                "the plan runs leaf '" + run_.an.whole_range + "' whole on device " + std::to_string(device) +
                    ", which is not one of the runtime's " + std::to_string(run_.env.devices.size()) + " devices",
                {.node = run_.an.whole_range, .argument = "whole",
                 .fix = "name a runtime device index in the plan's whole item, or leave it out (the device with the "
                        "largest share)"});
  if (whole_already(run_, device)) return;
  walk(run_.root, [&](const NodeImpl& n, const std::string& path) {
    if (!n.runs_whole()) return;
    cl_call([&] { return ErrorContext{.node = path, .device = run_.env.devices.at(device)->info().name}; },
            [&] { leaves_[&n] = make_leaf(n, device); });
  });
}

// One copy of the leaf's queue, for Report::copies: within host memory where its device is
// zero-copy, and a loop's where the workers (all at the same place in the tree) are in one.
void WholeLeaves::count_copy(const Leaf& leaf, CopyKind kind, std::uint64_t bytes) {
  const bool in_loop = !run_.workers.list.empty() && run_.workers.list.front().loop_depth > 0;
  run_.record.count_copy(leaf.on_host, in_loop, kind, bytes);
}

// A partition's slice of `u` into the leaf's whole buffer at the slice's place: on the leaf's
// queue within its context, else read to the host on the partition's queue and written from there.
void WholeLeaves::gather(Leaf& leaf, const VectorUse& u) {
  const cl::Buffer& whole = leaf.part.slices.at(u.vector.get());
  for (auto& ps : run_.workers.parts) {
    if (!ps.part->units) continue;
    const std::size_t at = RunState::slice_offset(ps, u), bytes = RunState::slice_bytes(ps, u);
    cl::Event ev;
    if (ps.worker->context() == leaf.worker.context()) {
      count_copy(leaf, CopyKind::on_device, bytes);
      leaf.worker.queue().enqueueCopyBuffer(ps.slices.at(u.vector.get()), whole, 0, at, bytes, nullptr,
                                            run_.event_of(ev));
    } else {
      run_.record.count_copy(*ps.worker, CopyKind::to_host, bytes);
      count_copy(leaf, CopyKind::to_device, bytes);
      ps.worker->queue().enqueueReadBuffer(ps.slices.at(u.vector.get()), CL_TRUE, 0, bytes, leaf.staging.data() + at);
      leaf.worker.queue().enqueueWriteBuffer(whole, CL_FALSE, at, bytes, leaf.staging.data() + at, nullptr,
                                             run_.event_of(ev));
      leaf.record.host_bytes += bytes;
    }
    run_.track(leaf.part, ev, &gather_path, false);
    leaf.record.gathered_bytes += bytes;
  }
  leaf.worker.queue().finish();  // the staging is read before the next vector's slices come in
}

// The leaf's whole buffer of `u` back into every partition's slice: device-side copies within
// its context, through the host (read once) to the others.
void WholeLeaves::scatter(Leaf& leaf, const VectorUse& u) {
  const cl::Buffer& whole = leaf.part.slices.at(u.vector.get());
  const bool through_host = std::any_of(run_.workers.parts.begin(), run_.workers.parts.end(), [&](const PartState& ps) {
    return ps.part->units && ps.worker->context() != leaf.worker.context();
  });
  if (through_host) {
    count_copy(leaf, CopyKind::to_host, u.bytes());
    leaf.worker.queue().enqueueReadBuffer(whole, CL_TRUE, 0, u.bytes(), leaf.staging.data());
  }
  for (auto& ps : run_.workers.parts) {
    if (!ps.part->units) continue;
    const std::size_t at = RunState::slice_offset(ps, u), bytes = RunState::slice_bytes(ps, u);
    cl::Event ev;
    if (ps.worker->context() == leaf.worker.context()) {
      count_copy(leaf, CopyKind::on_device, bytes);
      leaf.worker.queue().enqueueCopyBuffer(whole, ps.slices.at(u.vector.get()), at, 0, bytes, nullptr,
                                            run_.event_of(ev));
    } else {
      run_.record.count_copy(*ps.worker, CopyKind::to_device, bytes);
      ps.worker->queue().enqueueWriteBuffer(ps.slices.at(u.vector.get()), CL_FALSE, 0, bytes,
                                            leaf.staging.data() + at, nullptr, run_.event_of(ev));
      leaf.record.host_bytes += bytes;
    }
    run_.track(leaf.part, ev, &scatter_path, false);
    leaf.record.scattered_bytes += bytes;
  }
  leaf.worker.queue().finish();
  finish_all(run_);  // the staging is written to every slice before it is reused
}

// Every queue's slices of `u` changed: each worker (all walk the tree alike) refreshes the
// replicas and halos of `u` before its next leaf reads them.
void WholeLeaves::mark_written(const VectorUse& u) {
  const VectorState* v = u.vector.get();
  for (auto& w : run_.workers.list) {
    if (u.read_whole && run_.replicas->tracks_writes(v)) w.dirty.insert(v);
    if (u.read_halo) w.halo_dirty.insert(v);
  }
}

void WholeLeaves::run(NodeContext& ctx, const NodeImpl& n, std::size_t iteration) {
  Leaf& leaf = *leaves_.at(&n);
  const std::string& path = run_.path(n);
  // A failure leaves nothing running on the leaf's queue: the run's other parts (a resident
  // array's rollback) undo what it did once every queue has stopped.
  struct Drain {
    Worker& w;
    ~Drain() {
      try {
        w.queue().finish();
      } catch (...) {
      }
    }
  } drain{leaf.worker};
  cl_call([&] { return ErrorContext{.node = path, .device = leaf.worker.info().name}; }, [&] {
    std::set<const VectorState*> done;
    for (const auto& a : n.args)
      if (reads(a) && done.insert(a.vector.get()).second) gather(leaf, run_.an.use(a.vector.get()));
    for (const auto& a : n.args)  // written, never read: poison, so a read of it is seen
      if (writes(a) && !done.count(a.vector.get()) && run_.buffers.poison())
        leaf.worker.queue().enqueueFillBuffer(leaf.part.slices.at(a.vector.get()), run_.buffers.poison(), 0,
                                              run_.an.use(a.vector.get()).bytes());
    leaf.worker.leaves_run.add(&path);
    static_cast<const LeafRunner&>(runner_of(n)).enqueue(ctx, leaf.part, n, iteration);
    leaf.worker.queue().finish();
    done.clear();
    for (const auto& a : n.args)
      if (writes(a) && done.insert(a.vector.get()).second) {
        const VectorUse& u = run_.an.use(a.vector.get());
        scatter(leaf, u);
        mark_written(u);
      }
  });
  ++leaf.record.launches;
}

std::vector<WholeLeafRun> WholeLeaves::runs() const {
  std::vector<WholeLeafRun> out;
  for (const auto& [node, leaf] : leaves_)
    if (leaf->record.launches) out.push_back(leaf->record);
  return out;
}

}  // namespace sinew::detail
