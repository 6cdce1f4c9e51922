// exec/drive.cpp — driving a run's workers and waiting for them: a host thread per queue (so a
// blocking transfer or library call on one device never holds back another, and each queue's end
// is seen as it comes), or, where exec/feeding.hpp says so (a streamed split whose transfers are
// all direct, one device's queues whose slices are all resident), one thread that feeds every
// queue and then waits for all of them under the wait policy (exec/wait.hpp).
#include "exec/chunks.hpp"
#include "exec/feeding.hpp"
#include "exec/nodes/runner.hpp"
#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "exec/wait_cl.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <deque>
#include <future>

namespace sinew::detail {
namespace {

// One partition of a streamed tree: partitions are independent, each runs the whole tree, so a
// queue pipelines them (while one partition computes, the next one's data is already moving);
// `flush`: so that the device starts at once.
void enqueue_streamed(RunState& run, Worker& w, PartState& p, bool flush) {
  upload(run, p);
  NodeContext ctx(run);
  interpret(ctx, w, {&p}, run.root, {});
  download(run, p);
  if (flush) w.queue().flush();
}

// A worker whose chunks were all cut before the run (ScheduleRun::all_cut_before_run): streamed
// one after another, as a static split's are. Where the policy has two chunks in flight from the
// first (ScheduleRun::pipelined_from_first_chunk), each chunk's kernel is enqueued before the
// host copies the chunk before it out of the results ring (a begun download), so that the
// queue's kernels run back to back rather than each behind the last one's copies; its last chunk
// downloads as a streamed partition does, its pieces copied out as they land
// (docs/decisions/187).
void drive_cut_before_run(RunState& run, Worker& w) {
  const bool pipelined = run.schedule.run->pipelined_from_first_chunk();
  PartState* begun = nullptr;  // the chunk whose download began and is not finished
  std::vector<Staging::Pending> results;
  try {
    for (std::size_t i = 0; i < w.parts.size(); ++i) {
      PartState& p = *w.parts[i];
      const bool begin = pipelined && i + 1 < w.parts.size();  // else streamed, as enqueue_streamed does
      upload(run, p);
      NodeContext ctx(run);
      interpret(ctx, w, {&p}, run.root, {});
      if (begun) finish_downloads(run, *begun, results);  // while this chunk's kernel runs
      download(run, p, begin ? &results : nullptr);
      begun = begin ? &p : nullptr;
      if (w.info().discrete) w.queue().flush();
    }
  } catch (...) {
    abandon_downloads(w, results);
    throw;
  }
  cl_call([&] { return ErrorContext{.api_call = "clFinish", .device = w.info().name}; },
          [&] { drain(w.queue(), w.info().discrete, run.env.wait, run.workers.cpu_work); });
  for (PartState* p : w.parts) chunk_done(run, w, *p);
}

// A worker of a schedule that takes chunks as the run goes: its chunks cut before the run, then
// chunk after chunk while the policy gives it one (ScheduleRun::take). Once its first chunk has
// ended, two chunks in flight: the next is enqueued before the host waits for the one before it,
// so the device never idles between them (a discrete device uploads and computes the next while
// the host copies the results of the one before out of the pinned ring; a blocking staged
// download would hold the worker until its chunk had finished, and the queue idle until the next
// was enqueued). Before that the queue's speed is a guess from the plan's weights: a slow device
// given a second chunk on a wrong guess would hold the run back twice as long; a policy whose
// queues run their own ranges (ScheduleRun::pipelined_from_first_chunk) has two chunks in flight
// from the first, so that the first chunk's transfers overlap the second's. A chunk counts as
// done (its rate, its buffers back to the pool) once its results are in host memory. Where every
// unit was cut before the run (ScheduleRun::all_cut_before_run), drive_cut_before_run drives it.
void drive_chunks(RunState& run, Worker& w) {
  struct InFlight {
    PartState* part = nullptr;
    cl::Event end;
    std::vector<Staging::Pending> results;  // staged downloads begun, not finished
  };
  std::deque<InFlight> flight;
  // Two chunks in flight: once a chunk of this worker has ended, or from the start.
  bool two_in_flight = run.schedule.run->pipelined_from_first_chunk();
  auto complete = [&] {
    InFlight& f = flight.front();
    finish_downloads(run, *f.part, f.results);
    cl_call([&] { return ErrorContext{.api_call = "clWaitForEvents", .device = w.info().name}; },
            [&] { f.end.wait(); });
    chunk_done(run, w, *f.part);
    flight.pop_front();
    two_in_flight = true;
  };
  start_taking(run, w);
  if (run.schedule.run->all_cut_before_run()) return drive_cut_before_run(run, w);
  try {
    for (std::size_t i = 0;; ++i) {
      PartState* p = i < w.parts.size() ? w.parts[i] : take_chunk(run, w);
      // Nothing while chunks are in flight: ask again once one has ended (a policy may size what
      // it gives by what the queue holds); nothing with none in flight ends the worker.
      while (!p && !flight.empty()) {
        complete();
        p = take_chunk(run, w);
      }
      if (!p) break;
      InFlight& f = flight.emplace_back();
      f.part = p;
      upload(run, *p);
      NodeContext ctx(run);
      interpret(ctx, w, {p}, run.root, {});
      // Begun downloads pay off only for a chunk that waits while the next one runs; one completed
      // at once (the slot's first) downloads as a streamed partition does, its pieces copied out
      // while the next ones move (docs/decisions/027).
      download(run, *p, two_in_flight ? &f.results : nullptr);
      cl_call([&] { return ErrorContext{.api_call = "clEnqueueMarkerWithWaitList", .device = w.info().name}; }, [&] {
        w.queue().enqueueMarkerWithWaitList(nullptr, &f.end);
        w.queue().flush();
      });
      if (flight.size() == 2 || !two_in_flight) complete();
    }
    while (!flight.empty()) complete();
  } catch (...) {
    for (auto& f : flight) abandon_downloads(w, f.results);
    throw;
  }
}

// Waits for a worker's queue and unmaps what download() left mapped; the worker's end. A request
// without CPU work leaves the host's cores idle: its waits need not nap.
void finish(RunState& run, Worker& w) {
  cl_call([&] { return ErrorContext{.api_call = "clFinish", .device = w.info().name}; }, [&] {
    drain(w.queue(), w.info().discrete, run.env.wait, run.workers.cpu_work);
    unmap_deferred(w);
  });
  w.host_end_ms = run.now_ms();
  w.drained = true;
}

// Drives one queue's worker through its partitions, on its own thread.
void work(RunState& run, Worker& w) {
  w.host_start_ms = run.now_ms();
  try {
    run.replicas->upload(w);
    if (run.replicas->any()) run.workers.barrier->arrive_and_wait();  // replicas are shared by a context's queues
    if (run.schedule.takes_chunks()) {
      drive_chunks(run, w);
    } else if (run.an.streamable) {
      for (PartState* p : w.parts) enqueue_streamed(run, w, *p, w.info().discrete);
    } else {
      for (PartState* p : w.parts) upload(run, *p);
      // Halo units of a vector the tree writes come from the host once, before the first
      // exchange: every worker's must have arrived before any worker's results go back there (a
      // one-iteration loop meets no exchange barrier before its download).
      if (run.an.exchanges_halos && run.workers.list.size() > 1) {
        w.queue().finish();
        run.workers.barrier->arrive_and_wait();
      }
      NodeContext ctx(run);
      interpret(ctx, w, w.parts, run.root, {});
      // Where the user's memory is a context's replica (Replicas::in_user_memory), its kernels
      // read the other partitions' units there until they are done: no result goes back before.
      if (run.replicas->any_in_user_memory() && run.workers.list.size() > 1) {
        w.queue().finish();
        run.workers.barrier->arrive_and_wait();
      }
      for (PartState* p : w.parts) download(run, *p);
    }
    w.host_enqueued_ms = run.now_ms();
    finish(run, w);
  } catch (const BarrierAborted&) {
    // another worker failed; its error is the one reported
  } catch (...) {
    run.keep_error(naming_leaves(w.leaves_run));
    run.workers.barrier->abort();
  }
}

// What the feeding rule (exec/feeding.hpp) reads of the run: whether every partitioned vector
// bound to it is a resident array's piece on its partition's device (exec/residency.hpp: no
// partition uploads or downloads a slice, so a device's queues have no transfers to overlap with
// its kernels), and whether one is.
FeedShape feed_shape(const RunState& run) {
  FeedShape shape{.streamable = run.an.streamable,
                  .takes_chunks = run.schedule.takes_chunks(),
                  .replicas = run.replicas->any(),
                  .queues = run.workers.list.size(),
                  .all_slices_resident = true};
  if (!shape.streamable || shape.takes_chunks || shape.replicas) return shape;  // (the rule reads no more)
  shape.all_direct = all_direct(run);
  for (const auto& w : run.workers.list) {
    shape.runs_at_enqueue = shape.runs_at_enqueue || w.device->runs_at_enqueue();
    shape.several_devices = shape.several_devices || w.device != run.workers.list.front().device;
  }
  if (shape.several_devices) return shape;  // (fed by one thread whatever the residency)
  for (const auto& u : run.an.vectors)
    if (u.partitioned && u.bound())
      for (const PartState& ps : run.workers.parts) {
        const bool held = run.residency.holds(ps, u);
        shape.all_slices_resident = shape.all_slices_resident && held;
        shape.any_slice_resident = shape.any_slice_resident || held;
        if (!shape.all_slices_resident && shape.any_slice_resident) return shape;  // (both known)
      }
  return shape;
}

// The CPUs' partitions first, so that they start at once, then the discrete devices' chunks dealt
// round their queues, each flushed. Then the calling thread waits for every device: for the
// discrete devices as wait_for_ends() says, then for the CPUs. A CPU that ends first is timed by
// its driver's callback, so the report (and the balancer) see each device's own end. (A pool
// thread per device waiting instead, woken while PoCL's threads hold every core, runs late, and
// the request then waits for it to hand over: docs/decisions/028.)
void feed_then_wait(RunState& run) {
  std::vector<Worker*> order;
  for (const bool discrete : {false, true})
    for (auto& w : run.workers.list)
      if (w.info().discrete == discrete) order.push_back(&w);
  const double start = run.now_ms();
  for (Worker* w : order) w->host_start_ms = start;
  run.workers.defer_unmaps = true;
  try {
    std::size_t rounds = 0;
    for (Worker* w : order) rounds = std::max(rounds, w->parts.size());
    for (std::size_t r = 0; r < rounds; ++r)
      for (Worker* w : order) {
        if (r >= w->parts.size()) continue;
        const auto t0 = std::chrono::steady_clock::now();
        enqueue_streamed(run, *w, *w->parts[r], /*flush=*/true);
        // A driver that ran the partition before returning (its enqueue took long and the queue
        // is already empty): later requests feed by threads once two have shown it (a first
        // launch may compile the kernel and then run it quickly).
        if (!w->info().discrete && std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(2)) {
          cl::Event marker;
          w->queue().enqueueMarkerWithWaitList(nullptr, &marker);
          if (marker.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) w->device->note_ran_at_enqueue();
        }
      }
    // Each queue's end: a marker (it completes after every command before it); the CPUs' ends
    // are called back.
    std::vector<std::unique_ptr<EventCompletion>> ends(order.size());
    CallbackEnds cpus(run.start);
    std::vector<std::optional<std::size_t>> watched(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      Worker& w = *order[i];
      cl::Event marker;
      cl_call([&] { return ErrorContext{.api_call = "clEnqueueMarkerWithWaitList", .device = w.info().name}; }, [&] {
        w.queue().enqueueMarkerWithWaitList(nullptr, &marker);
        w.queue().flush();
      });
      ends[i] = std::make_unique<EventCompletion>(marker);
      if (!w.info().discrete) watched[i] = cpus.watch(marker);
    }
    const double enqueued = run.now_ms();
    for (Worker* w : order) w->host_enqueued_ms = enqueued;
    // A queue that has ended: unmapped, timed (a CPU's by its callback, when it came first).
    auto settle = [&](std::size_t i) {
      Worker& w = *order[i];
      cl_call([&] { return ErrorContext{.api_call = "clWaitForEvents", .device = w.info().name}; }, [&] {
        unmap_deferred(w);
      });
      double end = run.now_ms();
      if (watched[i])
        if (auto called = cpus.ms(*watched[i])) end = std::min(end, *called);
      w.host_end_ms = std::max(end, w.host_enqueued_ms);
      w.drained = true;
    };
    std::vector<QueueEnd> discrete;
    std::vector<std::size_t> discrete_index;
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i]->info().discrete) {
        discrete.push_back({ends[i].get(), order[i]->runtime_index});
        discrete_index.push_back(i);
      }
    cl_call([] { return ErrorContext{.api_call = "clWaitForEvents"}; }, [&] {
      wait_for_ends(discrete, cpus, run.env.wait, [&](std::size_t k) { settle(discrete_index[k]); });
    });
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i]->info().discrete) continue;
      cl_call([&] { return ErrorContext{.api_call = "clWaitForEvents", .device = order[i]->info().name}; },
              [&] { ends[i]->wait(); });
      settle(i);
    }
  } catch (...) {
    run.keep_error(naming_leaves(run.workers.list.front().leaves_run));  // ~RunState waits for what was enqueued
  }
}

}  // namespace

void drive(RunState& run) {
  run.workers.barrier.emplace(run.workers.list.size());
  if (fed_by_one_thread(feed_shape(run))) {
    feed_then_wait(run);
    return;
  }
  // One host thread per queue. The calling thread drives the first worker; pool threads the
  // others.
  std::vector<std::future<void>> others;
  try {
    for (std::size_t i = 1; i < run.workers.list.size(); ++i)
      others.push_back(run.env.threads->submit([&run, &w = run.workers.list[i]] { work(run, w); }));
  } catch (...) {
    run.keep_error();
    run.workers.barrier->abort();  // the workers started meet no one at a barrier
  }
  if (others.size() + 1 == run.workers.list.size()) work(run, run.workers.list[0]);
  for (auto& f : others) f.get();  // work() keeps its exceptions in the run
  if (!run.error()) run.schedule.run->finished(run.now_ms());
}

}  // namespace sinew::detail
