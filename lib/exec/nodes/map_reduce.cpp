// exec/nodes/map_reduce.cpp — running map_reduce: the body, then the reduction kernel twice per
// partition (work-groups, then one group; once, by one group, for a small slice) and the
// partition's value read back; once every
// partition's queue has finished, the values combined on the host (built-in operators) or with
// the user's function on the first partition's device.
#include "exec/nodes/runner.hpp"
#include "exec/reduce.hpp"
#include "exec/values.hpp"
#include "platform/error.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace sinew::detail {
namespace {

// A slice of at most this many elements per work-item of one group is reduced in one pass.
constexpr std::size_t kOnePassPerItem = 32;

struct ReduceState final : NodeState {
  cl::Kernel* kernel = nullptr;
  cl::Buffer partials;  // one value per work-group of the first pass
  cl::Buffer result;    // the partition's value
  cl::Buffer identity;  // the operator's neutral element (one per device, shared by its partitions)
  std::vector<unsigned char> pageable;
  unsigned char* host = nullptr;  // the value read back: pinned on discrete devices, else `pageable`
  cl::Event read;                 // its read, which a loop's predicate waits for (none: on_device_only)
  bool on_device_only = false;    // the last value was not read back: only kernels read it (exec/values.hpp)
  std::size_t local = 1, groups = 1;
};

// One pass of the reduction kernel: `count` values of `in` reduced by `groups` work-groups of
// rs.local work-items into `out` (one value per group).
void enqueue_pass(cl::CommandQueue& queue, const ReduceState& rs, const cl::Buffer& in, cl_uint count,
                  const cl::Buffer& out, std::size_t groups, std::size_t element_size, cl::Event* event) {
  cl::Kernel& k = *rs.kernel;
  k.setArg(0, in);
  k.setArg(1, count);
  k.setArg(2, out);
  k.setArg(3, cl::Local(rs.local * element_size));
  k.setArg(4, rs.identity);
  queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * rs.local), cl::NDRange(rs.local), nullptr, event);
}

// Work-items per group: at most 256 and what the device and kernel allow, and few enough that
// each one's element fits the group's __local scratch (a 64-bin histogram struct is 256 bytes:
// 48 KiB of local memory holds 192 of them, so groups of 128). Powers of two: the tree in
// reduce.cl halves the group. And few enough that their private copies of the element (the
// reducer's arguments and result, per work-item) stay small: a CPU driver keeps them on its
// worker thread's stack, which a group of large elements can overflow (docs/decisions/031).
constexpr std::uint64_t kPrivateBytes = 512 << 10;
std::size_t group_size(Worker& w, cl::Kernel& kernel, const ElementType& t, const ErrorContext& where) {
  // CL_KERNEL_LOCAL_MEM_SIZE counts the __local arguments as last set, and the kernel object is
  // reused across runs: with the scratch set to one element, the rest is what the kernel itself
  // needs.
  kernel.setArg(3, cl::Local(t.size));
  const std::uint64_t used = kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(w.cl_device);
  const std::uint64_t fixed = used > t.size ? used - t.size : 0;
  const std::uint64_t local_memory = w.info().local_memory > fixed ? w.info().local_memory - fixed : 0;
  if (local_memory < t.size)
    throw_error(errc::invalid_argument,
                "an element of the reduced type (" + std::to_string(t.size) + " bytes) does not fit the device's " +
                    std::to_string(local_memory) + " bytes of local memory, even in a work-group of one",
                {.node = where.node, .argument = "reducer", .device = where.device,
                 .fix = "reduce a smaller type, e.g. partial results of fewer members"});
  return std::bit_floor(std::min<std::size_t>({256, w.info().max_work_group_size,
                                           kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(w.cl_device),
                                           static_cast<std::size_t>(local_memory / t.size),
                                           static_cast<std::size_t>(std::max<std::uint64_t>(1, kPrivateBytes / t.size))}));
}

