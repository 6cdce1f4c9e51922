// exec/nodes/kernel.cpp — running a kernel leaf: its program and kernel object per queue (found
// again on the queue's next request without hashing the source), its work-group size, its
// arguments and NDRange per partition.
#include "exec/nodes/runner.hpp"
#include "exec/values.hpp"
#include "platform/error.hpp"
#include "tree/nodes/kernel.hpp"

#include <algorithm>
#include <bit>
#include <map>

namespace sinew::detail {
namespace {

struct KernelState final : NodeState {
  cl::Kernel* kernel = nullptr;
  // Kernel::global_indices on a discrete device: the user's own kernel, built beside the launched
  // one, for a partition whose every moved pointer can be presented at origin 0 (plain_launch).
  const QueueSlot::Leaf* plain = nullptr;
  bool plain_now = false;  // the placed partition launches `plain`
  // Each halo buffer of a plain launch from its first unit of the range on (its leading units
  // skipped), by the halo buffer it is made from.
  std::map<cl_mem, cl::Buffer> plain_halos;
  std::size_t local = 0;  // the work-group size for a kernel with a local-size multiple
  std::size_t chunk_local = 0;  // a dynamic schedule's chunk on a CPU: its work-group (chunk_local)
  // Kernel::global_indices: the partition's origin arguments and global work offset, placed once
  // for its first unit (place_partition), and what the kernel object holds (QueueSlot::origins_set).
  bool placed = false;
  std::size_t placed_first = 0;
  std::vector<cl_long> origins;
  cl::NDRange at;
  std::vector<cl_long>* origins_set = nullptr;
};

// The work-group size of a dynamic schedule's chunk on a CPU device (one driven as a discrete
// stand-in too), for a kernel that leaves it to the driver. PoCL compiles a kernel's work-group
// function again for each work-group size it meets, and left to itself it picks a divisor of the
// range: chunks of many sizes make many compiles (docs/decisions/029).
// Here the work-group spans the first dimension only. A 2D or 3D range's first dimension is the
// same in every chunk (the chunks cut the last): its largest divisor at most `limit`, one size
// per kernel. A 1D range's length is the chunk's: the largest power of two dividing it, at most
// `limit` and small enough for four work-groups per compute unit, a few sizes powers of two
// apart (0, the driver's choice after the split below, where that is under 8 work-items: the
// last chunk takes the odd rest).
std::size_t chunk_local(const std::vector<std::size_t>& g, std::size_t limit, unsigned compute_units) {
  if (g.size() > 1) {
    for (std::size_t l = std::min(limit, g[0]); l > 1; --l)
      if (g[0] % l == 0) return l;
    return 1;
  }
  const std::size_t cap =
      std::bit_floor(std::max<std::size_t>(1, std::min(limit, g[0] / (4 * std::max<std::size_t>(1, compute_units)))));
  const std::size_t l = std::min(cap, g[0] & (~g[0] + 1));  // the lowest set bit
  return l >= std::min<std::size_t>(cap, 8) ? l : 0;
}

cl::NDRange nd(const std::vector<std::size_t>& v) {
  return v.size() == 1 ? cl::NDRange(v[0]) : v.size() == 2 ? cl::NDRange(v[0], v[1]) : cl::NDRange(v[0], v[1], v[2]);
}

// Where the request's units lie in a larger vector (Binding::first_unit, whole_units: a Cluster
// rank's share): the first binding that says so. Every partitioned vector of a tree shares one
// unit count, so one window serves them all, unbound channels included.
struct Window {
  std::size_t first_unit = 0, whole_units = 0;
};
Window window(const NodeContext& ctx) {
  for (const Binding& b : ctx.bindings())
    if (b.whole_units) return {b.first_unit, b.whole_units};
  return {};
}

// The bytes of a vector's halo buffer ahead of its partition's first unit.
std::size_t leading_halo_bytes(const NodeContext& ctx, const VectorState* v) {
  return ctx.analysis().use(v).halo_before * v->unit * v->type.size;
}

// Whether a global-index partition starting at unit `first` of the range can run the user's own
// kernel: every pointer the launched source moves would be moved by 0. A slice starts there, a
// replica is the whole vector; a halo buffer holds its leading units ahead of the range's start,
// so it is presented from the range's start by a sub-buffer, which needs that origin aligned for
// the device and a buffer that is no sub-buffer already (the poison check's). On a discrete
// device, where moving a pointer in the kernel costs device time (docs/decisions/167).
bool plain_launch(NodeContext& ctx, const PartState& ps, const KernelNode& n, std::size_t first) {
  if (first != 0) return false;
  for (const std::size_t i : n.origin_parameters) {
    const Arg& a = n.args[i];
    if (a.kind != Arg::Kind::halo) continue;
    const std::size_t skipped = leading_halo_bytes(ctx, a.vector.get());
    if (skipped % ps.worker->base_alignment() != 0 || (skipped && ctx.buffers().poison())) return false;
  }
  return true;
}

// Kernel::global_indices: the element of the whole vector at which each moved pointer's buffer
// starts (a slice at its first unit, a halo buffer `before` units ahead of it; a replica, the
// whole vector, at 0), and the global work offset of the partition's first unit
// (tree/global_indices.cpp). Both depend on that unit alone, so they are worked out on the
// partition's first launch and again only where its first unit moved.
void place_partition(NodeContext& ctx, const PartState& ps, const KernelNode& n, KernelState& s) {
  const std::size_t first = window(ctx).first_unit + ps.part->first;
  if (s.placed && s.placed_first == first) return;
  s.origins.assign(n.origin_parameters.size(), 0);
  for (std::size_t o = 0; o < n.origin_parameters.size(); ++o) {
    const Arg& a = n.args[n.origin_parameters[o]];
    if (a.kind != Arg::Kind::partitioned && a.kind != Arg::Kind::halo) continue;
    const std::size_t before = a.kind == Arg::Kind::halo ? ctx.analysis().use(a.vector.get()).halo_before : 0;
    s.origins[o] = (static_cast<cl_long>(first) - static_cast<cl_long>(before)) * static_cast<cl_long>(a.vector->unit);
  }
  const std::size_t last = n.dims == 1 ? first * n.range()->unit / n.elements_per_thread : first;
  s.at = n.dims == 1 ? cl::NDRange(last) : n.dims == 2 ? cl::NDRange(0, last) : cl::NDRange(0, 0, last);
  s.placed = true, s.placed_first = first;
  s.plain_now = s.plain && plain_launch(ctx, ps, n, first);
}

// The origin arguments follow the leaf's own; the kernel object keeps them between launches, so
// they are set only where another partition or leaf of the object left others.
void set_origins(KernelState& s, const KernelNode& n) {
  if (*s.origins_set == s.origins) return;
  for (std::size_t o = 0; o < s.origins.size(); ++o) s.kernel->setArg(static_cast<cl_uint>(n.args.size() + o), s.origins[o]);
  *s.origins_set = s.origins;
}

// A plain launch's halo argument: the partition's halo buffer from the range's start on.
const cl::Buffer& plain_halo(NodeContext& ctx, PartState& ps, KernelState& s, const VectorState* v) {
  const cl::Buffer& halo = ps.halos.at(v);
  const std::size_t skipped = leading_halo_bytes(ctx, v);
  if (!skipped) return halo;
  cl::Buffer& from_start = s.plain_halos[halo()];
  if (!from_start()) {
    cl::Buffer parent = halo;
    cl_buffer_region region{skipped, parent.getInfo<CL_MEM_SIZE>() - skipped};
    from_start = parent.createSubBuffer(CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region);
  }
  return from_start;
}

class KernelRunner final : public LeafRunner {
 public:
  // A partition's KernelState depends on its units and queue alone; the arguments are set at
  // every launch from the slices the run gives the partition.
  bool serves_identical_runs() const override { return true; }
  void prepare(NodeContext& ctx, Worker& w, const NodeImpl& node) const override {
    const auto& n = static_cast<const KernelNode&>(node);
    const std::string& path = ctx.path(n);
    const QueueSlot::Leaf& leaf = leaf_kernel(ctx, w, n, path);
    if (leaf.parameters != n.launched_parameters()) n.fail_argument_count(leaf.parameters, path, w.info().name);
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
      auto state = std::make_unique<KernelState>();
      state->kernel = leaf.kernel;
      if (n.global_indices) state->origins_set = &w.slot->origins_set[leaf.kernel];
      state->plain = plain_leaf(ctx, w, n, *ps, kernel_wg);
      if (n.local_multiple) {
        state->local = local_for(*ps, n, limit);
        if (state->local == 0)
          throw_error(errc::invalid_argument,
                      "no work-group size that is a multiple of " + std::to_string(n.local_multiple) +
                          " divides this partition's range",
                      {.node = path, .argument = "local_multiple", .device = w.info().name,
                       .fix = "make the size a multiple of " + std::to_string(n.local_multiple) + " work-items"});
      }
      if (ctx.chunked() && w.info().kind == DeviceKind::cpu && n.local_size.empty() && !n.local_multiple)
        state->chunk_local = chunk_local(n.global_range(n.range()->unit, ps->part->units), limit, w.info().compute_units);
      ps->nodes[&n] = std::move(state);
    }
  }

