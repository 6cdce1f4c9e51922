// exec/nodes/scan.cpp — running the scan leaf, in two passes with one meeting of every worker
// between them:
//   1. each partition scans its slice on its device (kernels/scan.cl: blocks scanned by
//      work-groups, the blocks' totals scanned the same way level by level, added back) and its
//      total (the last level's single value) is read back;
//   2. at the barrier the host puts the partitions' totals in unit order (Partition::first, not
//      device order) and gives each partition its carry: what comes before it;
//   3. each partition combines its slice with its carry (none for the first partition, for an
//      empty one, or a built-in carry equal to the identity).
// The partitions' totals are what crosses between devices: one element each way per partition.
// A process's part of a larger run (a Cluster's rank) gets the totals of the processes before it
// at step 2 (Reductions::values_before).
#include "exec/nodes/runner.hpp"
#include "exec/reduce.hpp"
#include "platform/error.hpp"
#include "tree/nodes/kernel.hpp"
#include "tree/nodes/scan.hpp"

#include <algorithm>
#include <bit>

namespace sinew::detail {
namespace {

// Elements each work-item scans serially in a block: more elements per work-item means fewer
// levels and less local-memory traffic per element (a block is kMaxPerItem * local size
// elements). Fewer when the device's local memory cannot hold the block.
constexpr std::size_t kMaxPerItem = 8;
constexpr std::size_t kMaxLocal = 256;

struct ScanKernels {
  cl::Kernel* blocks = nullptr;
  cl::Kernel* add = nullptr;
  cl::Kernel* carry = nullptr;
  std::size_t local = 1;     // work-items per group, a power of two
  std::size_t per_item = 1;  // elements per work-item
  std::size_t block() const { return local * per_item; }
};

struct ScanState final : NodeState {
  ScanKernels k;
  std::size_t elements = 0;
  // Level j's block totals (level 0 scans the slice itself): the last level has one value, the
  // slice's total.
  std::vector<std::pair<cl::Buffer, std::size_t>> levels;
  std::vector<unsigned char> total;    // read back after pass 1
  std::vector<unsigned char> carries;  // set at the barrier: empty, or `carry_count` values
  cl_uint carry_count = 0;
  cl::Buffer carry_buffer;
};

// kernels/scan.cl with SINEW_T and SINEW_OP defined, as reductions define them.
std::string scan_source(const ScanOp& op, const ElementType& t) {
  return operator_prelude(op.op, op.source, op.function, t) + "#define SINEW_T " + t.name + "\n" +
         embedded_kernels().at("scan.cl");
}

std::size_t groups(std::size_t elements, std::size_t block) { return (elements + block - 1) / block; }

class ScanRunner final : public NodeRunner {
 public:
  void prepare(NodeContext& ctx, Worker& w, const NodeImpl& node) const override {
    const auto& n = static_cast<const ScanNode&>(node);
    const ElementType& t = n.input().type;
    const std::string& path = ctx.path(n);
    ErrorContext where{.node = path, .device = w.info().name,
                       .kernel_file = n.op.op == Reducer::Op::custom ? n.op.origin : "scan.cl"};
    auto program = ctx.env().programs->get(w.context, program_devices(w.context, w.cl_device),
                                         {scan_source(n.op, t), where.kernel_file}, w.slot->build_options(), where);
    ScanKernels k;
    k.blocks = &w.slot->kernel(program, "sinew_scan_blocks");
    k.add = &w.slot->kernel(program, "sinew_scan_add");
    k.carry = &w.slot->kernel(program, "sinew_scan_carry");
    std::size_t local = std::min(kMaxLocal, w.info().max_work_group_size);
    for (cl::Kernel* kernel : {k.blocks, k.add, k.carry})
      local = std::min(local, kernel->getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(w.cl_device));
    k.local = std::bit_floor(std::max<std::size_t>(1, local));  // the block scan's up-sweep and down-sweep need a power of two
    // The block kernel holds a block and one value per work-item in local memory; half the
    // device's local memory leaves room for what the compiler keeps there itself.
    const std::uint64_t budget = w.info().local_memory / 2;
    k.per_item = kMaxPerItem;
    while (k.per_item > 1 && (k.block() + k.local) * t.size > budget) k.per_item /= 2;
    while (k.local > 1 && (k.block() + k.local) * t.size > budget) k.local /= 2;
    for (PartState* ps : w.parts) {
      auto s = std::make_unique<ScanState>();
      s->k = k;
      s->elements = ps->part->units * n.input().unit;
      for (std::size_t count = s->elements; count > 0;) {
        const std::size_t totals = groups(count, k.block());
        s->levels.emplace_back(ctx.buffers().device_buffer(w.context, totals * t.size, w.info()), totals);
        if (totals == 1) break;
        count = totals;
      }
      s->total.resize(t.size);
      s->carry_buffer = ctx.buffers().device_buffer(w.context, ctx.decomposition().parts.size() * t.size, w.info());
      ps->nodes[&n] = std::move(s);
    }
  }

