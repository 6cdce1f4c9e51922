// runtime/cluster_results.cpp — the combine stage of Cluster::run: map_reduce results over the
// ranks. Every rank's value (built-in operators: the identity where a rank had no units) goes to
// every rank, combined there by the host rule one process uses across its partitions; a user's
// function combines them on the root's default device, and the root's value is sent. Built only
// with SINEW_MPI.
#include "exec/reduce.hpp"
#include "runtime/cluster_run.hpp"

#include <cstring>

namespace sinew::detail {

namespace {

// A vector or result of an element type known only at run time (the combination of a custom
// reduction's per-rank values): the protected constructors, reachable from here.
struct TypedVector : VectorRef {
  explicit TypedVector(const ElementType& t, const std::string& name) : VectorRef(t, 0) { set_name(name); }
  std::shared_ptr<VectorState> shared() const { return state_; }
};
struct TypedResult : ResultRef {
  TypedResult(const ElementType& t, const std::string& name) : ResultRef(t, name) {}
  std::shared_ptr<ResultState> shared() const { return state_; }
};

// A binding to `bytes` of element type `t` for `vector` (Binding's constructors are typed).
Binding bytes_binding(const std::shared_ptr<VectorState>& vector, const ElementType& t, void* data,
                      std::size_t elements) {
  static const Vector<cl_uchar> any;
  Binding b(any, std::span<cl_uchar>());
  b.vector = vector;
  b.type = t;
  b.data = data;
  b.elements = elements;
  return b;
}

// Every rank's value of `r`'s output, in rank order (the ranks without units left out for a
// user's function, which has no identity).
std::vector<std::vector<unsigned char>> every_rank_value(ClusterRun& run, const Reducer& r) {
  const ElementType& t = r.output->type;
  std::vector<unsigned char> value(t.size);
  if (run.mine()) value = run.report.local.results.at(r.output->name).bytes;
  else if (r.op != Reducer::Op::custom) value = identity_of(r.op, t);
  std::vector<unsigned char> all(t.size * run.c.ranks);
  Datatype element(t.size);
  run.c.timed("combining '" + r.output->name + "'", [&](MPI_Request* q) {
    return MPI_Iallgather(value.data(), 1, element.type, all.data(), 1, element.type, run.c.comm, q);
  });
  std::vector<std::vector<unsigned char>> parts;
  for (int q = 0; q < run.c.ranks; ++q)
    if (run.units[q] || r.op != Reducer::Op::custom)
      parts.emplace_back(all.begin() + q * t.size, all.begin() + (q + 1) * t.size);
  return parts;
}

// A user's function over the ranks' values: map_reduce(copy) of them on the root's default device,
// its value sent to every rank.
Value combine_custom(ClusterRun& run, const Reducer& r, const std::vector<std::vector<unsigned char>>& parts) {
  const ElementType& t = r.output->type;
  Value combined{t, std::vector<unsigned char>(t.size)};
  run.c.together("combining '" + r.output->name + "' over the ranks", [&] {
    if (!run.root) return;
    std::vector<unsigned char> packed;
    for (const auto& p : parts) packed.insert(packed.end(), p.begin(), p.end());
    TypedVector values(t, "rank_values"), copied(t, "rank_values_copy");
    TypedResult out(t, r.output->name);
    Reducer again = r;
    again.input = copied.shared();
    again.output = out.shared();
    const Node combine = sinew::map_reduce(sinew::copy(values, copied), again);
    RunOptions one;
    one.device = run.c.runtime->default_device();
    const Report rep =
        run.c.runtime->execute(combine, {bytes_binding(values.shared(), t, packed.data(), parts.size())}, one);
    combined.bytes = rep.results.at(r.output->name).bytes;
  });
  Datatype element(t.size);
  run.bcast(combined.bytes.data(), 1, element.type, "the combined '" + r.output->name + "'");
  return combined;
}

}  // namespace

void combine_results(ClusterRun& run) {
  std::vector<const Reducer*> reductions;
  visit(run.prepared->root(), [&](const NodeImpl& n) {
    if (const Reducer* r = n.reduction()) reductions.push_back(r);
  });
  for (const Reducer* reducer : reductions) {
    const Reducer& r = *reducer;
    const auto parts = every_rank_value(run, r);
    const Value combined =
        r.op != Reducer::Op::custom ? combine_builtin(r.op, parts, r.output->type) : combine_custom(run, r, parts);
    run.report.results[r.output->name] = combined;
    const auto& result_bindings = run.analysis().result_bindings;
    if (auto b = result_bindings.find(r.output.get()); b != result_bindings.end() && run.bindings[b->second].data)
      std::memcpy(run.bindings[b->second].data, combined.bytes.data(), r.output->type.size);
  }
}

}  // namespace sinew::detail
