// exec/nodes/divide_and_conquer.cpp — running the divide-and-conquer leaf breadth-first:
//   1. the levels below the plan's crossover run on every partition alone (the decomposition
//      aligned each partition to whole subproblems of the highest of them: plan_granule), the
//      data ping-ponging between the partition's slice and one scratch buffer of its size;
//   2. if levels remain and the data is not already all on the crossover device, every worker
//      meets at a barrier and the last to arrive gathers the partitions' parts (in unit order)
//      on the host, runs the remaining levels on the crossover device (`upper`, a queue of its
//      own, so the device need not hold a partition), and scatters the result back into the
//      partitions' slices;
//   3. a partition whose result ended in its scratch buffer copies it into its slice.
// Each level is host-timed on its devices (Report::levels): the queues finish after every level,
// one wait per level, which a level's millions of elements dwarf.
//
// A process's part of a larger run (a Cluster's rank, Reductions::process_span) runs the levels
// below the crossover on its partitions (the processes' units and their partitions are aligned to
// whole subproblems of the highest of them, alike on every process), then at step 2 sends its
// parts to the root process, whose crossover device runs the remaining levels over the whole
// vector, and gets its units of the result back. So the upper levels run on one process's one
// device, and every process's part crosses to it and back once.
#include "exec/nodes/runner.hpp"
#include "platform/error.hpp"
#include "tree/nodes/divide_and_conquer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace sinew::detail {
namespace {

constexpr std::size_t kMaxLocal = 256;

struct DcKernels {
  cl::Kernel* leaf = nullptr;
  cl::Kernel* combine = nullptr;
  std::size_t leaf_local = 1;     // work-items per leaf (a power of two)
  std::size_t combine_local = 1;  // work-group size of the combine range
  bool scratch = false;           // the leaf kernel takes __local scratch of a leaf
};

// The two kernels on one queue's device, built with SINEW_T defined as the element type; their
// parameter counts and the leaf's local memory checked against the device (before data moves).
DcKernels dc_kernels(NodeContext& ctx, const cl::Context& context, QueueSlot& slot, const DeviceInfo& info,
                     const cl::Device& device, const DivideAndConquerNode& n) {
  const std::string& path = ctx.path(n);
  const ElementType& t = n.vector().type;
  DcKernels k;
  auto build = [&](const KernelNode& kn) -> cl::Kernel& {
    ErrorContext where{.node = path, .device = info.name, .kernel_file = kn.source->origin};
    auto program = ctx.env().programs->get(context, program_devices(context, device),
                                         {kn.source->text, kn.source->origin},
                                         kn.build_options + " -DSINEW_T=" + t.name + slot.build_options(), where);
    try {
      return slot.kernel(program, kn.entry);
    } catch (const cl::Error&) {
      where.api_call = "clCreateKernel";
      where.fix = "check the entry name '" + kn.entry + "' against the __kernel functions of " + kn.source->origin;
      throw_error(errc::invalid_argument, "no kernel '" + kn.entry + "' in " + kn.source->origin, where);
    }
  };
  k.leaf = &build(*n.leaf);
  k.combine = &build(*n.combine);
  // The counts the parser could not see (a kernel made by a macro) are the driver's.
  const auto leaf_params = k.leaf->getInfo<CL_KERNEL_NUM_ARGS>();
  const auto combine_params = k.combine->getInfo<CL_KERNEL_NUM_ARGS>();
  if (leaf_params != 3 && leaf_params != 4)
    throw_error(errc::invalid_argument,
                "the leaf kernel '" + n.leaf->entry + "' has " + std::to_string(leaf_params) + " parameters, not 3 or 4",
                {.node = path, .argument = "leaf", .device = info.name,
                 .fix = "declare it as __kernel void leaf(__global T* data, uint n, uint leaf_size [, __local T* scratch])"});
  if (combine_params != 5)
    throw_error(errc::invalid_argument,
                "the combine kernel '" + n.combine->entry + "' has " + std::to_string(combine_params) +
                    " parameters, not 5",
                {.node = path, .argument = "combine", .device = info.name,
                 .fix = "declare it as __kernel void combine(__global const T* src, __global T* dst, uint n, uint run, "
                        "uint fanout)"});
  k.scratch = leaf_params == 4;
  if (k.scratch && n.settings.leaf_size * t.size > info.local_memory / 2)
    throw_error(errc::invalid_argument,
                "a leaf of " + std::to_string(n.settings.leaf_size) + " " + t.name + " elements needs " +
                    std::to_string(n.settings.leaf_size * t.size) + " bytes of local scratch; device '" + info.name +
                    "' has " + std::to_string(info.local_memory) + " bytes of local memory (half kept for the compiler)",
                {.node = path, .argument = "leaf_size", .device = info.name,
                 .fix = "use a smaller leaf size, or a leaf kernel without the __local scratch parameter"});
  auto local_of = [&](cl::Kernel& kernel) {
    return std::bit_floor(std::max<std::size_t>(
        1, std::min({kMaxLocal, info.max_work_group_size, kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device)})));
  };
  k.leaf_local = local_of(*k.leaf);
  k.combine_local = local_of(*k.combine);
  return k;
}

