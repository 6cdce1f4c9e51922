// exec/nodes/node_context.hpp — what a node's runner sees of the run: the tree and the plan, the
// environment's caches, every partition (for runners that combine them), the run's parts it reads
// and writes (buffers, replicas, halos, reductions, record), the barrier where workers meet, and
// profiling. Not the run's workers, schedule or preparation, which are the executor's.
#pragma once

#include "exec/run.hpp"

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace sinew::detail {

class NodeContext {
 public:
  explicit NodeContext(RunState& run) : run_(run) {}

  // The tree and the request.
  const Analysis& analysis() const { return run_.an; }
  const std::string& path(const NodeImpl& n) const { return run_.path(n); }
  const std::vector<Binding>& bindings() const { return run_.bindings; }
  const Decomposition& decomposition() const { return run_.dec; }
  const Config& plan() const { return run_.dec.config; }
  // Partitions of many sizes are cut while the run goes (the schedule's chunks).
  bool chunked() const { return run_.schedule.takes_chunks(); }
  // Programs, queues, devices and library plans, shared with other requests (thread-safe).
  Environment& env() const { return run_.env; }

  // The run's parts.
  std::deque<PartState>& partitions() { return run_.workers.parts; }
  BufferLedger& buffers() { return run_.buffers; }
  Replicas& replicas() { return *run_.replicas; }
  Halos& halos() { return *run_.halos; }
  Reductions& reductions() { return *run_.reductions; }
  RunRecord& record() { return run_.record; }
  WholeLeaves& whole_leaves() { return run_.whole_leaves; }

  // Where the workers meet: one party per host thread; `worker_count` workers in the run.
  Barrier& barrier() { return *run_.workers.barrier; }
  std::size_t worker_count() const { return run_.workers.list.size(); }
  bool first_worker(const Worker& w) const { return &w == &run_.workers.list.front(); }

  // Where a partition's data lies (RunState::host_of, host_slice).
  char* host_of(const VectorUse& u) const { return run_.host_of(u); }
  bool host_slice(const PartState& ps, const VectorUse& u) const { return run_.host_slice(ps, u); }

  // Profiling: a command's event only for a profiled request, kept for the report and the trace.
  bool profiled() const { return run_.profile; }
  cl::Event* event_of(cl::Event& ev) const { return run_.event_of(ev); }
  cl_event* event_of(cl_event& ev) const { return run_.event_of(ev); }
  void track(PartState& ps, cl::Event ev, const std::string* path, bool kernel) const {
    run_.track(ps, std::move(ev), path, kernel);
  }
  double now_ms() const { return run_.now_ms(); }

 private:
  RunState& run_;
};

}  // namespace sinew::detail
