// exec/executor.cpp — one execution request over a decomposition: buffers, transfers, leaves,
// loops, reductions, replicated-data synchronisation and per-partition timing.
#include "exec/executor.hpp"

#include "exec/barrier.hpp"
#include "exec/reduce.hpp"
#include "exec/trace.hpp"
#include "platform/error.hpp"

#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <set>
#include <future>

namespace sinew::detail {
namespace {

struct TimedEvent {
  cl::Event event;
  const std::string* path;
  bool kernel;
};

// Per partition state of one map_reduce node.
struct ReduceSlot {
  cl::Kernel* kernel = nullptr;
  cl::Buffer partials;  // one value per work-group of the first pass
  cl::Buffer result;    // the partition's value
  std::vector<unsigned char> host;
  std::size_t local = 1, groups = 1;
};

struct Worker;

// One partition: its slices of the vectors, its reductions, its profiling events.
struct PartState {
  const Partition* part = nullptr;
  Worker* worker = nullptr;
  std::map<const VectorState*, cl::Buffer> slices;
  std::map<const NodeImpl*, cl::Kernel*> kernels;
  std::map<const NodeImpl*, std::size_t> local_sizes;  // kernels with a local-size multiple
  std::map<const NodeImpl*, ReduceSlot> reduce;
  std::vector<TimedEvent> events;
  std::vector<std::pair<cl::Buffer, void*>> maps;  // zero-copy results mapped, to unmap after the wait
};

// One queue (a GPU's overlap queue, a CPU or one of its sub-devices) and the host thread that
// drives it through its partitions.
struct Worker {
  Device* device = nullptr;
  std::size_t runtime_index = 0;  // the device's index in Runtime::devices()
  cl::Context context;
  cl::Device cl_device;
  unsigned sub_device = 0, queue_index = 0;
  bool zero_copy = false;  // host-unified CPU device: buffers use the host memory directly
  std::unique_ptr<QueueSlot> slot;
  std::vector<PartState*> parts;
  // Walking the tree: identical in every worker, since all walk the same tree.
  std::set<const VectorState*> dirty;  // slices written since the replicas were synced
  std::set<const NodeImpl*> pending;   // map_reduce values read back but not combined
  double host_start_ms = 0;            // when this worker's thread began, in the run
  double host_enqueued_ms = 0;         // when it had enqueued everything (then it waits)
  double host_end_ms = 0;              // when its queue had finished everything
  bool drained = false;                // its queue finished without an error
  cl::CommandQueue& queue() { return slot->queue; }
  const DeviceInfo& info() const { return device->info(); }
};

struct ContextState {
  cl::Context context;
  std::vector<Worker*> workers;
  std::map<const VectorState*, cl::Buffer> whole;
};

std::size_t floor_pow2(std::size_t x) {
  std::size_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

class Run {
 public:
  Run(Environment& env, const NodeImpl& root, const Analysis& an, const Decomposition& dec, bool profile)
      : env_(env), root_(root), an_(an), dec_(dec), profile_(profile) {}

  ~Run() {
    for (auto& w : workers_) {
      if (!w.slot) continue;
      if (!w.drained) {
        try {
          w.queue().finish();  // nothing may still touch host memory once the request is over
        } catch (...) {
        }
        try {
          unmap_deferred(w);
        } catch (...) {
        }
      }
      env_.queues->release(w.cl_device, std::move(w.slot));
    }
    for (auto& b : pooled_) env_.buffers->release(b.context, b.bytes, std::move(b.buffer), b.limit);
  }

  Report go() {
    start_ = std::chrono::steady_clock::now();
    if (!paths_) throw std::logic_error("sinew: an analysis without node paths");
    prepare();
    prepared_ms_ = now_ms();
    barrier_.emplace(workers_.size());
    if (fed_by_one_thread()) {
      feed_then_wait();
    } else {
      // One host thread per queue, so that a blocking transfer or library call on one queue
      // never holds back the others, and each queue's end is seen as it comes. The calling
      // thread drives the first worker; pool threads the others.
      std::vector<std::future<void>> others;
      try {
        for (std::size_t i = 1; i < workers_.size(); ++i)
          others.push_back(env_.threads->submit([this, &w = workers_[i]] { work(w); }));
      } catch (...) {
        keep_error();
        barrier_->abort();  // the workers started meet no one at a barrier
      }
      if (others.size() + 1 == workers_.size()) work(workers_[0]);
      for (auto& f : others) f.get();  // work() keeps its exceptions in error_
    }
    if (error_) std::rethrow_exception(error_);
    for (const NodeImpl* n : workers_.front().pending) finalize(*n);
    const double joined_ms = now_ms();
    Report rep = report();
    rep.wall_ms = now_ms();
    if (!env_.trace.empty()) write_chrome_trace(env_.trace, trace_records(joined_ms, rep.wall_ms), env_.log);
    return rep;
  }

 private:
  double now_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

  // Drives one queue's worker through its partitions.
  void work(Worker& w) {
    w.host_start_ms = now_ms();
    try {
      upload_replicas(w);
      if (has_replicas_) barrier_->arrive_and_wait();  // replicas are shared by a context's queues
      if (an_.streamable) {
        for (PartState* p : w.parts) enqueue_streamed(w, *p, w.info().discrete);
      } else {
        for (PartState* p : w.parts) upload(*p);
        exec(root_, w, w.parts, 0, 0);
        for (PartState* p : w.parts) download(*p);
      }
      w.host_enqueued_ms = now_ms();
      finish(w);
    } catch (const BarrierAborted&) {
      // another worker failed; its error is the one reported
    } catch (...) {
      keep_error();
      barrier_->abort();
    }
  }

  // One partition of a streamed tree: partitions are independent, each runs the whole tree, so
  // a queue pipelines them (while one partition computes, the next one's data is already
  // moving); `flush`: so that the device starts at once.
  void enqueue_streamed(Worker& w, PartState& p, bool flush) {
    upload(p);
    exec(root_, w, {&p}, 0, 0);
    download(p);
    if (flush) w.queue().flush();
  }

  // Waits for a worker's queue and unmaps what download() left mapped; the worker's end. A
  // request without CPU work leaves the host's cores idle: its waits need not nap.
  void finish(Worker& w) {
    cl_call([&] { return ErrorContext{.api_call = "clFinish", .device = w.info().name}; }, [&] {
      drain(w.queue(), w.info().discrete, env_.wait, cpu_work_);
      unmap_deferred(w);
    });
    w.host_end_ms = now_ms();
    w.drained = true;
  }

  void keep_error() {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }

  // A streamed tree over several devices whose transfers are all direct (pinned memory for the
  // discrete devices, the host memory itself for CPUs) enqueues nothing that blocks: the calling
  // thread enqueues every partition, as hand-written OpenCL does (threads that enqueue only once
  // woken, while a CPU device's work-groups already fill the cores, started the GPU late: 60% CPU
  // saxpy splits were 12-17% slower than hand-written on the H100 machine). Not for a device
  // whose driver runs commands as they are enqueued (PoCL's "basic"): it would hold the others.
  bool fed_by_one_thread() const {
    if (!an_.streamable || has_replicas_ || workers_.size() < 2 || !all_direct()) return false;
    bool several = false;
    for (const auto& w : workers_) {
      if (w.device->runs_at_enqueue()) return false;
      several = several || w.device != workers_.front().device;
    }
    return several;
  }

  // The CPUs' partitions first, so that they start at once, then the discrete devices' chunks
  // dealt round their queues, each flushed. Then the calling thread waits for every device: for
  // the discrete devices, napping while a CPU computes, then for the CPUs. A CPU that ends first
  // is timed by its driver's callback, and the discrete queues are polled together, so the
  // report (and the balancer) see each device's own end. (A pool thread per device waiting
  // instead cost 60% CPU saxpy splits of 10M floats 4-6% on the H100 machine: woken while PoCL's
  // threads held every core, it ran hundreds of microseconds late, and the request then waited
  // for it to hand over.)
  void feed_then_wait() {
    std::vector<Worker*> order;
    for (const bool discrete : {false, true})
      for (auto& w : workers_)
        if (w.info().discrete == discrete) order.push_back(&w);
    const double start = now_ms();
    for (Worker* w : order) w->host_start_ms = start;
    defer_unmaps_ = true;
    try {
      std::size_t rounds = 0;
      for (Worker* w : order) rounds = std::max(rounds, w->parts.size());
      for (std::size_t r = 0; r < rounds; ++r)
        for (Worker* w : order) {
          if (r >= w->parts.size()) continue;
          PartState* p = w->parts[r];
          const auto t0 = std::chrono::steady_clock::now();
          enqueue_streamed(*w, *p, /*flush=*/true);
          // A driver that ran the partition before returning (its enqueue took long and the
          // queue is already empty): later requests feed by threads once two have shown it (a
          // first launch may compile the kernel and then run it quickly).
          if (!w->info().discrete && std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(2)) {
            cl::Event marker;
            w->queue().enqueueMarkerWithWaitList(nullptr, &marker);
            if (marker.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) w->device->note_ran_at_enqueue();
          }
        }
      // Each queue's end: a marker (it completes after every command before it); the CPUs'
      // ends are called back.
      std::vector<cl::Event> ends(order.size());
      CallbackEnds cpus(start_);
      std::vector<std::optional<std::size_t>> watched(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        Worker& w = *order[i];
        cl_call([&] { return ErrorContext{.api_call = "clEnqueueMarkerWithWaitList", .device = w.info().name}; }, [&] {
          w.queue().enqueueMarkerWithWaitList(nullptr, &ends[i]);
          w.queue().flush();
        });
        if (!w.info().discrete) watched[i] = cpus.watch(ends[i]);
      }
      const double enqueued = now_ms();
      for (Worker* w : order) w->host_enqueued_ms = enqueued;
      auto where = [&](std::size_t i) {
        return [&, i] { return ErrorContext{.api_call = "clWaitForEvents", .device = order[i]->info().name}; };
      };
      // A queue's end: unmapped, timed (a CPU's by its callback, when it came first).
      auto settle = [&](std::size_t i) {
        Worker& w = *order[i];
        cl_call(where(i), [&] {
          ends[i].wait();
          unmap_deferred(w);
        });
        double end = now_ms();
        if (watched[i])
          if (auto called = cpus.ms(*watched[i])) end = std::min(end, *called);
        w.host_end_ms = std::max(end, w.host_enqueued_ms);
        w.drained = true;
      };
      // The discrete queues: every one polled while a CPU computes, napping between polls (a
      // thread spinning in NVIDIA's wait beside a CPU device cost 60% CPU saxpy splits of
      // 50M-100M floats 4-7% on the H100 machine), so each is timed as it ends. Once no CPU
      // computes, the queues of one device are waited for in its driver (only the last one's end
      // counts); several devices' are polled, yielding.
      std::vector<std::size_t> pending;
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i]->info().discrete) pending.push_back(i);
      auto pause = std::chrono::microseconds(20);
      while (!pending.empty()) {
        std::erase_if(pending, [&](std::size_t i) {
          if (!cl_call(where(i), [&] { return ended(ends[i]); })) return false;
          settle(i);
          return true;
        });
        if (pending.empty()) break;
        if (cpus.running()) {
          cpus.nap(pause);
          pause = std::min(pause * 2, std::chrono::microseconds(100));
        } else if (std::all_of(pending.begin(), pending.end(),
                               [&](std::size_t i) { return order[i]->device == order[pending.front()]->device; })) {
          for (std::size_t i : pending) {
            if (env_.wait == WaitMode::poll) cl_call(where(i), [&] { wait_for(ends[i], env_.wait); });
            settle(i);
          }
          pending.clear();
        } else {
          std::this_thread::yield();
        }
      }
      for (std::size_t i = 0; i < order.size(); ++i)
        if (!order[i]->info().discrete) settle(i);
    } catch (...) {
      keep_error();  // ~Run waits for what was enqueued
    }
  }

