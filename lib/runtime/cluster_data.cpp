// runtime/cluster_data.cpp — the data stages of Cluster::run: each rank's memory for its part of
// every binding, the root's data scattered (and the first halos exchanged), the written vectors
// gathered back to the root. Distributed blocks stay where they lie. Built only with SINEW_MPI.
#include "runtime/cluster_run.hpp"

#include <algorithm>
#include <cstring>

namespace sinew::detail {

namespace {

// Binding i's data on this rank (the root's own stays where it is: MPI_IN_PLACE; a rank's
// distributed block too, but in a joined run), and `at`, where this rank's units lie in it: its
// start for a slice, its units' place in a whole-sized one.
void allocate_binding(ClusterRun& run, std::size_t i) {
  Binding& b = run.local[i];
  b.elements = run.bound.sizes[i];
  if (b.result) {  // this rank's partial value lands here; the combined one replaces it
    run.result_scratch[i].resize(b.type.size);
    b.data = run.result_scratch[i].data();
    return;
  }
  const auto& u = run.analysis().use(b.vector.get());
  auto* data = static_cast<unsigned char*>(run.bindings[i].data);
  const std::size_t unit_bytes = u.vector->unit * b.type.size, first = run.first[static_cast<std::size_t>(run.c.rank)];
  const std::size_t mine = run.mine(), whole_bytes = run.bound.sizes[i] * b.type.size;
  b.distributed = false;
  if (run.bound.distributed[i] && !run.joined) {  // the block is the slice: bound where it is
    b.first_unit = first;
    b.whole_units = run.analysis().units;
    b.elements = mine * u.vector->unit;
    run.at[i] = data;
  } else if (run.bound.distributed[i]) {  // a joined run's whole-sized vector, the block copied to its units' place
    b.data = run.buffers.emplace_back(whole_bytes).data.get();
    run.at[i] = static_cast<unsigned char*>(b.data) + first * unit_bytes;
    if (mine && (u.read_partitioned || u.read_halo || u.read_whole)) std::memcpy(run.at[i], data, mine * unit_bytes);
  } else if (u.read_whole || run.joined) {  // the whole vector on every rank
    b.data = run.root ? data : run.buffers.emplace_back(whole_bytes).data.get();
    run.at[i] = static_cast<unsigned char*>(b.data) + first * unit_bytes;
  } else {  // a slice
    b.first_unit = first;
    b.whole_units = run.analysis().units;
    b.elements = mine * u.vector->unit;
    b.data = run.root ? data + first * unit_bytes : run.buffers.emplace_back(mine * unit_bytes).data.get();
    run.at[i] = static_cast<unsigned char*>(b.data);
  }
}

// Binding i's data from the root to every rank: read whole, a broadcast (a distributed one: every
// rank's block to every rank); read by slices or halos, a scatter.
void scatter_binding(ClusterRun& run, std::size_t i) {
  Cluster::Impl& c = run.c;
  const Binding& b = run.local[i];
  const auto& u = run.analysis().use(b.vector.get());
  const std::string what = "scattering vector '" + u.vector->name + "'";
  if (run.bound.distributed[i]) {
    if (!u.read_whole) return;  // read whole (and by slices: an N-Body's positions)
    Datatype unit(u.vector->unit * b.type.size);
    c.timed("gathering the blocks of vector '" + u.vector->name + "'", [&](MPI_Request* r) {
      return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.data, run.counts.data(), run.displs.data(),
                             unit.type, c.comm, r);
    });
  } else if (u.read_whole) {
    Datatype element(b.type.size);
    run.bcast(b.data, static_cast<int>(run.bound.sizes[i]), element.type, what);
  } else if (u.read_partitioned || u.read_halo) {
    Datatype unit(u.vector->unit * b.type.size);
    c.timed(what, [&](MPI_Request* r) {
      return MPI_Iscatterv(run.bindings[i].data, run.counts.data(), run.displs.data(), unit.type,
                           run.root ? MPI_IN_PLACE : run.at[i], run.counts[c.rank], unit.type, 0, c.comm, r);
    });
  }
}

// A joined run's halos start from the neighbours' host units, as one process's would.
void exchange_first_halos(ClusterRun& run) {
  const std::size_t first = run.first[static_cast<std::size_t>(run.c.rank)], end = first + run.mine();
  for (const auto& u : run.analysis().vectors) {
    if (!u.read_halo || !u.bound()) continue;
    auto* data = static_cast<unsigned char*>(run.local[static_cast<std::size_t>(u.binding)].data);
    const std::size_t ub = u.vector->unit * u.vector->type.size;
    run.exchanger->exchange_halo(u, data + first * ub, data + (end - std::min(end, u.halo_before)) * ub,
                                 data + (first - std::min(first, u.halo_before)) * ub, data + end * ub);
  }
}

}  // namespace

// Made before anything moves, so that a rank short of memory fails with the others.
void allocate_rank_data(ClusterRun& run) {
  run.local = run.bindings;
  run.at.assign(run.count, nullptr);
  run.result_scratch.resize(run.count);
  run.c.together("allocating the rank's data", [&] {
    run.buffers.reserve(run.count);
    for (std::size_t i = 0; i < run.count; ++i) allocate_binding(run, i);
  });
}

void scatter_rank_data(ClusterRun& run) {
  for (std::size_t i = 0; i < run.count; ++i)
    if (run.local[i].vector) scatter_binding(run, i);
  if (run.joined) exchange_first_halos(run);
}

// Every written vector to the root; a distributed one stays on its rank (a joined run's units
// copied back into the block).
void gather_outputs(ClusterRun& run) {
  Cluster::Impl& c = run.c;
  for (std::size_t i = 0; i < run.count; ++i) {
    const Binding& b = run.local[i];
    if (!b.vector) continue;
    const auto& u = run.analysis().use(b.vector.get());
    if (!u.written) continue;
    if (run.bound.distributed[i]) {
      if (run.joined && run.mine()) std::memcpy(run.bindings[i].data, run.at[i], run.mine() * u.vector->unit * b.type.size);
      continue;
    }
    Datatype unit(u.vector->unit * b.type.size);
    c.timed("gathering vector '" + u.vector->name + "'", [&](MPI_Request* r) {
      return MPI_Igatherv(run.root ? MPI_IN_PLACE : run.at[i], run.counts[c.rank], unit.type, run.bindings[i].data,
                          run.counts.data(), run.displs.data(), unit.type, 0, c.comm, r);
    });
  }
}

}  // namespace sinew::detail