  void run(NodeContext& ctx, Worker& w, const Group& group, const NodeImpl& node, Step) const override {
    const auto& n = static_cast<const ScanNode&>(node);
    const std::string& path = ctx.path(n);
    auto where = [&] { return ErrorContext{.node = path, .device = w.info().name}; };
    sync_read_replicas(ctx, w, n);
    for (PartState* p : group) cl_call(where, [&] { scan_slice(ctx, n, *p); });
    // Every partition's total on the host, then the carries in unit order.
    cl_call(where, [&] { w.queue().finish(); });
    ctx.barrier().arrive_and_wait([&] { give_carries(ctx, n); });
    for (PartState* p : group) cl_call(where, [&] { add_carry(ctx, n, *p); });
    note_written_slices(ctx, w, n);
  }

 private:
  // Pass 1: the slice's own scan into the output slice, and its total read back.
  static void scan_slice(NodeContext& ctx, const ScanNode& n, PartState& ps) {
    ScanState& s = ps.state<ScanState>(n);
    if (s.elements == 0) return;
    const ElementType& t = n.input().type;
    const auto identity = n.op.op == Reducer::Op::custom ? n.op.identity : identity_of(n.op.op, t);
    const std::string* path = &ctx.path(n);
    cl::CommandQueue& queue = ps.worker->queue();
    const ScanKernels& k = s.k;
    const cl::Buffer& out = ps.slices.at(&n.output());
    auto launch = [&](cl::Kernel& kernel, std::size_t blocks) {
      cl::Event ev;
      queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(blocks * k.local), cl::NDRange(k.local), nullptr,
                                 ctx.event_of(ev));
      ctx.track(ps, ev, path, true);
    };
    // Up the levels: level 0 scans the slice (inclusive or exclusive as asked), every level
    // above scans the totals of the one below exclusively (block g's carry is what precedes it).
    const cl::Buffer* src = &ps.slices.at(&n.input());
    const cl::Buffer* dst = &out;
    std::size_t count = s.elements;
    for (std::size_t j = 0; j < s.levels.size(); ++j) {
      cl::Kernel& kb = *k.blocks;
      kb.setArg(0, *src);
      kb.setArg(1, *dst);
      kb.setArg(2, static_cast<cl_uint>(count));
      kb.setArg(3, s.levels[j].first);
      kb.setArg(4, cl::Local(k.block() * t.size));
      kb.setArg(5, cl::Local(k.local * t.size));
      kb.setArg(6, identity.size(), identity.data());
      kb.setArg(7, static_cast<cl_uint>(k.per_item));
      kb.setArg(8, static_cast<cl_uint>(j == 0 ? n.scan_kind == ScanKind::exclusive : 1));
      launch(kb, s.levels[j].second);
      src = dst = &s.levels[j].first;
      count = s.levels[j].second;
    }
    // Down the levels: each level's blocks combined with their scanned carries, the top first.
    for (std::size_t j = s.levels.size() - 1; j-- > 0;) {
      const std::size_t below = j == 0 ? s.elements : s.levels[j - 1].second;
      cl::Kernel& ka = *k.add;
      ka.setArg(0, j == 0 ? out : s.levels[j - 1].first);
      ka.setArg(1, static_cast<cl_uint>(below));
      ka.setArg(2, s.levels[j].first);
      ka.setArg(3, static_cast<cl_uint>(k.per_item));
      launch(ka, s.levels[j].second);
    }
    cl::Event ev;
    ctx.record().count_copy(*ps.worker, CopyKind::value, t.size);
    queue.enqueueReadBuffer(s.levels.back().first, CL_FALSE, 0, t.size, s.total.data(), nullptr, ctx.event_of(ev));
    ctx.track(ps, ev, path, false);
  }