// The crossover device's own queue, kernels, and the two buffers the upper levels ping-pong
// between; made once per request, by the first worker's preparation.
struct DcUpper {
  std::size_t device = 0;
  QueuePool* pool = nullptr;
  cl::Device cl_device;
  cl::Context context;
  std::unique_ptr<QueueSlot> slot;
  DcKernels k;
  // The gathered vector: the user's memory itself when the crossover device works in host memory
  // and the vector is bound (then the parts already there stay in place), else a staging copy.
  unsigned char* host = nullptr;
  std::unique_ptr<unsigned char[]> staging;
  bool in_user_memory = false;
  cl::Buffer a, b;
  cl::Buffer result;       // `a` or `b`: where the top level left the result
  std::shared_ptr<PinnedBlock> ferry;  // copy_across's two pinned chunks, made at its first use
  bool a_is_host = false;  // `a` is `host` itself (a CPU device that aliases host memory)
  ~DcUpper() {
    if (slot) pool->release(cl_device, std::move(slot));
  }
};

struct DcState final : NodeState {
  DcKernels k;
  std::size_t elements = 0;
  cl::Buffer scratch;
  bool in_scratch = false;
  std::shared_ptr<DcUpper> upper;  // shared by every partition; null when no level runs there
};

// The vector's elements (unit 1): all of them, also where the run is one process's part of a
// larger one and decomposes only its own units.
std::size_t whole_elements(const NodeContext& ctx, const DivideAndConquerNode& n) {
  return ctx.analysis().use(&n.vector()).elements;
}

// Whether this process runs the levels above the partitions': one process's own, or the root's
// of a run split over processes.
bool runs_upper(NodeContext& ctx) { return ctx.reductions().combines_whole(); }

// Where the levels run for this request.
struct DcPlan {
  std::size_t levels = 0;
  std::size_t split = 0;   // levels run on the partitions
  bool gather = false;     // the levels from `split` up run on the crossover device
  std::size_t upper = 0;   // the crossover device
};

// A process's part of a larger run: every process runs the same levels on its partitions and the
// root the rest over every process's parts, even a lone partition's on the crossover device. The
// levels must be alike on every process, so its partitions must align with them (Cluster::run's
// rank split and the decomposition of each process's units use the crossover's granule).
DcPlan plan_of_process(NodeContext& ctx, const DivideAndConquerNode& n, DcPlan p, std::size_t planned,
                       const Reductions::Span& span) {
  const std::size_t elements = whole_elements(ctx, n);
  const std::size_t end = span.first + span.units;
  if (p.split != planned || (planned > 0 && end < elements && end % n.subproblem(planned - 1) != 0))
    throw_error(errc::invalid_tree,
                "the process's units [" + std::to_string(span.first) + ", " + std::to_string(end) +
                    ") are not split in whole subproblems of the crossover's level " + std::to_string(planned),
                {.node = ctx.path(n), .argument = "crossover",
                 .fix = "split the processes' units in whole subproblems of the crossover's level below"});
  if (p.levels > 0 && p.split >= p.levels) p.split = p.levels - 1;
  p.gather = elements > 0;
  return p;
}

