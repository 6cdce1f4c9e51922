// runtime/cluster_distributed.cpp — bindings that are each rank's own block of a vector
// (Binding::distributed, sinew::distributed): gathering every rank's marks and block sizes, and
// the checks that every rank makes alike before any device work. Cluster::run (cluster_run.cpp)
// then splits the units as the blocks lie (rank r's block follows rank r-1's: the blocks pin the
// split) and neither scatters nor gathers those vectors. Built only with SINEW_MPI.
#include "runtime/cluster_impl.hpp"

#include <algorithm>
#include <numeric>

namespace sinew {

using detail::throw_error;

namespace detail {

namespace {

std::string name_of(const Binding& b) {
  if (b.vector) return "vector '" + b.vector->name + "'";
  return b.result ? "result '" + b.result->name + "'" : "binding";
}

}  // namespace

BoundSizes gather_bound_sizes(Cluster::Impl& c, const std::vector<Binding>& bindings, std::size_t count) {
  // One word per binding and rank: its elements, times two, plus its mark. A rank that binds
  // another count than the root sends the root's count of words (the checks refuse it after),
  // so the collective itself always matches.
  const std::size_t ranks = static_cast<std::size_t>(c.ranks);
  std::vector<std::uint64_t> mine(count, 0), all(count * ranks, 0);
  for (std::size_t i = 0; i < count && i < bindings.size(); ++i)
    mine[i] = static_cast<std::uint64_t>(bindings[i].elements) * 2 + (bindings[i].distributed ? 1 : 0);
  const int n = as_int(count, "bindings");
  c.timed("the binding sizes", [&](MPI_Request* r) {
    return MPI_Iallgather(mine.data(), n, MPI_UINT64_T, all.data(), n, MPI_UINT64_T, c.comm, r);
  });
  BoundSizes b;
  b.sizes.resize(count);
  b.distributed.resize(count);
  b.blocks.resize(count);
  b.flags.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::uint64_t word = all[r * count + i];
      b.flags[i].push_back(static_cast<char>(word & 1));
      b.blocks[i].push_back(word / 2);
    }
    b.distributed[i] = b.flags[i][0];  // as the root binds it; distributed_units() checks the others
    b.sizes[i] = b.distributed[i] ? std::accumulate(b.blocks[i].begin(), b.blocks[i].end(), std::uint64_t{0})
                                  : b.blocks[i][0];
    b.any = b.any || b.distributed[i];
  }
  return b;
}

std::vector<std::size_t> distributed_units(const BoundSizes& b, const std::vector<Binding>& bindings) {
  const std::size_t ranks = b.flags.empty() ? 0 : b.flags[0].size();
  std::vector<std::size_t> units;
  std::string pinned_by;  // the first distributed vector, which the others must match
  for (std::size_t i = 0; i < b.distributed.size(); ++i) {
    const std::string what = name_of(bindings[i]);
    for (std::size_t r = 1; r < ranks; ++r)
      if (b.flags[i][r] != b.flags[i][0])
        throw_error(errc::invalid_argument,
                    what + " (binding " + std::to_string(i) + ") is distributed on rank " +
                        std::to_string(b.flags[i][0] ? 0 : r) + " and bound on the root alone on rank " +
                        std::to_string(b.flags[i][0] ? r : 0),
                    {.node = "bindings", .argument = what,
                     .fix = "bind it with sinew::distributed on every rank (each its own block), or on none (the "
                            "root's data are scattered)"});
    if (!b.distributed[i]) continue;
    if (bindings[i].result)
      throw_error(errc::invalid_argument,
                  what + " is bound as distributed, and a result is combined over the ranks and given to every rank",
                  {.node = "bindings", .argument = what, .fix = "bind the result with Binding(result, &value)"});
    const std::size_t unit = std::max<std::size_t>(1, bindings[i].vector->unit);
    std::vector<std::size_t> its(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      if (b.blocks[i][r] % unit)
        throw_error(errc::invalid_argument,
                    "rank " + std::to_string(r) + "'s block of " + what + " has " + std::to_string(b.blocks[i][r]) +
                        " elements, not a whole number of its units of " + std::to_string(unit) + " elements",
                    {.node = "bindings", .argument = what,
                     .fix = "give every rank whole units (sinew::Vector::unit) of the vector"});
      its[r] = b.blocks[i][r] / unit;
    }
    if (pinned_by.empty()) {
      units = its;
      pinned_by = what;
      continue;
    }
    for (std::size_t r = 0; r < ranks; ++r)
      if (its[r] != units[r])
        throw_error(errc::invalid_argument,
                    "rank " + std::to_string(r) + "'s block of " + what + " holds " + std::to_string(its[r]) +
                        " units and its block of " + pinned_by + " " + std::to_string(units[r]) +
                        ": a rank's distributed blocks are the same units of every vector",
                    {.node = "bindings", .argument = what,
                     .fix = "give each rank the same units of every distributed vector (the same rows, say)"});
  }
  return units;
}

void check_distributed(const BoundSizes& b, const std::vector<Binding>& bindings, const Analysis& an,
                       const std::vector<std::size_t>& units, std::size_t granule) {
  std::string pinned_by;
  for (std::size_t i = 0; i < b.distributed.size(); ++i) {
    if (!b.distributed[i]) continue;
    const std::string what = name_of(bindings[i]);
    if (pinned_by.empty()) pinned_by = what;
    const auto& u = an.use(bindings[i].vector.get());
    if (!u.partitioned && !u.read_halo)
      throw_error(errc::invalid_argument,
                  what + " is bound as distributed, and the tree reads it whole (every partition reads all of it), "
                         "so it has no blocks to split over the ranks",
                  {.node = "tree", .argument = what,
                   .fix = "bind it on the root without sinew::distributed (it is broadcast to every rank)"});
  }
  // The split a decomposition would make: whole granules on every rank that is followed by
  // another's units (the last one's may hold the rest).
  std::size_t last = 0;
  for (std::size_t r = 0; r < units.size(); ++r)
    if (units[r]) last = r;
  for (std::size_t r = 0; r < last; ++r)
    if (granule > 1 && units[r] % granule)
      throw_error(errc::invalid_argument,
                  "rank " + std::to_string(r) + "'s block of " + pinned_by + " holds " + std::to_string(units[r]) +
                      " units, and this tree splits only in granules of " + std::to_string(granule) + " units",
                  {.node = "tree", .argument = pinned_by,
                   .fix = "give every rank but the last a multiple of " + std::to_string(granule) + " units"});
}

}  // namespace detail

}  // namespace sinew
