// exec/run.hpp — one execution request: what it runs (tree, analysis, bindings, decomposition)
// and the parts it owns, each in a file of its own:
//   workers      the queues and their partitions, grouped by OpenCL context, and the barrier
//                where they meet (exec/worker.hpp, below);
//   buffers      every device buffer taken from the pool (exec/buffer_ledger.hpp);
//   replicas     the vectors read whole, one copy per context, and their re-synchronisation
//                (exec/replicas.hpp);
//   halos        the halo buffers and their exchanges (exec/halo.hpp);
//   reductions   the values partitions combine: reductions' results, a scan's carries, divide
//                and conquer's upper levels (exec/reductions.hpp);
//   schedule     the schedule policy's run: the queues that take part, the chunks it cuts before
//                and while the run goes (exec/chunks.hpp, decompose/schedule_policy.hpp);
//   record       what the run did, for its Report (exec/run_record.hpp);
//   whole_leaves the leaves marked whole_range() that it gathers onto one device, runs and scatters
//                back (exec/whole_leaves.hpp);
//   residency    the resident arrays it binds: which copy each partition uses, what moves
//                (exec/residency.hpp).
// A run split over processes (a Cluster's rank) has replicas, halos and reductions that also
// exchange with the other processes (exec/spanning.hpp); nothing else knows.
//
// The executor's files reach the run through this class; node runners see a narrower view of
// it (exec/nodes/node_context.hpp).
#pragma once

#include "decompose/decompose.hpp"
#include "exec/barrier.hpp"
#include "exec/buffer_ledger.hpp"
#include "exec/chunks.hpp"
#include "exec/environment.hpp"
#include "exec/halo.hpp"
#include "exec/reductions.hpp"
#include "exec/replicas.hpp"
#include "exec/residency.hpp"
#include "exec/run_record.hpp"
#include "exec/whole_leaves.hpp"
#include "exec/worker.hpp"
#include "tree/analysis.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

class Exchanger;

// The workers of one replica place (exec/replicas.hpp): an OpenCL context, or one device of a
// context several discrete devices share.
struct ContextState {
  cl::Context context;
  std::vector<Worker*> workers;
};

// A run's queues and partitions.
struct Workers {
  std::vector<Worker> list;
  // A deque: a worker appends the chunks it takes while others run theirs (references stay).
  std::deque<PartState> parts;
  std::map<ReplicaPlace, ContextState> contexts;
  std::optional<Barrier> barrier;  // one party per host thread (per worker where it is met)
  bool cpu_work = false;      // some partition runs on a host-unified (CPU) device
  bool defer_unmaps = false;  // zero-copy results are unmapped after the wait (one feeding thread)
};

class RunState {
 public:
  // `poison` (0: off): RuntimeOptions::poison_check's byte; `exchanger`: the run is one
  // process's part of a larger one (exec/exchanger.hpp), null for a run of one process.
  RunState(Environment& env, const NodeImpl& root, const Analysis& an, const std::vector<Binding>& bindings,
           const Decomposition& dec, bool profile, std::uint8_t poison = 0, Exchanger* exchanger = nullptr);
  // Waits for whatever was enqueued (nothing may touch host memory once a request is over),
  // returns queues and buffers to their pools. Never throws.
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  Environment& env;
  const NodeImpl& root;
  const Analysis& an;
  const std::vector<Binding>& bindings;
  const Decomposition& dec;
  const bool profile;
  // When the run began (a kept run state's next run begins anew: exec/kept_run.hpp).
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  // Its parts.
  Workers workers;
  BufferLedger buffers;
  std::unique_ptr<Replicas> replicas;
  std::unique_ptr<Halos> halos;
  std::unique_ptr<Reductions> reductions;
  RunSchedule schedule;
  RunRecord record;
  WholeLeaves whole_leaves{*this};
  // Last: a failed run's rollback of its resident arrays runs once every part above is done.
  Residency residency{*this};

  double now_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const std::string& path(const NodeImpl& n) const { return an.path(n); }