  void enqueue(NodeContext& ctx, PartState& ps, const NodeImpl& node, std::size_t iteration) const override {
    const auto& n = static_cast<const KernelNode&>(node);
    auto& state = ps.state<KernelState>(n);
    if (n.global_indices) place_partition(ctx, ps, n, state);
    cl::Kernel& k = state.plain_now ? *state.plain->kernel : *state.kernel;
    for (cl_uint i = 0; i < n.args.size(); ++i) {
      const Arg& a = n.args[i];
      const VectorState* v = a.vector.get();
      switch (a.kind) {
        case Arg::Kind::partitioned: k.setArg(i, ps.slices.at(v)); break;
        case Arg::Kind::whole: k.setArg(i, ctx.replicas().of(ps, v)); break;
        case Arg::Kind::halo: k.setArg(i, state.plain_now ? plain_halo(ctx, ps, state, v) : ps.halos.at(v)); break;
        case Arg::Kind::scalar: k.setArg(i, a.bytes.size(), a.bytes.data()); break;
        case Arg::Kind::local: k.setArg(i, cl::Local(a.local_bytes)); break;
        case Arg::Kind::iteration: k.setArg(i, static_cast<cl_uint>(iteration)); break;
        case Arg::Kind::offset:
          k.setArg(i, static_cast<cl_uint>((window(ctx).first_unit + ps.part->first) * v->unit));
          break;
        case Arg::Kind::count: k.setArg(i, static_cast<cl_uint>(ps.part->units * v->unit)); break;
        case Arg::Kind::value: set_value_argument(ctx, ps, k, i, n); break;
        case Arg::Kind::size: {
          const Window w = window(ctx);
          const auto& u = ctx.analysis().use(v);
          k.setArg(i, static_cast<cl_uint>(w.whole_units && u.partitioned ? w.whole_units * v->unit : u.elements));
          break;
        }
      }
    }
    if (n.global_indices && !state.plain_now) set_origins(state, n);
    const auto g = n.global_range(n.range()->unit, ps.part->units);
    // A partition at the range's start launches without an offset: the same global ids, and the
    // same launch as the slice kernel's.
    const bool offset = n.global_indices && std::any_of(state.at.get(), state.at.get() + state.at.dimensions(),
                                                        [](std::size_t x) { return x != 0; });
    const cl::NDRange at = offset ? state.at : cl::NullRange;
    const auto& l = n.local_size;
    cl::NDRange local = cl::NullRange;
    if (!l.empty()) {
      local = nd(l);
    } else if (n.local_multiple || state.chunk_local) {
      const std::size_t l0 = n.local_multiple ? state.local : state.chunk_local;
      local = g.size() == 1 ? cl::NDRange(l0) : g.size() == 2 ? cl::NDRange(l0, 1) : cl::NDRange(l0, 1, 1);
    }
    const std::string* path = &ctx.path(n);
    cl::Event ev;
    // A 1D range that is no multiple of the device's work-group multiple would leave the driver
    // only poor work-group sizes (1 for a prime count): launch the largest multiple, then the few
    // remaining work-items at a global offset.
    const std::size_t wgm = ps.worker->info().preferred_work_group_multiple;
    if (g.size() == 1 && l.empty() && !n.local_multiple && !state.chunk_local && wgm > 1 && g[0] > wgm && g[0] % wgm) {
      const std::size_t main = g[0] - g[0] % wgm;
      cl::Event head;
      const std::size_t base = offset ? at[0] : 0;
      ps.worker->queue().enqueueNDRangeKernel(k, at, cl::NDRange(main), cl::NullRange, nullptr, ctx.event_of(head));
      ctx.track(ps, head, path, true);
      ps.worker->queue().enqueueNDRangeKernel(k, cl::NDRange(base + main), cl::NDRange(g[0] - main), cl::NullRange,
                                              nullptr, ctx.event_of(ev));
    } else {
      ps.worker->queue().enqueueNDRangeKernel(k, at, nd(g), local, nullptr, ctx.event_of(ev));
    }
    ctx.track(ps, ev, path, true);
  }