DcPlan plan_of(NodeContext& ctx, const DivideAndConquerNode& n) {
  const Config& c = ctx.plan();
  DcPlan p;
  const std::size_t elements = whole_elements(ctx, n);
  p.levels = n.levels(elements);
  p.upper = upper_item(c).value_or(static_cast<std::size_t>(
      std::max_element(c.shares.begin(), c.shares.end()) - c.shares.begin()));
  // Partitions hold whole subproblems of the levels below the crossover (plan_granule); a level a
  // partition does not align with (the remainder of a ragged split) is the crossover device's.
  p.split = DivideAndConquerNode::crossover(c, p.levels);
  const std::size_t planned = p.split;
  std::size_t nonempty = 0, device = 0;
  for (const auto& part : ctx.decomposition().parts) {
    if (part.units == 0) continue;
    ++nonempty;
    device = part.device;
    while (p.split > 0 && part.first % n.subproblem(p.split - 1) != 0) --p.split;
  }
  if (const auto span = ctx.reductions().process_span()) return plan_of_process(ctx, n, p, planned, *span);
  if (nonempty <= 1 && (nonempty == 0 || device == p.upper)) {
    p.split = p.levels;  // already where the upper levels run: they stay there
    p.upper = device;
  }
  if (nonempty > 1 && p.split >= p.levels) p.split = p.levels - 1;  // the top level is one subproblem
  p.gather = p.split < p.levels && elements > 0;
  return p;
}

// Records a level's time and bytes on `device`, merged with the other workers' records of it.
void record(NodeContext& ctx, const DivideAndConquerNode& n, std::size_t level, std::size_t device, double ms,
            std::uint64_t bytes) {
  const std::size_t elements = whole_elements(ctx, n);
  LevelReport l;
  l.node = ctx.path(n);
  l.level = level;
  l.subproblem = std::min(n.subproblem(level), elements);
  l.subproblems = (elements + n.subproblem(level) - 1) / n.subproblem(level);
  l.devices = {device};
  l.ms = ms;
  l.bytes = bytes;
  ctx.record().note_level(l);
}

// Enqueues one level over `elements` elements in `data` (solved in place for the leaves, merged
// into `other` for a combine: `in_other` flips).
void enqueue_level(NodeContext& ctx, PartState& track, cl::CommandQueue& queue, const DcKernels& k,
                   const DivideAndConquerNode& n, std::size_t level, std::size_t elements, cl::Buffer& data,
                   cl::Buffer& other, bool& in_other) {
  const std::string* path = &ctx.path(n);
  const ElementType& t = n.vector().type;
  cl::Buffer& cur = in_other ? other : data;
  cl::Buffer& next = in_other ? data : other;
  cl::Event ev;
  if (level == 0) {
    const std::size_t leaf = n.settings.leaf_size;
    cl::Kernel& kl = *k.leaf;
    kl.setArg(0, cur);
    kl.setArg(1, static_cast<cl_uint>(elements));
    kl.setArg(2, static_cast<cl_uint>(leaf));
    if (k.scratch) kl.setArg(3, cl::Local(leaf * t.size));
    const std::size_t leaves = (elements + leaf - 1) / leaf;
    queue.enqueueNDRangeKernel(kl, cl::NullRange, cl::NDRange(leaves * k.leaf_local), cl::NDRange(k.leaf_local),
                               nullptr, ctx.event_of(ev));
  } else {
    cl::Kernel& kc = *k.combine;
    kc.setArg(0, cur);
    kc.setArg(1, next);
    kc.setArg(2, static_cast<cl_uint>(elements));
    kc.setArg(3, static_cast<cl_uint>(n.subproblem(level - 1)));
    kc.setArg(4, static_cast<cl_uint>(n.settings.fanout));
    const std::size_t local = k.combine_local;
    queue.enqueueNDRangeKernel(kc, cl::NullRange, cl::NDRange((elements + local - 1) / local * local),
                               cl::NDRange(local), nullptr, ctx.event_of(ev));
    in_other = !in_other;
  }
  ctx.track(track, ev, path, true);
}