  // Where a partition's data lies. The host memory bound to `u` (which must be bound).
  char* host_of(const VectorUse& u) const {
    return static_cast<char*>(bindings[static_cast<std::size_t>(u.binding)].data);
  }
  static std::size_t slice_offset(const PartState& ps, const VectorUse& u) {
    return ps.part->first * u.vector->unit * u.vector->type.size;
  }
  static std::size_t slice_bytes(const PartState& ps, const VectorUse& u) {
    return ps.part->units * u.vector->unit * u.vector->type.size;
  }
  // The slice is the user's memory itself: a bound vector on a host-unified CPU device, unless
  // its halo units are exchanged (then it is part of a halo buffer of the device's own), or a
  // leaf's kernels count on aligned buffers (VectorUse::aligned) and the slice's memory is not
  // aligned to the device's base address alignment (it is staged in a buffer of the device's).
  bool host_slice(const PartState& ps, const VectorUse& u) const {
    const Worker& w = *ps.worker;
    return w.zero_copy && u.bound() && !u.exchanged() &&
           (!u.aligned || aligned_for(w, host_of(u) + slice_offset(ps, u)));
  }
  // A vector read whole and never written is the user's memory itself on a zero-copy device, on
  // the same terms.
  bool whole_in_user(const Worker& w, const VectorUse& u) const {
    return w.zero_copy && u.bound() && !u.written && (!u.aligned || aligned_for(w, host_of(u)));
  }
  static bool aligned_for(const Worker& w, const void* host) {
    return reinterpret_cast<std::uintptr_t>(host) % w.base_alignment() == 0;
  }

  // Where a command's event goes: nowhere unless the request is profiled (an event is a driver
  // object per command, which only the report and the trace read).
  cl::Event* event_of(cl::Event& ev) const { return profile ? &ev : nullptr; }
  cl_event* event_of(cl_event& ev) const { return profile ? &ev : nullptr; }  // for the libraries' C calls
  // Keeps a command's event for the report and the trace (profiled requests only).
  void track(PartState& ps, cl::Event ev, const std::string* path, bool kernel) const {
    if (profile) ps.events.push_back({std::move(ev), path, kernel});
  }

  // The first error of any worker; the others' are dropped.
  void keep_error();
  void keep_error(std::exception_ptr error);
  std::exception_ptr error() const { return error_; }

 private:
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// The parts of an execution, in the order execute() calls them.
// Builds every program and kernel the run needs and checks the device limits (work-group
// sizes, allocation sizes, memory), then allocates the buffers — all before any data moves.
// `memory`: what the plan's earlier runs left its schedule (SchedulePolicy::new_memory), or null.
void prepare(RunState& run, ScheduleMemory* memory);
// A run state kept after a run without error (exec/kept_run.hpp) made ready for one more run of
// the same tree, bindings and decomposition: the schedule's run started anew, what the last run
// noted (its record, the workers' walk, their times, its partitions' events) forgotten, and the
// resident arrays placed anew (exec/residency.hpp: what changed since, a host write, another
// tree's run, moves as it would in a run prepared afresh). False, before the residency is
// touched, where the schedule's new run has other queues or cuts chunks: the state is then of no
// use.
bool prepare_again(RunState& run, ScheduleMemory* memory);
// Every node's runner prepares `w` for its partitions (programs, kernel objects, per-partition
// state): prepare() for the partitions placed before the run, a worker for each chunk it takes.
void prepare_runners(RunState& run, Worker& w);
// A partition's slices (and halo buffers) of the vectors it uses: prepare() makes them for every
// partition, a worker for each chunk it takes while the run goes.
void allocate_slices(RunState& run, PartState& ps);
// Runs every worker's partitions (a thread per queue, or one thread feeding every device) and
// waits for their queues; the first error is kept in the run.
void drive(RunState& run);
// A prepared run (prepare() or prepare_again()) driven to its end: its resident arrays committed,
// its reductions combined, its report; the run's first error thrown.
Report run_prepared(RunState& run);
// The report of a finished run, and its Chrome trace when one is asked for.
Report report(RunState& run, double joined_ms);

}  // namespace sinew::detail
