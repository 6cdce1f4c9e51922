// exec/values.cpp — results passed to kernels as arguments (see values.hpp).
#include "exec/values.hpp"

#include "exec/nodes/runner.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace sinew::detail {
namespace {

// One partition in one process: a reduction's result buffer holds the combined value itself.
bool one_partition(NodeContext& ctx) {
  return ctx.partitions().size() == 1 && !ctx.reductions().process_span();
}

const NodeImpl& producer_of(const NodeContext& ctx, const Arg& a) {
  return *ctx.analysis().value_sources.at(a.result.get()).producer;
}

bool through_pointer(const NodeContext& ctx, const NodeImpl& n, std::size_t i) {
  return ctx.analysis().values_through_pointers.count({&n, i}) > 0;
}

// On the thread that completes the barrier, every queue waiting: `producer`'s value combined over
// the partitions (and processes), kept for by-value parameters and, where the partitions' result
// buffers hold only their own part, written into each of them. The bytes a write reads stay put
// until the producer runs again, and its next value is read back after that write on the same
// in-order queue, so a write never reads bytes that are being replaced.
void combine_for_kernels(NodeContext& ctx, const NodeImpl& producer, const ResultState* result) {
  const NodeRunner& runner = runner_of(producer);
  runner.combine(ctx, producer);
  Value combined = ctx.reductions().for_argument(producer, result->name);
  Value& kept = ctx.reductions().arguments[result];
  if (kept.bytes.size() == combined.bytes.size())
    std::memcpy(kept.bytes.data(), combined.bytes.data(), combined.bytes.size());
  else
    kept = std::move(combined);
  if (one_partition(ctx)) return;
  for (PartState& ps : ctx.partitions()) {
    const cl::Buffer* buffer = runner.value_buffer(ps, producer);
    cl_call({.node = ctx.path(producer), .argument = "result '" + result->name + "'", .device = ps.worker->info().name},
            [&] { ps.worker->queue().enqueueWriteBuffer(*buffer, CL_FALSE, 0, kept.bytes.size(), kept.bytes.data()); });
    ctx.record().count_copy(*ps.worker, CopyKind::value, kept.bytes.size());
  }
}

}  // namespace

bool value_stays_on_devices(NodeContext& ctx, const NodeImpl& producer) {
  return one_partition(ctx) && ctx.analysis().values_only_on_devices.count(&producer) > 0;
}

void meet_for_values(NodeContext& ctx, Worker& w, const NodeImpl& n) {
  std::vector<std::pair<const NodeImpl*, const ResultState*>> producers;
  for (std::size_t i = 0; i < n.args.size(); ++i) {
    const Arg& a = n.args[i];
    if (a.kind != Arg::Kind::value) continue;
    const NodeImpl& producer = producer_of(ctx, a);
    if (w.values_met.count(&producer)) continue;
    if (one_partition(ctx) && through_pointer(ctx, n, i)) continue;  // reads the reduction's own buffer
    const std::pair<const NodeImpl*, const ResultState*> value{&producer, a.result.get()};
    if (std::find(producers.begin(), producers.end(), value) == producers.end()) producers.push_back(value);
  }
  if (producers.empty()) return;
  for (const auto& [p, r] : producers) runner_of(*p).wait_values(ctx, w, *p);
  ctx.barrier().arrive_and_wait([&] {
    for (const auto& [p, r] : producers) combine_for_kernels(ctx, *p, r);
  });
  for (const auto& [p, r] : producers) w.values_met.insert(p);
}

void set_value_argument(NodeContext& ctx, PartState& ps, cl::Kernel& k, cl_uint i, const NodeImpl& n) {
  const Arg& a = n.args[i];
  const NodeImpl& producer = producer_of(ctx, a);
  if (through_pointer(ctx, n, i)) {
    k.setArg(i, *runner_of(producer).value_buffer(ps, producer));
  } else {
    const Value& v = ctx.reductions().arguments.at(a.result.get());
    k.setArg(i, v.bytes.size(), v.bytes.data());
  }
}

}  // namespace sinew::detail