class MapReduceRunner final : public NodeRunner {
 public:
  void prepare(NodeContext& ctx, Worker& w, const NodeImpl& node) const override {
    const auto& n = static_cast<const MapReduceNode&>(node);
    const Reducer& r = n.reducer;
    const ElementType& t = r.input->type;
    const std::string& path = ctx.path(n);
    ErrorContext where{.node = path + "/reduce", .device = w.info().name,
                       .kernel_file = r.op == Reducer::Op::custom ? r.origin : "reduce.cl"};
    cl::Program program;
    try {
      program = ctx.env().programs->get(w.context, program_devices(w.context, w.cl_device),
                                      {reduce_source(r, t), where.kernel_file}, w.slot->build_options(), where);
    } catch (const Error& e) {
      if (e.build_log().find(kSizeCheck) == std::string::npos) throw;
      throw_error(errc::invalid_argument,
                  "the element type '" + reduction_type_name(r) + "' as '" + r.origin + "' defines it is not " +
                      std::to_string(t.size) + " bytes, the size of the C++ type of '" + r.input->name + "'",
                  {.node = where.node, .argument = "reducer input '" + r.input->name + "'", .device = where.device,
                   .kernel_file = where.kernel_file, .build_log = e.build_log(),
                   .fix = "declare the same members in the same order on both sides (OpenCL C aligns vectors, long "
                          "and double to their size)"});
    }
    cl::Kernel* kernel = &w.slot->kernel(program, "sinew_reduce");
    const std::size_t local = group_size(w, *kernel, t, where);
    auto identity = r.op == Reducer::Op::custom ? r.identity : identity_of(r.op, t);  // copied into the buffer
    const cl::Buffer identity_buffer(w.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, identity.size(), identity.data());
    for (PartState* ps : w.parts) {
      auto rs = std::make_unique<ReduceState>();
      rs->kernel = kernel;
      rs->local = local;
      rs->identity = identity_buffer;
      const std::size_t n_elems = ps->part->units * r.input->unit;
      // A small slice (a heat loop's per-row changes) takes one pass of one group: a second
      // launch per iteration would cost more than the group's longer fold.
      rs->groups = n_elems <= rs->local * kOnePassPerItem
                       ? 1
                       : std::max<std::size_t>(1, std::min<std::size_t>(64, (n_elems + rs->local - 1) / rs->local));
      rs->partials = cl::Buffer(w.context, CL_MEM_READ_WRITE, rs->groups * t.size);
      rs->result = cl::Buffer(w.context, CL_MEM_READ_WRITE, t.size);
      if (w.zero_copy) {
        rs->pageable.resize(t.size);
        rs->host = rs->pageable.data();
      } else {
        rs->host = w.slot->host_value(w.context, t.size);
      }
      ps->nodes[&n] = std::move(rs);
    }
  }

  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& node, Step step) const override {
    const auto& n = static_cast<const MapReduceNode&>(node);
    interpret(ctx, w, group, n.body(), step);
    for (PartState* p : group) reduce(ctx, n, *p);
    w.pending.insert(&n);
    w.values_met.erase(&n);  // a new value: the kernels that take it meet again (exec/values.hpp)
  }

  const cl::Buffer* value_buffer(PartState& ps, const NodeImpl& node) const override {
    return &ps.state<ReduceState>(node).result;
  }

  void wait_values(NodeContext&, Worker& w, const NodeImpl& node) const override {
    for (PartState* p : w.parts)
      if (const cl::Event& read = p->state<ReduceState>(node).read; read()) read.wait();
  }

  void combine(NodeContext& ctx, const NodeImpl& node) const override {
    const auto& n = static_cast<const MapReduceNode&>(node);
    const Reducer& r = n.reducer;
    const ElementType& t = r.input->type;
    std::vector<std::vector<unsigned char>> values;
    for (auto& ps : ctx.partitions()) read_left_value(ctx, n, ps);
    for (auto& ps : ctx.partitions()) {
      const unsigned char* host = ps.state<ReduceState>(n).host;
      values.emplace_back(host, host + t.size);
    }
    Value v;
    if (r.op != Reducer::Op::custom) {
      v = combine_builtin(r.op, values, t);
    } else if (values.size() == 1) {
      v = {t, values[0]};
    } else {
      // Combine with the user's function on the first partition's device.
      PartState& ps = ctx.partitions().front();
      ReduceState& rs = ps.state<ReduceState>(n);
      cl_call({.node = ctx.path(n) + "/reduce", .device = ps.worker->info().name}, [&] {
        std::vector<unsigned char> packed;
        for (auto& b : values) packed.insert(packed.end(), b.begin(), b.end());
        cl::Buffer in(ps.worker->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, packed.size(), packed.data());
        enqueue_pass(ps.worker->queue(), rs, in, static_cast<cl_uint>(values.size()), rs.result, 1, t.size, nullptr);
        v = {t, std::vector<unsigned char>(t.size)};
        ps.worker->queue().enqueueReadBuffer(rs.result, CL_TRUE, 0, t.size, v.bytes.data());
      });
    }
    ctx.reductions().results[r.output->name] = v;
    if (auto b = ctx.analysis().result_bindings.find(r.output.get()); b != ctx.analysis().result_bindings.end())
      std::memcpy(ctx.bindings()[b->second].data, v.bytes.data(), v.bytes.size());
  }

 private:
  static void reduce(NodeContext& ctx, const MapReduceNode& n, PartState& ps) {
    const Reducer& r = n.reducer;
    const ElementType& t = r.input->type;
    const std::string& path = ctx.path(n);
    ReduceState& rs = ps.state<ReduceState>(n);
    cl_call([&] { return ErrorContext{.node = path + "/reduce", .device = ps.worker->info().name}; }, [&] {
      auto pass = [&](const cl::Buffer& in, cl_uint count, const cl::Buffer& out, std::size_t groups) {
        cl::Event ev;
        enqueue_pass(ps.worker->queue(), rs, in, count, out, groups, t.size, ctx.event_of(ev));
        ctx.track(ps, ev, &path, true);
      };
      const auto count = static_cast<cl_uint>(ps.part->units * r.input->unit);
      if (rs.groups == 1) {
        pass(ps.slices.at(r.input.get()), count, rs.result, 1);
      } else {
        pass(ps.slices.at(r.input.get()), count, rs.partials, rs.groups);
        pass(rs.partials, static_cast<cl_uint>(rs.groups), rs.result, 1);
      }
      // A value only kernels read on the device goes to the host once, when the run is over
      // (combine): a read per iteration would hold the in-order queue between the reduction and
      // the kernel that reads its value.
      rs.on_device_only = value_stays_on_devices(ctx, n);
      if (rs.on_device_only) {
        rs.read = cl::Event();
        return;
      }
      ctx.record().count_copy(*ps.worker, CopyKind::value, t.size);
      ps.worker->queue().enqueueReadBuffer(rs.result, CL_FALSE, 0, t.size, rs.host, nullptr, &rs.read);
      ctx.track(ps, rs.read, &path, false);
    });
  }

  // The value of a partition whose read was left for the end (reduce), read now: every queue has
  // finished.
  static void read_left_value(NodeContext& ctx, const MapReduceNode& n, PartState& ps) {
    ReduceState& rs = ps.state<ReduceState>(n);
    if (!rs.on_device_only) return;
    const std::size_t bytes = n.reducer.input->type.size;
    cl_call({.node = ctx.path(n) + "/reduce", .device = ps.worker->info().name},
            [&] { ps.worker->queue().enqueueReadBuffer(rs.result, CL_TRUE, 0, bytes, rs.host); });
    ctx.record().count_copy(*ps.worker, CopyKind::value, bytes);
    rs.on_device_only = false;
  }
};

}  // namespace

const NodeRunner& map_reduce_runner() {
  static const MapReduceRunner runner;
  return runner;
}

}  // namespace sinew::detail