  // The zero-copy results mapped by download(), unmapped once the queue has finished.
  void unmap_deferred(Worker& w) {
    bool any = false;
    for (PartState* p : w.parts)
      while (!p->maps.empty()) {
        auto [buffer, ptr] = std::move(p->maps.back());
        p->maps.pop_back();  // once tried, never again
        w.queue().enqueueUnmapMemObject(buffer, ptr);
        any = true;
      }
    if (any) w.queue().finish();
  }

  // ----- preparation: queues, programs, kernels, limits, buffers ----------------------------

  void prepare() {
    // Partitions that share a (device, sub-device, queue) share a worker; workers in that order.
    std::set<std::tuple<std::size_t, unsigned, unsigned>> keys;
    for (const auto& p : dec_.parts) keys.emplace(p.device, p.sub_device, p.queue);
    workers_.resize(keys.size());
    std::size_t i = 0;
    for (const auto& key : keys) {
      auto& w = workers_[i++];
      w.runtime_index = std::get<0>(key);
      w.device = env_.devices.at(w.runtime_index);
      w.sub_device = std::get<1>(key);
      w.queue_index = std::get<2>(key);
      const auto& info = w.info();
      if (!info.discrete) {
        const auto& fs = w.device->fission(dec_.config.fission);
        w.context = fs.context;
        w.cl_device = fs.devices.at(w.sub_device);
      } else {
        w.context = w.device->context();
        w.cl_device = w.device->device();
      }
      w.zero_copy = !info.discrete && info.host_unified_memory;
      w.slot = env_.queues->acquire(w.context, w.cl_device, profile_);
      w.slot->staging.wait = env_.wait;
    }
    parts_.resize(dec_.parts.size());
    for (std::size_t i = 0; i < dec_.parts.size(); ++i) {
      auto& ps = parts_[i];
      ps.part = &dec_.parts[i];
      for (auto& w : workers_)
        if (w.runtime_index == ps.part->device && w.sub_device == ps.part->sub_device && w.queue_index == ps.part->queue)
          ps.worker = &w;
      ps.worker->parts.push_back(&ps);
    }
    for (auto& w : workers_) {
      auto [it, inserted] = contexts_.try_emplace(w.context(), ContextState{w.context, {}, {}});
      it->second.workers.push_back(&w);
    }
    check_memory();
    cpu_work_ = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.info().discrete; });
    // Programs and kernel objects once per worker (its partitions share its queue), what
    // depends on a partition's size once per partition.
    visit(root_, [&](const NodeImpl& n) {
      const std::string& path = paths_->at(&n);
      for (auto& w : workers_) {
        if (n.kind == NodeKind::kernel) prepare_kernel(w, n, path);
        if (n.kind == NodeKind::map_reduce) prepare_reduce(w, n, path);
      }
    });
    cl_call({.api_call = "clCreateBuffer"}, [&] { allocate(); });
  }

  std::vector<cl::Device> context_devices(const cl::Context& c) { return c.getInfo<CL_CONTEXT_DEVICES>(); }

  // Every slice and replica fits the device's largest allocation, and all of them its memory.
  void check_memory() {
    std::map<const Device*, std::uint64_t> total;
    std::set<std::pair<const Device*, const VectorState*>> replicas;
    for (auto& ps : parts_) {
      const auto& info = ps.worker->info();
      for (const auto& u : an_.vectors) {
        const std::uint64_t esize = u.vector->type.size;
        auto check = [&](std::uint64_t bytes, const char* what) {
          if (bytes > info.max_alloc)
            throw_error(errc::invalid_argument,
                        std::string(what) + " of vector '" + u.vector->name + "' needs " + std::to_string(bytes) +
                            " bytes, more than the device's largest allocation (" + std::to_string(info.max_alloc) + ")",
                        {.argument = "vector '" + u.vector->name + "'", .device = info.name,
                         .fix = "give this device a smaller share, or split the data over more devices"});
          total[ps.worker->device] += bytes;
        };
        if (u.partitioned) check(ps.part->units * u.vector->unit * esize, "the slice");
        if (u.read_whole && replicas.emplace(ps.worker->device, u.vector.get()).second)
          check(u.elements * esize, "the replica");
      }
    }
    for (const auto& [dev, bytes] : total)
      if (bytes > dev->info().global_memory)
        throw_error(errc::invalid_argument,
                    "the device's partitions need " + std::to_string(bytes) + " bytes of device memory, more than it has (" +
                        std::to_string(dev->info().global_memory) + ")",
                    {.device = dev->info().name, .fix = "give this device a smaller share, or use more devices"});
  }

  // The queue's kernel object for a leaf, with what the driver says about it; built (or found
  // in the program cache) on the queue's first request for this source.
  const QueueSlot::Leaf& leaf_kernel(Worker& w, const NodeImpl& n, const std::string& path) {
    QueueSlot::LeafKey key{n.source.get(), n.entry, n.build_options};
    if (auto it = w.slot->leaves.find(key); it != w.slot->leaves.end()) return it->second;
    ErrorContext where{.node = path, .device = w.info().name, .kernel_file = n.source->origin};
    auto program = env_.programs->get(w.context, context_devices(w.context), {n.source->text, n.source->origin},
                                      n.build_options, where);
    QueueSlot::Leaf leaf;
    leaf.source = n.source;
    try {
      leaf.kernel = &w.slot->kernel(program, n.entry);
    } catch (const cl::Error& e) {
      where.api_call = "clCreateKernel";
      where.fix = "check the entry name '" + n.entry + "' against the __kernel functions of " + n.source->origin;
      throw_cl(e, where);
    }
    leaf.parameters = leaf.kernel->getInfo<CL_KERNEL_NUM_ARGS>();
    leaf.work_group = leaf.kernel->getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(w.cl_device);
    return w.slot->leaves.emplace(std::move(key), std::move(leaf)).first->second;
  }

  void prepare_kernel(Worker& w, const NodeImpl& n, const std::string& path) {
    const QueueSlot::Leaf& leaf = leaf_kernel(w, n, path);
    cl::Kernel* k = leaf.kernel;
    const cl_uint nargs = leaf.parameters;
    if (nargs != n.args.size())
      throw_error(errc::invalid_argument,
                  "the kernel '" + n.entry + "' has " + std::to_string(nargs) + " parameters but " +
                      std::to_string(n.args.size()) + " arguments were given",
                  {.node = path, .argument = "arguments", .device = w.info().name,
                   .fix = "give .args(...) one argument per kernel parameter, in order"});
    const std::size_t kernel_wg = leaf.work_group;
    if (!n.local_size.empty()) {
      std::size_t prod = 1;
      for (auto l : n.local_size) prod *= l;
      if (prod > kernel_wg)
        throw_error(errc::invalid_argument,
                    "required work-group size " + std::to_string(prod) + " exceeds what the kernel can use on this device (" +
                        std::to_string(kernel_wg) + ")",
                    {.node = path, .argument = "local_size", .device = w.info().name,
                     .fix = "use a work-group of at most " + std::to_string(kernel_wg) + " work-items"});
    }
    const std::size_t limit = std::min(kernel_wg, w.info().max_work_group_size);
    for (PartState* ps : w.parts) {
      ps->kernels[&n] = k;
      if (!n.local_multiple) continue;
      const std::size_t l = local_for(*ps, n, limit);
      if (l == 0)
        throw_error(errc::invalid_argument,
                    "no work-group size that is a multiple of " + std::to_string(n.local_multiple) +
                        " divides this partition's range",
                    {.node = path, .argument = "local_multiple", .device = w.info().name,
                     .fix = "make the size a multiple of " + std::to_string(n.local_multiple) + " work-items"});
      ps->local_sizes[&n] = l;
    }
  }

  // Work-group size for a kernel with a local-size multiple: the largest multiple of it that
  // divides the partition's range and is at most `limit`; 0 if none.
  static std::size_t local_for(const PartState& ps, const NodeImpl& n, std::size_t limit) {
    auto g = global_range(n, n.range()->unit, ps.part->units);
    for (std::size_t l = limit / n.local_multiple * n.local_multiple; l >= n.local_multiple; l -= n.local_multiple)
      if (g[0] % l == 0) return l;
    return 0;
  }

  void prepare_reduce(Worker& w, const NodeImpl& n, const std::string& path) {
    const Reducer& r = *n.reducer;
    const ElementType& t = r.input->type;
    if (!t.known())
      throw_error(errc::invalid_argument, "a reduction needs an OpenCL element type; '" + r.input->name + "' is opaque",
                  {.node = path, .argument = "reducer", .fix = "reduce a vector of an OpenCL type (float, int2, ...)"});
    ErrorContext where{.node = path + "/reduce", .device = w.info().name,
                       .kernel_file = r.op == Reducer::Op::custom ? r.origin : "reduce.cl"};
    auto program = env_.programs->get(w.context, context_devices(w.context),
                                      {reduce_source(r, t), where.kernel_file}, "", where);
    cl::Kernel* kernel = &w.slot->kernel(program, "sinew_reduce");
    const std::size_t local = floor_pow2(std::min<std::size_t>(
        {256, w.info().max_work_group_size, kernel->getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(w.cl_device)}));
    for (PartState* ps : w.parts) {
      ReduceSlot rs;
      rs.kernel = kernel;
      rs.local = local;
      const std::size_t n_elems = ps->part->units * r.input->unit;
      rs.groups = std::max<std::size_t>(1, std::min<std::size_t>(64, (n_elems + rs.local - 1) / rs.local));
      rs.partials = cl::Buffer(w.context, CL_MEM_READ_WRITE, rs.groups * t.size);
      rs.result = cl::Buffer(w.context, CL_MEM_READ_WRITE, t.size);
      rs.host.resize(t.size);
      ps->reduce[&n] = std::move(rs);
    }
  }

  // Slices per partition, replicas per context. On a host-unified device a bound vector's slice
  // is the user's memory itself (zero copy); replicas are too, unless the tree writes the vector.
  void allocate() {
    for (auto& ps : parts_) {
      Worker& w = *ps.worker;
      for (const auto& u : an_.vectors) {
        if (!u.partitioned) continue;
        const std::size_t bytes = slice_bytes(ps, u);
        if (w.zero_copy && u.binding) {
          cl_mem_flags flags = CL_MEM_USE_HOST_PTR | (u.written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
          ps.slices[u.vector.get()] = cl::Buffer(w.context, flags, bytes, host_of(u) + slice_offset(ps, u));
        } else {
          ps.slices[u.vector.get()] = device_buffer(w.context, bytes, w.info());
        }
      }
    }
    for (auto& [handle, cs] : contexts_) {
      for (const auto& u : an_.vectors) {
        if (!u.read_whole) continue;
        has_replicas_ = true;
        const std::size_t bytes = u.elements * u.vector->type.size;
        if (cs.workers.front()->zero_copy && u.binding && !u.written)
          cs.whole[u.vector.get()] = cl::Buffer(cs.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, bytes, host_of(u));
        else
          cs.whole[u.vector.get()] = device_buffer(cs.context, bytes, cs.workers.front()->info());
      }
    }
  }

  // A device buffer from the runtime's pool, returned to it when the request ends.
  cl::Buffer device_buffer(const cl::Context& context, std::size_t bytes, const DeviceInfo& info) {
    cl::Buffer b = env_.buffers->acquire(context, bytes);
    pooled_.push_back({context, bytes, b, static_cast<std::size_t>(info.global_memory / 2)});
    return b;
  }

  // ----- transfers --------------------------------------------------------------------------

  std::size_t slice_offset(const PartState& ps, const VectorUse& u) const {
    return ps.part->first * u.vector->unit * u.vector->type.size;
  }
  std::size_t slice_bytes(const PartState& ps, const VectorUse& u) const {
    return ps.part->units * u.vector->unit * u.vector->type.size;
  }
  char* host_of(const VectorUse& u) const { return static_cast<char*>(u.binding->data); }

  // Where a command's event goes: nowhere unless the request is profiled (an event is a driver
  // object per command, which only the report and the trace read).
  cl::Event* event_of(cl::Event& ev) const { return profile_ ? &ev : nullptr; }
  cl_event* event_of(cl_event& ev) const { return profile_ ? &ev : nullptr; }  // for the libraries' C calls

  // Keeps a command's event for the report and the trace (profiled requests only).
  void track(PartState& ps, cl::Event ev, const std::string* path, bool kernel) {
    if (!profile_) return;
    ps.events.push_back({std::move(ev), path, kernel});
  }

  // Host -> device for a discrete device: pinned staging for pageable memory, straight DMA for
  // memory from Runtime::pinned. Returns once `host` has been read (or the DMA is queued).
  void to_device(PartState& ps, const cl::Buffer& buf, std::size_t offset, const void* host, std::size_t bytes,
                 const std::string* label) {
    Worker& w = *ps.worker;
    if (staged(host, bytes)) {
      std::vector<cl::Event> events;
      w.slot->staging.upload(w.queue(), buf, offset, host, bytes, events);
      for (auto& ev : events) track(ps, ev, label, false);
    } else {
      cl::Event ev;
      w.queue().enqueueWriteBuffer(buf, CL_FALSE, offset, bytes, host, nullptr, event_of(ev));
      track(ps, ev, label, false);
    }
  }

  // Device -> host; the data is in `host` once the worker's queue has finished.
  void to_host(PartState& ps, const cl::Buffer& buf, std::size_t offset, void* host, std::size_t bytes,
               const std::string* label) {
    Worker& w = *ps.worker;
    if (staged(host, bytes)) {
      std::vector<cl::Event> events;
      w.slot->staging.download(w.queue(), buf, offset, host, bytes, events);
      for (auto& ev : events) track(ps, ev, label, false);
    } else {
      cl::Event ev;
      w.queue().enqueueReadBuffer(buf, CL_FALSE, offset, bytes, host, nullptr, event_of(ev));
      track(ps, ev, label, false);
    }
  }

  // Every partitioned vector moves between host and discrete devices without staging.
  bool all_direct() const {
    for (const auto& u : an_.vectors)
      if (u.partitioned && u.binding && staged(host_of(u), u.elements * u.vector->type.size)) return false;
    return true;
  }

  bool staged(const void* host, std::size_t bytes) const {
    return env_.transfer == TransferMode::staged && !(env_.is_pinned && env_.is_pinned(host, bytes));
  }

  // The first worker of each context fills the context's replicas.
  void upload_replicas(Worker& w) {
    static const std::string upload_path = "upload";
    ContextState& cs = contexts_.at(w.context());
    if (cs.workers.front() != &w) return;
    cl_call({.api_call = "upload", .device = w.info().name}, [&] {
      bool wrote = false;
      for (const auto& u : an_.vectors) {
        if (!u.read_whole || !u.binding || (w.zero_copy && !u.written)) continue;
        to_device(*w.parts.front(), cs.whole.at(u.vector.get()), 0, host_of(u), u.elements * u.vector->type.size,
                  &upload_path);
        wrote = true;
      }
      if (wrote) w.queue().finish();  // other queues of the context read the replicas
    });
  }

  void upload(PartState& ps) {
    static const std::string upload_path = "upload";
    if (ps.worker->zero_copy) return;
    cl_call([&] { return ErrorContext{.api_call = "upload", .device = ps.worker->info().name}; }, [&] {
      for (const auto& u : an_.vectors) {
        if (!u.partitioned || !u.binding || !u.read_partitioned) continue;
        to_device(ps, ps.slices.at(u.vector.get()), 0, host_of(u) + slice_offset(ps, u), slice_bytes(ps, u),
                  &upload_path);
      }
    });
  }

  void download(PartState& ps) {
    static const std::string download_path = "download";
    Worker& w = *ps.worker;
    cl_call([&] { return ErrorContext{.api_call = "download", .device = w.info().name}; }, [&] {
      for (const auto& u : an_.vectors) {
        if (!u.partitioned || !u.binding || !u.written) continue;
        auto& buf = ps.slices.at(u.vector.get());
        const std::size_t bytes = slice_bytes(ps, u);
        if (w.zero_copy && w.info().host_pointer_aliased) {
          // The buffer is the host memory itself (probed): the results are there once the
          // queue has finished. (The map and unmap cost a 50M-float split some 40 us at its end.)
        } else if (w.zero_copy) {
          // The buffer is the host memory: mapping makes the device's writes visible there. The
          // in-order queue runs map then unmap; the worker's final wait covers both. One thread
          // feeding every device unmaps after the wait (PoCL's unmap waits for the map).
          void* p = w.queue().enqueueMapBuffer(buf, CL_FALSE, CL_MAP_READ, 0, bytes);
          if (defer_unmaps_) ps.maps.emplace_back(buf, p);
          else w.queue().enqueueUnmapMemObject(buf, p);
        } else {
          to_host(ps, buf, 0, host_of(u) + slice_offset(ps, u), bytes, &download_path);
        }
      }
    });
  }

  void finish_all() {
    for (auto& w : workers_) w.queue().finish();
  }

  // Gathers the slices of `v` written since its last synchronisation into every replica. Runs on
  // the last worker thread to arrive, while the others wait with idle queues.
  void sync_replicas(const VectorState* v) {
    static const std::string sync_path = "sync";
    const VectorUse& u = an_.use(v);
    cl_call({.api_call = "replica sync", .argument = "vector '" + v->name + "'"}, [&] {
      if (contexts_.size() > 1) {
        staging_[v].resize(u.elements * v->type.size);
        for (auto& ps : parts_)
          to_host(ps, ps.slices.at(v), 0, staging_[v].data() + slice_offset(ps, u), slice_bytes(ps, u), &sync_path);
        finish_all();
      }
      for (auto& [handle, cs] : contexts_) {
        auto& whole = cs.whole.at(v);
        for (auto& ps : parts_) {
          if (ps.worker->context() == handle) {
            cl::Event ev;
            ps.worker->queue().enqueueCopyBuffer(ps.slices.at(v), whole, 0, slice_offset(ps, u), slice_bytes(ps, u),
                                                 nullptr, event_of(ev));
            track(ps, ev, &sync_path, false);
          } else {
            to_device(*cs.workers.front()->parts.front(), whole, slice_offset(ps, u),
                      staging_[v].data() + slice_offset(ps, u), slice_bytes(ps, u), &sync_path);
          }
        }
      }
      finish_all();
    });
  }

  // ----- running the tree (on each worker's thread, over a group of its partitions) --------

  using Group = std::vector<PartState*>;

  void exec(const NodeImpl& n, Worker& w, const Group& group, std::size_t iteration, int loop_depth) {
    switch (n.kind) {
      case NodeKind::pipeline:
      case NodeKind::map:
        for (const auto& c : n.children) exec(*c, w, group, iteration, loop_depth);
        return;
      case NodeKind::map_reduce:
        exec(*n.children[0], w, group, iteration, loop_depth);
        for (PartState* p : group) enqueue_reduce(n, *p);
        w.pending.insert(&n);
        return;
      case NodeKind::loop:
        run_loop(n, w, group, loop_depth);
        return;
      default:
        break;
    }
    for (const auto& a : n.args) {
      if (a.kind != Arg::Kind::whole || !w.dirty.count(a.vector.get())) continue;
      // A replica is read after slices changed: every worker meets here and one syncs them all.
      w.queue().finish();
      barrier_->arrive_and_wait([&] { sync_replicas(a.vector.get()); });
      w.dirty.erase(a.vector.get());
    }
    const std::string& path = paths_->at(&n);
    for (PartState* p : group)
      cl_call([&] { return ErrorContext{.node = path, .device = w.info().name}; },
              [&] { enqueue_leaf(*p, n, path, iteration); });
    for (const auto& a : n.args)
      if (a.kind == Arg::Kind::partitioned && a.access != Access::read && an_.use(a.vector.get()).read_whole)
        w.dirty.insert(a.vector.get());
  }

  void run_loop(const NodeImpl& n, Worker& w, const Group& group, int loop_depth) {
    std::size_t i = 0;
    const bool predicate = n.until_result || n.until_state;
    for (;; ++i) {
      if (n.times && i >= n.times) break;
      exec(*n.children[0], w, group, i, loop_depth + 1);
      if (!predicate) continue;
      // The iteration barrier: the host evaluates the predicate over this iteration's results.
      w.queue().finish();
      barrier_->arrive_and_wait([&] {
        for (const NodeImpl* r : w.pending) finalize(*r);
        loop_done_ = evaluate(n, i);
      });
      w.pending.clear();
      if (loop_done_) {
        ++i;
        break;
      }
    }
    // Counted once: by the first worker, for its first partition (streaming runs loops per partition).
    if (loop_depth == 0 && &w == &workers_.front() && group.front() == w.parts.front()) iterations_ += i;
  }

  bool evaluate(const NodeImpl& n, std::size_t i) {
    if (n.until_result && n.until_value(results_.at(n.until_result->name))) return true;
    if (!n.until_state) return false;
    LoopState state;
    state.iteration = i + 1;
    state.lookup = [&](const ResultRef& r) -> const Value& {
      auto it = results_.find(r.name());
      if (it == results_.end())
        throw_error(errc::invalid_tree, "the loop predicate reads result '" + r.name() + "' that no map_reduce has produced yet",
                    {.node = paths_->at(&n), .fix = "read only results computed inside the loop body"});
      return it->second;
    };
    return n.until_state(state);
  }

  void enqueue_leaf(PartState& ps, const NodeImpl& n, const std::string& path, std::size_t iteration) {
    auto slice = [&](std::size_t i) -> cl::Buffer& { return ps.slices.at(n.args[i].vector.get()); };
    auto elems = [&](std::size_t i) { return ps.part->units * n.args[i].vector->unit; };
    cl::Event ev;
    switch (n.kind) {
      case NodeKind::kernel: {
        cl::Kernel& k = *ps.kernels.at(&n);
        for (cl_uint i = 0; i < n.args.size(); ++i) {
          const Arg& a = n.args[i];
          const VectorState* v = a.vector.get();
          switch (a.kind) {
            case Arg::Kind::partitioned: k.setArg(i, ps.slices.at(v)); break;
            case Arg::Kind::whole: k.setArg(i, contexts_.at(ps.worker->context()).whole.at(v)); break;
            case Arg::Kind::scalar: k.setArg(i, a.bytes.size(), a.bytes.data()); break;
            case Arg::Kind::local: k.setArg(i, cl::Local(a.local_bytes)); break;
            case Arg::Kind::iteration: k.setArg(i, static_cast<cl_uint>(iteration)); break;
            case Arg::Kind::offset: k.setArg(i, static_cast<cl_uint>(ps.part->first * v->unit)); break;
            case Arg::Kind::count: k.setArg(i, static_cast<cl_uint>(ps.part->units * v->unit)); break;
            case Arg::Kind::size: k.setArg(i, static_cast<cl_uint>(an_.use(v).elements)); break;
          }
        }
        auto g = global_range(n, n.range()->unit, ps.part->units);
        cl::NDRange global = g.size() == 1 ? cl::NDRange(g[0]) : g.size() == 2 ? cl::NDRange(g[0], g[1])
                                                                                : cl::NDRange(g[0], g[1], g[2]);
        cl::NDRange local = cl::NullRange;
        const auto& l = n.local_size;
        if (!l.empty()) {
          local = l.size() == 1 ? cl::NDRange(l[0]) : l.size() == 2 ? cl::NDRange(l[0], l[1]) : cl::NDRange(l[0], l[1], l[2]);
        } else if (n.local_multiple) {
          const std::size_t l0 = ps.local_sizes.at(&n);
          local = g.size() == 1 ? cl::NDRange(l0) : g.size() == 2 ? cl::NDRange(l0, 1) : cl::NDRange(l0, 1, 1);
        }
        // A 1D range that is no multiple of the device's work-group multiple would leave the
        // driver only poor work-group sizes (1 for a prime count): launch the largest multiple,
        // then the few remaining work-items at a global offset.
        const std::size_t wgm = ps.worker->info().preferred_work_group_multiple;
        if (g.size() == 1 && l.empty() && !n.local_multiple && wgm > 1 && g[0] > wgm && g[0] % wgm) {
          const std::size_t main = g[0] - g[0] % wgm;
          cl::Event head;
          ps.worker->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(main), cl::NullRange, nullptr, event_of(head));
          track(ps, head, &path, true);
          ps.worker->queue().enqueueNDRangeKernel(k, cl::NDRange(main), cl::NDRange(g[0] - main), cl::NullRange, nullptr, event_of(ev));
        } else {
          ps.worker->queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr, event_of(ev));
        }
        break;
      }
      case NodeKind::copy:
        ps.worker->queue().enqueueCopyBuffer(slice(0), slice(1), 0, 0, elems(0) * n.args[0].vector->type.size, nullptr, event_of(ev));
        break;
      case NodeKind::axpy: {
        cl_command_queue q = ps.worker->queue()();
        cl_event e = nullptr;
        auto st = clblast::Axpy<float>(elems(0), n.alpha, slice(0)(), 0, 1, slice(1)(), 0, 1, &q, event_of(e));
        library_status(static_cast<int>(st), "clblast::Axpy", path, ps);
        ev = cl::Event(e);
        break;
      }
      case NodeKind::gemm: {
        cl_command_queue q = ps.worker->queue()();
        cl_event e = nullptr;
        const auto& b = contexts_.at(ps.worker->context()).whole.at(n.args[1].vector.get());
        auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                                       ps.part->units, n.gemm_n, n.gemm_k, n.alpha, slice(0)(), 0, n.gemm_k, b(), 0,
                                       n.gemm_n, n.beta, slice(2)(), 0, n.gemm_n, &q, event_of(e));
        library_status(static_cast<int>(st), "clblast::Gemm", path, ps);
        ev = cl::Event(e);
        break;
      }
      case NodeKind::fft: {
        auto plan = env_.fft->get(ps.worker->context, ps.worker->queue(), n.args[0].vector->unit, ps.part->units);
        cl_command_queue q = ps.worker->queue()();
        cl_event e = nullptr;
        cl_mem buf = slice(0)();
        std::lock_guard lock(env_.fft->enqueue_mutex());
        auto st = clfftEnqueueTransform(plan, n.direction == FftDirection::forward ? CLFFT_FORWARD : CLFFT_BACKWARD, 1,
                                        &q, 0, nullptr, event_of(e), &buf, nullptr, nullptr);
        library_status(static_cast<int>(st), "clfftEnqueueTransform", path, ps);
        ev = cl::Event(e);
        break;
      }
      default:
        return;
    }
    track(ps, ev, &path, true);
  }

  void library_status(int status, const char* call, const std::string& path, PartState& ps) {
    if (status != 0)
      throw_error(errc::library, std::string(call) + " failed with status " + std::to_string(status),
                  {.api_call = call, .node = path, .device = ps.worker->info().name});
  }

  // ----- reductions -------------------------------------------------------------------------

  void enqueue_reduce(const NodeImpl& n, PartState& ps) {
    const Reducer& r = *n.reducer;
    const ElementType& t = r.input->type;
    const auto identity = r.op == Reducer::Op::custom ? r.identity : identity_of(r.op, t);
    const std::string& path = paths_->at(&n);
    ReduceSlot& rs = ps.reduce.at(&n);
    cl_call([&] { return ErrorContext{.node = path + "/reduce", .device = ps.worker->info().name}; }, [&] {
      cl::Kernel& k = *rs.kernel;
      auto pass = [&](cl::Buffer& in, cl_uint count, cl::Buffer& out, std::size_t groups) {
        k.setArg(0, in);
        k.setArg(1, count);
        k.setArg(2, out);
        k.setArg(3, cl::Local(rs.local * t.size));
        k.setArg(4, identity.size(), identity.data());
        cl::Event ev;
        ps.worker->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * rs.local), cl::NDRange(rs.local),
                                        nullptr, event_of(ev));
        track(ps, ev, &path, true);
      };
      pass(ps.slices.at(r.input.get()), static_cast<cl_uint>(ps.part->units * r.input->unit), rs.partials, rs.groups);
      pass(rs.partials, static_cast<cl_uint>(rs.groups), rs.result, 1);
      cl::Event ev;
      ps.worker->queue().enqueueReadBuffer(rs.result, CL_FALSE, 0, t.size, rs.host.data(), nullptr, event_of(ev));
      track(ps, ev, &path, false);
    });
  }

  // Combines the partitions' values of a map_reduce into its result. Every partition's queue has
  // finished (called at a barrier or after the threads joined).
  void finalize(const NodeImpl& n) {
    const Reducer& r = *n.reducer;
    const ElementType& t = r.input->type;
    std::vector<std::vector<unsigned char>> values;
    for (auto& ps : parts_) values.push_back(ps.reduce.at(&n).host);
    Value v;
    if (r.op != Reducer::Op::custom) {
      v = combine_builtin(r.op, values, t);
    } else if (values.size() == 1) {
      v = {t, values[0]};
    } else {
      // Combine with the user's function on the first partition's device.
      PartState& ps = parts_.front();
      ReduceSlot& rs = ps.reduce.at(&n);
      cl_call({.node = paths_->at(&n) + "/reduce", .device = ps.worker->info().name}, [&] {
        std::vector<unsigned char> packed;
        for (auto& b : values) packed.insert(packed.end(), b.begin(), b.end());
        cl::Buffer in(ps.worker->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, packed.size(), packed.data());
        cl::Kernel& k = *rs.kernel;
        k.setArg(0, in);
        k.setArg(1, static_cast<cl_uint>(values.size()));
        k.setArg(2, rs.result);
        k.setArg(3, cl::Local(rs.local * t.size));
        k.setArg(4, r.identity.size(), r.identity.data());
        ps.worker->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(rs.local), cl::NDRange(rs.local));
        v = {t, std::vector<unsigned char>(t.size)};
        ps.worker->queue().enqueueReadBuffer(rs.result, CL_TRUE, 0, t.size, v.bytes.data());
      });
    }
    results_[r.output->name] = v;
    if (auto b = an_.result_bindings.find(r.output.get()); b != an_.result_bindings.end())
      std::memcpy(b->second->data, v.bytes.data(), v.bytes.size());
  }

  // ----- the report and the trace -----------------------------------------------------------

  // Profiling start/end of an event in ns; false for events without profiling (some libraries').
  static bool times_of(const TimedEvent& te, cl_ulong& s, cl_ulong& e) {
    try {
      s = te.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      e = te.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    } catch (const cl::Error&) {
      return false;
    }
    return e >= s;
  }

  Report report() {
    Report rep;
    rep.config = dec_.config;
    rep.iterations = iterations_;
    rep.profiled = profile_;
    rep.results = results_;
    rep.decomposition = dec_.explained.empty() ? dec_.explain(env_.infos) : dec_.explained;
    rep.device_ms.assign(env_.infos.size(), 0.0);
    double begin = std::numeric_limits<double>::max();
    for (auto& w : workers_) begin = std::min(begin, w.host_start_ms);
    for (auto& w : workers_) {
      double& d = rep.device_ms.at(w.runtime_index);
      d = std::max(d, w.host_end_ms - begin);
    }
    std::map<std::pair<std::string, std::size_t>, KernelTiming> kernels;
    for (auto& ps : parts_) {
      PartitionReport pr;
      pr.index = ps.part->index;
      pr.device = ps.part->device;
      pr.device_name = ps.worker->info().name;
      pr.sub_device = ps.part->sub_device;
      pr.queue = ps.part->queue;
      pr.first = ps.part->first;
      pr.units = ps.part->units;
      cl_ulong first = std::numeric_limits<cl_ulong>::max(), last = 0;
      for (auto& te : ps.events) {
        cl_ulong s = 0, e = 0;
        if (!times_of(te, s, e)) continue;
        first = std::min(first, s);
        last = std::max(last, e);
        const double ms = static_cast<double>(e - s) * 1e-6;
        if (te.kernel) {
          pr.kernel_ms += ms;
          auto& kt = kernels[{*te.path, pr.index}];
          kt.node = *te.path;
          kt.partition = pr.index;
          ++kt.launches;
          kt.ms += ms;
        } else {
          pr.transfer_ms += ms;
        }
      }
      if (last > first) pr.ms = static_cast<double>(last - first) * 1e-6;
      rep.partitions.push_back(pr);
    }
    for (auto& [k, v] : kernels) rep.kernels.push_back(v);
    return rep;
  }

  // Device clocks differ from the host's: each worker's events are placed from when its thread
  // began, taking the first command's queued time (its start where the driver gives no queued
  // time) as that moment, so the gap between enqueueing and running shows. The host's own work
  // (preparation, each thread enqueueing then waiting, the report) is on a "host" row.
  std::vector<TraceRecord> trace_records(double joined_ms, double end_ms) {
    std::vector<TraceRecord> out;
    auto host = [&](std::string name, std::string thread, double from_ms, double to_ms) {
      out.push_back({std::move(name), "host", "host", std::move(thread), from_ms * 1e3, (to_ms - from_ms) * 1e3});
    };
    host("prepare", "request", 0, prepared_ms_);
    host("join, combine", "request", joined_ms, end_ms);
    for (auto& w : workers_) {
      cl_ulong base = std::numeric_limits<cl_ulong>::max();
      for (PartState* ps : w.parts)
        for (auto& te : ps->events) {
          cl_ulong s, e;
          if (!times_of(te, s, e)) continue;
          cl_ulong queued = s;
          try {
            queued = std::min(s, te.event.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
          } catch (const cl::Error&) {
          }
          base = std::min(base, queued);
        }
      const auto& info = w.info();
      std::string thread = info.discrete ? "queue " + std::to_string(w.queue_index)
                                         : "sub-device " + std::to_string(w.sub_device);
      const std::string who = info.id() + " " + thread;
      host("enqueue", who, w.host_start_ms, w.host_enqueued_ms);
      host("wait", who, w.host_enqueued_ms, w.host_end_ms);
      for (PartState* ps : w.parts)
        for (auto& te : ps->events) {
          cl_ulong s, e;
          if (!times_of(te, s, e)) continue;
          out.push_back({*te.path + " #" + std::to_string(ps->part->index), te.kernel ? "kernel" : "transfer",
                         info.id() + " " + info.name, thread, w.host_start_ms * 1e3 + static_cast<double>(s - base) * 1e-3,
                         static_cast<double>(e - s) * 1e-3});
        }
    }
    return out;
  }

  Environment& env_;
  const NodeImpl& root_;
  const Analysis& an_;
  const Decomposition& dec_;
  const bool profile_;
  std::optional<Barrier> barrier_;  // one party per host thread (per worker where it is met)
  std::vector<Worker> workers_;
  std::chrono::steady_clock::time_point start_;
  double prepared_ms_ = 0;
  bool cpu_work_ = false;  // some partition runs on a host-unified (CPU) device
  bool defer_unmaps_ = false;  // zero-copy results are unmapped after the wait (feed_then_wait)
  std::vector<PartState> parts_;
  std::map<cl_context, ContextState> contexts_;
  const std::map<const NodeImpl*, std::string>* paths_ = an_.paths.get();  // made by analyze()
  bool has_replicas_ = false;
  std::map<const VectorState*, std::vector<unsigned char>> staging_;  // replica sync between contexts
  std::map<std::string, Value> results_;  // written at barriers and after the threads joined
  bool loop_done_ = false;                // a loop predicate's verdict, read after its barrier
  std::size_t iterations_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  struct Pooled {
    cl::Context context;
    std::size_t bytes;
    cl::Buffer buffer;
    std::size_t limit;
  };
  std::vector<Pooled> pooled_;
};

}  // namespace

Report execute(Environment& env, const NodeImpl& root, const Analysis& an, const Decomposition& dec,
               bool profile) {
  Run run(env, root, an, dec, profile);
  return run.go();
}

}  // namespace sinew::detail