class DivideAndConquerRunner final : public NodeRunner {
 public:
  void prepare(NodeContext& ctx, Worker& w, const NodeImpl& node) const override {
    const auto& n = static_cast<const DivideAndConquerNode&>(node);
    const std::size_t tsize = n.vector().type.size;
    const DcPlan plan = plan_of(ctx, n);
    const DcKernels k = dc_kernels(ctx, w.context, *w.slot, w.info(), w.cl_device, n);
    // The crossover device's state, made by the first worker to prepare and shared by all.
    std::shared_ptr<DcUpper> upper;
    for (auto& ps : ctx.partitions())
      if (auto it = ps.nodes.find(&n); it != ps.nodes.end()) upper = static_cast<DcState&>(*it->second).upper;
    if (plan.gather && !upper) {
      upper = std::make_shared<DcUpper>();
      Device& d = *ctx.env().devices.at(plan.upper);
      upper->device = plan.upper;
      upper->pool = ctx.env().queues;
      upper->cl_device = d.device();
      upper->context = d.context();
      const std::size_t bytes = whole_elements(ctx, n) * tsize;
      const VectorUse& use = ctx.analysis().use(&n.vector());
      if (runs_upper(ctx)) {
        upper->slot = ctx.env().queues->acquire(d.context(), d.device(), ctx.profiled());
        upper->k = dc_kernels(ctx, d.context(), *upper->slot, d.info(), d.device(), n);
        // A CPU that works in host memory itself runs the upper levels where the vector lies.
        upper->a_is_host = !d.info().discrete && d.info().host_pointer_aliased;
        upper->in_user_memory = upper->a_is_host && use.bound();
      } else {
        // A process that only sends its parts to the root and takes its units back: through the
        // host memory it binds (a whole-sized vector) when it has it.
        upper->in_user_memory = use.bound();
      }
      if (upper->in_user_memory) {
        upper->host = reinterpret_cast<unsigned char*>(ctx.host_of(use));
      } else {
        upper->staging.reset(new unsigned char[bytes]);  // no zero fill: every byte is gathered
        upper->host = upper->staging.get();
      }
      if (runs_upper(ctx)) {
        upper->a = upper->a_is_host
                       ? cl::Buffer(d.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, upper->host)
                       : ctx.buffers().device_buffer(d.context(), bytes, d.info());
        upper->b = ctx.buffers().device_buffer(d.context(), bytes, d.info());
      }
    }
    for (PartState* ps : w.parts) {
      auto s = std::make_unique<DcState>();
      s->k = k;
      s->elements = ps->part->units;
      s->upper = upper;
      // Scratch only where a combine level runs on the partition.
      if (s->elements > 0 && std::min(plan.split, plan.levels) > 1)
        s->scratch = ctx.buffers().device_buffer(w.context, s->elements * tsize, w.info());
      ps->nodes[&n] = std::move(s);
    }
  }

  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& node, Step) const override {
    const auto& n = static_cast<const DivideAndConquerNode&>(node);
    const std::string& path = ctx.path(n);
    auto where = [&] { return ErrorContext{.node = path, .device = w.info().name}; };
    sync_read_replicas(ctx, w, n);
    const DcPlan plan = plan_of(ctx, n);
    for (PartState* p : group) p->state<DcState>(n).in_scratch = false;
    for (std::size_t level = 0; level < plan.split; ++level) {
      const double start = ctx.now_ms();
      bool any = false;
      for (PartState* p : group) {
        DcState& s = p->state<DcState>(n);
        if (s.elements == 0) continue;
        any = true;
        cl_call(where, [&] {
          enqueue_level(ctx, *p, w.queue(), s.k, n, level, s.elements, p->slices.at(&n.vector()), s.scratch,
                        s.in_scratch);
        });
      }
      if (!any) break;
      cl_call(where, [&] { w.queue().finish(); });
      record(ctx, n, level, w.runtime_index, ctx.now_ms() - start, 0);
    }
    if (plan.gather) {
      cl_call(where, [&] { w.queue().finish(); });
      ctx.barrier().arrive_and_wait([&] { cl_call(where, [&] { upper_levels(ctx, n, plan); }); });
    } else {
      for (PartState* p : group) {
        DcState& s = p->state<DcState>(n);
        if (!s.in_scratch || s.elements == 0) continue;
        cl_call(where, [&] {
          w.queue().enqueueCopyBuffer(s.scratch, p->slices.at(&n.vector()), 0, 0,
                                      s.elements * n.vector().type.size);
        });
      }
    }
    note_written_slices(ctx, w, n);
  }

 private:
  // At the barrier (one thread, every queue finished): the partitions' parts gathered on the
  // crossover device, the remaining levels there, the result scattered back into the slices.
  // A process's part of a larger run sends its parts to the root's crossover device and takes its
  // units of the result back (the file's banner).
  static void upper_levels(NodeContext& ctx, const DivideAndConquerNode& n, const DcPlan& plan) {
    std::vector<PartState*> order;
    for (auto& ps : ctx.partitions())
      if (ps.part->units > 0) order.push_back(&ps);
    std::sort(order.begin(), order.end(), [](const PartState* a, const PartState* b) { return a->part->first < b->part->first; });
    DcUpper& u = *order.front()->state<DcState>(n).upper;
    const std::size_t tsize = n.vector().type.size;
    const std::size_t elements = whole_elements(ctx, n);
    double start = ctx.now_ms();
    std::uint64_t moved = gather(ctx, n, u, order);
    if (runs_upper(ctx)) {
      cl::CommandQueue& queue = u.slot->queue;
      bool in_b = false;
      for (std::size_t level = plan.split; level < plan.levels; ++level) {
        enqueue_level(ctx, *order.front(), queue, u.k, n, level, elements, u.a, u.b, in_b);
        queue.finish();
        if (level + 1 == plan.levels) break;  // the top level's time takes in the scatter below
        record(ctx, n, level, u.device, ctx.now_ms() - start, moved);
        moved = 0;
        start = ctx.now_ms();
      }
      if (u.a_is_host && in_b) queue.enqueueCopyBuffer(u.b, u.a, 0, 0, elements * tsize);
      u.result = in_b ? u.b : u.a;
      queue.finish();
    }
    moved += scatter(ctx, n, u, order);
    if (runs_upper(ctx)) record(ctx, n, plan.levels - 1, u.device, ctx.now_ms() - start, moved);
  }

  // Whether partition `ps`'s part lies on the discrete crossover device of this process: it moves
  // there and back by device copies, not through the host.
  static bool on_upper(NodeContext& ctx, const DcUpper& u, const PartState& ps) {
    return direct(ctx, u) && ps.worker->runtime_index == u.device && ps.worker->context() == u.context();
  }

  // Each part from wherever its last level left it into the crossover device's `a` (through
  // `u.host`, where every process's parts meet on the root); returns the bytes that crossed
  // between the host and a device.
  static std::uint64_t gather(NodeContext& ctx, const DivideAndConquerNode& n, DcUpper& u,
                              const std::vector<PartState*>& order) {
    const std::size_t tsize = n.vector().type.size;
    const VectorUse& use = ctx.analysis().use(&n.vector());
    std::uint64_t moved = 0;
    if (direct(ctx, u)) {  // each part straight into `a`: no whole-vector staging on the host
      cl::CommandQueue& queue = u.slot->queue;
      for (PartState* ps : order) {
        DcState& s = ps->state<DcState>(n);
        const std::size_t at = ps->part->first * tsize, bytes = s.elements * tsize;
        const cl::Buffer& from = s.in_scratch ? s.scratch : ps->slices.at(&n.vector());
        if (on_upper(ctx, u, *ps)) {
          queue.enqueueCopyBuffer(from, u.a, 0, at, bytes);
          continue;
        }
        if (user_memory_part(ctx, *ps, use, s.in_scratch)) {
          queue.enqueueWriteBuffer(u.a, CL_FALSE, at, bytes, ctx.host_of(use) + at);
          moved += bytes;
        } else {
          copy_across(ctx, n, u, ps->worker->queue(), from, 0, queue, u.a, at, bytes);
          moved += 2 * bytes;  // to the host and on to the crossover device
        }
      }
      queue.finish();
      return moved;
    }
    for (PartState* ps : order) {
      DcState& s = ps->state<DcState>(n);
      // A part that is the user's memory itself is in place when the upper levels run there too.
      if (u.in_user_memory && user_memory_part(ctx, *ps, use, s.in_scratch)) continue;
      const cl::Buffer& from = s.in_scratch ? s.scratch : ps->slices.at(&n.vector());
      ps->worker->queue().enqueueReadBuffer(from, CL_TRUE, 0, s.elements * tsize, u.host + ps->part->first * tsize);
      moved += s.elements * tsize;
    }
    ctx.reductions().gather_to_root(use, u.host);
    if (runs_upper(ctx) && !u.a_is_host) {  // the root, every process's parts in `host`
      const std::size_t bytes = whole_elements(ctx, n) * tsize;
      u.slot->queue.enqueueWriteBuffer(u.a, CL_TRUE, 0, bytes, u.host);
      moved += bytes;
    }
    return moved;
  }

  // A discrete crossover device of a run in one process: the parts move to and from it one by
  // one, each by the shortest way (a device copy on it, the user's memory of a zero-copy part,
  // pinned chunks between devices), not through a host copy of the whole vector.
  static bool direct(NodeContext& ctx, const DcUpper& u) {
    return runs_upper(ctx) && !u.a_is_host && !ctx.reductions().process_span();
  }

  // Whether a partition's part is in the user's memory itself (a zero-copy device's slice of a
  // bound vector, not left in its scratch buffer).
  static bool user_memory_part(NodeContext& ctx, const PartState& ps, const VectorUse& use, bool in_scratch) {
    return !in_scratch && ctx.host_slice(ps, use) && ps.worker->info().host_pointer_aliased;
  }

  // `bytes` from `from` (on `from_q`'s device) into `to` (on `to_q`'s) through pinned host memory
  // in chunks (two, `u.ferry`, made once for the run's gather and scatter), a chunk's read
  // overlapping the previous chunk's write.
  static void copy_across(NodeContext& ctx, const DivideAndConquerNode& node, DcUpper& u, cl::CommandQueue& from_q,
                          const cl::Buffer& from, std::size_t from_at, cl::CommandQueue& to_q, const cl::Buffer& to,
                          std::size_t to_at, std::size_t bytes) {
    constexpr std::size_t kChunk = std::size_t(32) << 20;
    const std::size_t chunk = std::min(whole_elements(ctx, node) * node.vector().type.size, kChunk);
    if (!u.ferry) u.ferry = ctx.env().allocate_pinned(2 * chunk);
    cl::Event written[2];
    for (std::size_t done = 0, k = 0; done < bytes; ++k) {
      const std::size_t n = std::min(chunk, bytes - done);
      char* half = static_cast<char*>(u.ferry->data) + (k % 2) * chunk;
      if (written[k % 2]()) written[k % 2].wait();  // the write that last used this half has read it
      from_q.enqueueReadBuffer(from, CL_TRUE, from_at + done, n, half);
      to_q.enqueueWriteBuffer(to, CL_FALSE, to_at + done, n, half, nullptr, &written[k % 2]);
      to_q.flush();
      done += n;
    }
    to_q.finish();  // the chunks are free for the next part
  }

  // The result (`u.result` on the crossover device, or the root's) into every partition's slice;
  // returns the bytes that crossed between the host and a device.
  static std::uint64_t scatter(NodeContext& ctx, const DivideAndConquerNode& n, DcUpper& u,
                               const std::vector<PartState*>& order) {
    const std::size_t tsize = n.vector().type.size;
    const VectorUse& use = ctx.analysis().use(&n.vector());
    std::uint64_t moved = 0;
    if (direct(ctx, u)) {
      cl::CommandQueue& queue = u.slot->queue;
      for (PartState* ps : order) {
        const std::size_t at = ps->part->first * tsize, bytes = ps->state<DcState>(n).elements * tsize;
        const cl::Buffer& slice = ps->slices.at(&n.vector());
        if (on_upper(ctx, u, *ps)) {
          queue.enqueueCopyBuffer(u.result, slice, at, 0, bytes);
          continue;
        }
        if (user_memory_part(ctx, *ps, use, false)) {
          queue.enqueueReadBuffer(u.result, CL_TRUE, at, bytes, ctx.host_of(use) + at);
          moved += bytes;
        } else {
          copy_across(ctx, n, u, queue, u.result, at, ps->worker->queue(), slice, 0, bytes);
          moved += 2 * bytes;
        }
      }
      queue.finish();
      return moved;
    }
    if (runs_upper(ctx) && !u.a_is_host) {  // the root sends every process its units from `host`
      const std::size_t bytes = whole_elements(ctx, n) * tsize;
      u.slot->queue.enqueueReadBuffer(u.result, CL_TRUE, 0, bytes, u.host);
      moved += bytes;
    }
    ctx.reductions().scatter_from_root(use, u.host);
    for (PartState* ps : order) {
      if (u.in_user_memory && user_memory_part(ctx, *ps, use, false)) continue;  // in place
      const std::size_t at = ps->part->first * tsize, bytes = ps->state<DcState>(n).elements * tsize;
      ps->worker->queue().enqueueWriteBuffer(ps->slices.at(&n.vector()), CL_TRUE, 0, bytes, u.host + at);
      moved += bytes;
    }
    return moved;
  }
};

}  // namespace

const NodeRunner& divide_and_conquer_runner() {
  static const DivideAndConquerRunner runner;
  return runner;
}

}  // namespace sinew::detail
