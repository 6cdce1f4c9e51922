// runtime/cluster_run.hpp — Cluster::run as a pipeline of stages over one run's state, the
// Runtime's request pipeline (runtime/request.hpp) with the ranks in front of it:
//
//   prepare       the root's binding sizes to every rank; the whole tree   cluster_run.cpp
//                 prepared over them (prepare_tree: analysis, granule,
//                 features, signature) and checked alike on every rank;
//                 every rank's tree and bindings compared with the root's  cluster_spmd.cpp
//   rank split    the rank shares from a chain of sources (distributed     cluster_split.cpp
//                 blocks, given, measured, stored or derived, even: the
//                 root asks, every rank is told) -> units per rank
//   exchanges     the MPI exchanger of a joined run (RankExchanger)       cluster_run.cpp
//   scatter       each rank's data allocated, the root's scattered         cluster_data.cpp
//   run           the rank's part through its Runtime's request pipeline  cluster_run.cpp
//                 (a joined run's with the exchanger)
//   gather        the written vectors to the root                          cluster_data.cpp
//   combine       map_reduce results over the ranks                         cluster_results.cpp
//   observe       every rank's time: the rank split's balancer (the        cluster_observe.cpp
//                 runtime's store) and the root's knowledge base
//
// Two ways a rank holds its data. A tree whose partitions never meet gets its slice only (host
// memory for its units) and runs as an ordinary request on it. A tree whose partitions meet (a
// vector read whole and written, halos, a loop predicate: Analysis::streamable is false, or a
// vector read whole and by slices, or a halo) is "joined": every rank binds whole-sized host
// vectors (only its own units' pages are touched, but for the vectors read whole), runs the whole
// tree's analysis on its units alone, and exchanges with the other ranks as it runs through a
// detail::RankExchanger (exec/exchanger.hpp). Scans and divide and conquer are such trees: a
// scan's partitions take the totals of the ranks before them (one value per partition over MPI);
// divide and conquer runs the levels below its crossover on every rank's own partitions and the
// levels above on the root's crossover device, every rank's part crossing to the root and back
// once per run of the node (the top levels' work and the whole vector on one rank: the cost of
// an exact breadth-first D&C; the crossover is chosen so that most levels run split).
//
// Every stage that ends in a collective call decides from what every rank knows alike; what a
// rank meets alone (its own error) is settled by Impl::together/agree before the next collective
// that depends on it. Built only with SINEW_MPI.
#pragma once

#include "runtime/cluster_impl.hpp"
#include "schedule/learned.hpp"
#include "schedule/prepared.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinew::detail {

// Where a run's rank shares came from, as the root sends it (an int), and its name in
// ClusterReport::shares_from.
enum class ShareSource : int { even, given, measured, stored, distributed, derived };
const char* to_string(ShareSource source);

struct RankShares {
  std::vector<double> shares;
  ShareSource from = ShareSource::even;
};

// One Cluster::run as its stages see it: first what every rank knows alike, then this rank's data.
struct ClusterRun {
  ClusterRun(Cluster::Impl& cluster, const Node& tree, std::vector<Binding> bindings, RunOptions options);

  Cluster::Impl& c;
  const Node& tree;
  std::vector<Binding> bindings;  // as the caller bound them (only the root's data are read and written)
  RunOptions options;
  bool root = false;
  ClusterReport report;

  // Prepared, alike on every rank.
  std::size_t count = 0;  // the root's binding count
  BoundSizes bound;
  std::shared_ptr<const PreparedTree> prepared;  // over the root's sizes; granule without devices
  bool joined = false;                           // the ranks' partitions meet (the banner)
  std::optional<unsigned> crossover;             // divide and conquer's, alike on every rank
  std::size_t granule = 1;                       // of the rank split: whole subproblems below the crossover
  std::vector<std::size_t> pinned;               // distributed data: each rank's units, as its blocks lie
  std::string predicates;                        // the loops whose predicates the program gave ("" for none)

  // The rank split, alike on every rank.
  RankShares shares;
  Config rank_plan;  // the shares as a plan over the ranks (with the crossover)
  std::vector<std::size_t> first, units;
  std::vector<int> counts, displs;  // the same, as MPI counts
  std::optional<RankExchanger> exchanger;

  // This rank's data: its bindings, where its units lie in each (`at`), the memory it allocated.
  std::vector<Binding> local;
  std::vector<unsigned char*> at;
  std::vector<AlignedBuffer> buffers;
  std::vector<std::vector<unsigned char>> result_scratch;

  const Analysis& analysis() const { return prepared->analysis; }
  std::size_t mine() const { return units[static_cast<std::size_t>(c.rank)]; }
  // The store key of the tree's rank split: the tree and the units it splits.
  LearnedKey rank_key() const;
  // A blocking broadcast from the root, as one non-blocking call waited for with the deadline.
  void bcast(void* data, int n, MPI_Datatype type, const std::string& what);
  // Runs `stage`, its time the report's phase `field` (ms).
  template <class F>
  void phase(double ClusterReport::*field, F&& stage) {
    const auto begin = std::chrono::steady_clock::now();
    stage();
    report.*field = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  }
  // The report, its wall time set.
  ClusterReport finish();

  std::chrono::steady_clock::time_point start;
};

// What a rank runs, as hashes every rank compares (cluster_spmd.cpp): the tree's structure and
// kernels (its signature), the values in it (scalar arguments, node settings), and the bindings'
// shape (which of the tree's vectors or results each binds, and its type; not its size, which
// only the root's has).
struct RunFingerprint {
  std::uint64_t tree = 0, values = 0, bindings = 0;
};
// Collective: every rank's, in rank order.
std::vector<RunFingerprint> gather_fingerprints(ClusterRun& run);
// Throws sinew::Error, alike on every rank, when some rank's tree or bindings differ from the
// root's, naming each such rank and what differs.
void check_same_run(const std::vector<RunFingerprint>& all);
// The ranks whose values (scalar arguments, node settings) differ from the root's: "rank 1, 2",
// or "" for none.
std::string ranks_with_other_values(const std::vector<RunFingerprint>& all);

// The stages, in order (the banner).
void prepare_ranks(ClusterRun& run);
void split_ranks(ClusterRun& run);
void open_exchanges(ClusterRun& run);
void allocate_rank_data(ClusterRun& run);
void scatter_rank_data(ClusterRun& run);
void run_rank_part(ClusterRun& run);
void gather_outputs(ClusterRun& run);
void combine_results(ClusterRun& run);
void observe_ranks(ClusterRun& run);

}  // namespace sinew::detail