  // At the barrier (one thread, every queue finished): each partition's carry from the totals
  // of the non-empty partitions before it in unit order — those of the processes before this
  // one first, when the run is one process's part of a larger one (Reductions::values_before).
  static void give_carries(NodeContext& ctx, const ScanNode& n) {
    const ElementType& t = n.input().type;
    std::vector<PartState*> order;
    for (auto& ps : ctx.partitions()) order.push_back(&ps);
    std::sort(order.begin(), order.end(), [](const PartState* a, const PartState* b) { return a->part->first < b->part->first; });
    const bool builtin = n.op.op != Reducer::Op::custom;
    const auto identity = builtin ? identity_of(n.op.op, t) : n.op.identity;
    std::vector<unsigned char> before;  // built-in: the fold so far; custom: the totals so far
    cl_uint count = 0;
    auto take = [&](const std::vector<unsigned char>& total) {
      if (builtin)
        before = count == 0 ? total : combine_builtin(n.op.op, {before, total}, t).bytes;
      else
        before.insert(before.end(), total.begin(), total.end());
      ++count;
    };
    // The totals of the processes before this one (none in a run of one process).
    std::vector<unsigned char> mine;
    for (PartState* ps : order) {
      const ScanState& s = ps->state<ScanState>(n);
      if (s.elements) mine.insert(mine.end(), s.total.begin(), s.total.end());
    }
    const auto earlier = ctx.reductions().values_before(mine, t.size, "the totals of scan '" + ctx.path(n) + "'");
    for (std::size_t at = 0; at < earlier.size(); at += t.size)
      take(std::vector<unsigned char>(earlier.begin() + static_cast<std::ptrdiff_t>(at),
                                      earlier.begin() + static_cast<std::ptrdiff_t>(at + t.size)));
    for (PartState* ps : order) {
      ScanState& s = ps->state<ScanState>(n);
      s.carries.clear();
      s.carry_count = 0;
      if (s.elements == 0) continue;
      // The host folds built-in operators itself (one value, skipped when it is the identity);
      // a user's function is OpenCL C, so the partition's device folds the totals before it.
      if (count > 0 && (!builtin || before != identity)) {
        s.carries = before;
        s.carry_count = builtin ? 1 : count;
      }
      take(s.total);
    }
  }

  // Pass 2: the slice combined with its carry.
  static void add_carry(NodeContext& ctx, const ScanNode& n, PartState& ps) {
    ScanState& s = ps.state<ScanState>(n);
    if (s.carry_count == 0) return;
    const std::string* path = &ctx.path(n);
    cl::CommandQueue& queue = ps.worker->queue();
    // A custom scan over processes may carry more totals than this process has partitions.
    if (s.carries.size() > s.carry_buffer.getInfo<CL_MEM_SIZE>())
      s.carry_buffer = ctx.buffers().device_buffer(ps.worker->context, s.carries.size(), ps.worker->info());
    cl::Event written;
    ctx.record().count_copy(*ps.worker, CopyKind::to_device, s.carries.size());
    queue.enqueueWriteBuffer(s.carry_buffer, CL_FALSE, 0, s.carries.size(), s.carries.data(), nullptr,
                             ctx.event_of(written));
    ctx.track(ps, written, path, false);
    cl::Kernel& kc = *s.k.carry;
    kc.setArg(0, ps.slices.at(&n.output()));
    kc.setArg(1, static_cast<cl_uint>(s.elements));
    kc.setArg(2, s.carry_buffer);
    kc.setArg(3, s.carry_count);
    kc.setArg(4, static_cast<cl_uint>(s.k.per_item));
    cl::Event ev;
    queue.enqueueNDRangeKernel(kc, cl::NullRange, cl::NDRange(groups(s.elements, s.k.block()) * s.k.local),
                               cl::NDRange(s.k.local), nullptr, ctx.event_of(ev));
    ctx.track(ps, ev, path, true);
  }
};

}  // namespace

const NodeRunner& scan_runner() {
  static const ScanRunner runner;
  return runner;
}

}  // namespace sinew::detail