 private:
  // Kernel::global_indices on a discrete device, for a partition at the range's start: the user's
  // own kernel (plain_launch), where the driver can run it with the work-groups the launched one
  // may use; else null.
  static const QueueSlot::Leaf* plain_leaf(NodeContext& ctx, Worker& w, const KernelNode& n, const PartState& ps,
                                           std::size_t launched_work_group) {
    if (!n.global_indices || w.zero_copy || window(ctx).first_unit + ps.part->first != 0) return nullptr;
    const QueueSlot::Leaf& plain = leaf_kernel(ctx, w, n, ctx.path(n), n.source);
    return plain.parameters == n.args.size() && plain.work_group >= launched_work_group ? &plain : nullptr;
  }

  // The queue's kernel object for a leaf (built from `source`: by default the one the leaf's
  // devices build), with what the driver says about it; built (or found in the program cache) on
  // the queue's first request for this source.
  static const QueueSlot::Leaf& leaf_kernel(NodeContext& ctx, Worker& w, const KernelNode& n, const std::string& path) {
    return leaf_kernel(ctx, w, n, path, n.built_source());
  }
  static const QueueSlot::Leaf& leaf_kernel(NodeContext& ctx, Worker& w, const KernelNode& n, const std::string& path,
                                            const std::shared_ptr<const KernelSource>& source) {
    QueueSlot::LeafKey key{source.get(), n.entry, n.build_options};
    if (auto it = w.slot->leaves.find(key); it != w.slot->leaves.end()) return it->second;
    ErrorContext where{.node = path, .device = w.info().name, .kernel_file = source->origin};
    auto program = ctx.env().programs->get(w.context, program_devices(w.context, w.cl_device),
                                         {source->text, source->origin}, n.build_options + w.slot->build_options(),
                                         where);
    QueueSlot::Leaf leaf;
    leaf.source = source;
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

  // Work-group size for a kernel with a local-size multiple: the largest multiple of it that
  // divides the partition's range and is at most `limit`; 0 if none.
  static std::size_t local_for(const PartState& ps, const KernelNode& n, std::size_t limit) {
    auto g = n.global_range(n.range()->unit, ps.part->units);
    for (std::size_t l = limit / n.local_multiple * n.local_multiple; l >= n.local_multiple; l -= n.local_multiple)
      if (g[0] % l == 0) return l;
    return 0;
  }
};

}  // namespace

const NodeRunner& kernel_runner() {
  static const KernelRunner runner;
  return runner;
}

}  // namespace sinew::detail
