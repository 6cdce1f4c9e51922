// exec/spanning.cpp — a run's replicas, halos and reductions across processes (see spanning.hpp).
#include "exec/spanning.hpp"

#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <map>
#include <string>

namespace sinew::detail {
namespace {

const std::string sync_path = "sync";

class SpanningReplicas final : public Replicas {
 public:
  SpanningReplicas(RunState& run, Exchanger& exchanger) : Replicas(run), exchanger_(exchanger) {}

  // This process's slices to the host, every other process's in beside them, the whole vector to
  // each context's replica.
  void sync(const VectorState* v) override {
    RunState& run = run_;
    const VectorUse& u = run.an.use(v);
    auto finish_all = [&] {
      for (auto& w : run.workers.list) w.queue().finish();
    };
    cl_call({.api_call = "replica sync", .argument = "vector '" + v->name + "'"}, [&] {
      auto& host = staging_[v];
      host.resize(u.bytes());
      for (auto& ps : run.workers.parts)
        to_host(run, ps, ps.slices.at(v), 0, host.data() + RunState::slice_offset(ps, u), RunState::slice_bytes(ps, u),
                &sync_path);
      finish_all();
      exchanger_.gather_slices(u, host.data());
      for (auto& [handle, cs] : run.workers.contexts)
        to_device(run, *cs.workers.front()->parts.front(), whole_.at(handle).at(v), 0, host.data(), host.size(),
                  &sync_path);
      finish_all();
    });
  }

 protected:
  bool may_share_memory() const override { return false; }

 private:
  Exchanger& exchanger_;
};

class SpanningHalos final : public Halos {
 public:
  SpanningHalos(RunState& run, Exchanger& exchanger) : Halos(run), exchanger_(exchanger) {}

 protected:
  // This process's first halo_after units go to the process before, its last halo_before units
  // to the process after, in exchange for theirs.
  std::optional<RemoteUnits> remote_units(const VectorUse& u) override {
    RemoteUnits r;
    r.first = exchanger_.first;
    r.end = exchanger_.first + exchanger_.units;
    const std::size_t ub = u.vector->unit * u.vector->type.size;
    const bool previous = r.first > 0, next = r.end < u.units;
    std::vector<unsigned char> head(previous ? u.halo_after * ub : 0), tail(next ? u.halo_before * ub : 0);
    r.before.resize(previous ? u.halo_before * ub : 0);
    r.after.resize(next ? u.halo_after * ub : 0);
    if (!head.empty()) read_units(u, r.first, u.halo_after, head.data());
    if (!tail.empty()) read_units(u, r.end - u.halo_before, u.halo_before, tail.data());
    exchanger_.exchange_halo(u, head.data(), tail.data(), r.before.data(), r.after.data());
    return r;
  }

 private:
  Exchanger& exchanger_;
};

class SpanningReductions final : public Reductions {
 public:
  SpanningReductions(const Analysis& an, Exchanger& exchanger) : an_(an), exchanger_(exchanger) {}

  // Every process's values combined in the order of the nodes' paths, alike in every process.
  const std::map<std::string, Value>& for_predicate(const std::set<const NodeImpl*>& reductions,
                                                    std::map<std::string, Value>& scratch) override {
    std::map<std::string, const NodeImpl*> by_path;
    for (const NodeImpl* r : reductions) by_path.emplace(an_.path(*r), r);
    scratch = results;
    for (const auto& [path, r] : by_path) exchanger_.combine(*r, scratch);
    return scratch;
  }
  Value for_argument(const NodeImpl& producer, const std::string& name) override {
    std::map<std::string, Value> one{{name, results.at(name)}};
    exchanger_.combine(producer, one);
    return one.at(name);
  }
  std::vector<unsigned char> values_before(const std::vector<unsigned char>& mine, std::size_t value_bytes,
                                           const std::string& what) override {
    return exchanger_.values_before(mine, value_bytes, what);
  }
  std::optional<Span> process_span() const override { return Span{exchanger_.first, exchanger_.units}; }
  bool combines_whole() const override { return exchanger_.root; }
  void gather_to_root(const VectorUse& u, unsigned char* whole) override { exchanger_.gather_to_root(u, whole); }
  void scatter_from_root(const VectorUse& u, unsigned char* whole) override { exchanger_.scatter_from_root(u, whole); }

 private:
  const Analysis& an_;
  Exchanger& exchanger_;
};

}  // namespace

std::unique_ptr<Replicas> spanning_replicas(RunState& run, Exchanger& exchanger) {
  return std::make_unique<SpanningReplicas>(run, exchanger);
}

std::unique_ptr<Halos> spanning_halos(RunState& run, Exchanger& exchanger) {
  return std::make_unique<SpanningHalos>(run, exchanger);
}

std::unique_ptr<Reductions> spanning_reductions(const Analysis& an, Exchanger& exchanger) {
  return std::make_unique<SpanningReductions>(an, exchanger);
}

}  // namespace sinew::detail
