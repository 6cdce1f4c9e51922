// sinew/cluster.hpp — running a tree over several processes (MPI ranks), each driving its own
// devices with an ordinary Runtime. Present when Sinew was built with SINEW_MPI (SINEW_HAS_MPI is
// then defined for programs that use sinew::sinew).
//
// SPMD, as MPI programs are written: every rank makes a Cluster and calls run() with the same
// tree and the same bindings, in the same order. The tree's units are split over the ranks first
// (ClusterOptions::rank_shares; else as the balancer of this Cluster's runs of the tree — the
// device balancer's rule, each rank one of its devices — or the knowledge base, has them; else
// evenly), in whole granules; the root rank's host data is scattered (each
// rank gets its slice of every vector the tree reads, and a copy of every vector it reads
// whole), each rank runs the tree on its slice with its own Runtime (its own plan, knowledge base
// and training), what the tree writes is gathered back to the root, and map_reduce results are
// combined across ranks and given to every rank. Only the root's bound data are read and
// written; on the other ranks a binding gives nothing but the vector and its type (its data may
// be empty: sizes come from the root).
//
// Distributed data. A program whose data already lie distributed, as an MPI code's do, binds each
// rank's own block instead of the root's whole vector: sinew::distributed(v, block) on every rank
// (for the same vectors, in the same binding positions). Each rank's block is a contiguous run of
// the vector's units, rank r's following rank r-1's; blocks may differ in size (0 too), the
// vector's size is their sum, and offset()/size() arguments count in that whole. Such a vector
// is neither scattered nor gathered: the tree reads and writes each rank's block where it lies.
// Its blocks pin the rank split (ClusterOptions::rank_shares, measured and stored shares do not
// apply: ClusterReport::shares_from is "distributed"); the balancer still watches the ranks' times
// and ClusterReport::next_shares says how it would split the units, for a program that can move
// its data. Every rank's blocks of the distributed vectors cover the same units; vectors bound the
// usual way (a vector read whole, say) are still the root's, scattered at the blocks' split.
// Trees whose partitions meet work too: a distributed vector read whole is gathered from every
// rank's block (Allgatherv) before the run, halos come from the neighbouring ranks' blocks.
// Refused on every rank before device work, naming the vector: a mark that differs between ranks,
// a distributed result or vector read only whole, a block that is not whole units (or, where
// the tree splits in granules, not whole granules), a rank whose blocks of two vectors hold
// different numbers of units.
//
// Trees whose partitions meet while they run are split over ranks too, exchanging over MPI as
// they run, as one process's partitions would: a vector read whole and written (the N-Body loop)
// has every rank's slices gathered to every rank (Allgatherv) before it is read again; a vector
// read with a halo gets its neighbouring ranks' edge units (Isend/Irecv of the halo units only)
// before each halo read; a loop predicate sees its reductions combined over every rank, so all
// ranks stop at the same iteration. Each rank then binds whole-sized host vectors (only its own
// units' pages are touched but for those read whole) and runs with a plan given here (its
// RunOptions' config, plan or device; else an even split over its devices): no training, which
// every other rank would have to follow. Every rank needs at least a halo's width of units.
// A scan's partitions take the totals of every rank before theirs. Divide and conquer runs the
// levels below the crossover (RunOptions::config's, else the highest leaving 8 subproblems per
// rank; the rank split cuts whole subproblems of them) on every rank, and the levels above on the
// root's crossover device over the whole vector, gathered there and scattered back: the top
// levels cost one rank's device. Refused on every rank, with a sinew::Error before any device
// work: a loop predicate over a custom reduction.
//
// Failures: an error on one rank (a bad tree, a kernel that fails to build, an OpenCL error, a
// loop predicate that throws) makes run() throw sinew::Error on every rank, naming the failing
// rank and its message; a rank that fails while others wait for it in an exchange tells them at
// once. No rank waits longer than ClusterOptions::timeout_s at one step: one that does throws
// an Error saying so, and the job is aborted when that process exits (the rank it waited for
// may hang). A rank that dies (a crash, a kill) ends the whole job: mpirun (Open MPI) aborts the
// other ranks and exits non-zero. A failed run stores nothing in the knowledge base.
//
// Lifetime and threads: making a Cluster is collective (every rank makes it, in the same order);
// each has its own communicators (copies of MPI_COMM_WORLD) and its own Runtime. The first one
// initialises MPI when nobody has (MPI_THREAD_SERIALIZED: MPI is called from the thread that
// calls run(), and during a run whose partitions meet from the Runtime's worker that does an
// exchange, never two at once) and MPI is then finalised at exit (std::atexit), so a program may
// make one Cluster after another. run() is not thread-safe: call it from one thread, the one that
// made the Cluster.
#pragma once

#include <sinew/binding.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>
#include <sinew/report.hpp>
#include <sinew/runtime.hpp>
#include <sinew/tree.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinew {

/// A Cluster's settings: each rank's Runtime's, the ranks' shares and how long a rank waits.
struct ClusterOptions {
  /// Each rank's Runtime (its unset settings come from that rank's environment, as usual).
  RuntimeOptions runtime;
  /// One share per rank, each in [0, 1], adding up to 1: the fraction of the units each rank
  /// runs (but where distributed data pin the split). Empty: as the balancer of the tree's runs
  /// in this Cluster plans them — the device balancer of one process (schedule/balancer.hpp, its
  /// settings RuntimeOptions::balancer), the ranks as its devices, each rank's run time as a
  /// device's: shares move only for a gain beyond the ranks' noise, after a few runs; else as
  /// the root's knowledge base (its RuntimeOptions::kb_path) keeps them from an earlier Cluster,
  /// for the tree, its input sizes and the whole cluster's device set (every rank's devices, in
  /// rank order); else evenly. The root stores the shares each complete run's throughput suggests
  /// (tree "cluster:<signature>", provenance balanced); a failed run stores nothing.
  std::vector<double> rank_shares;
  /// The longest a rank waits for the others at one step (a collective, an exchange, the
  /// agreement after a run), in seconds; 0: no limit. Unset: $SINEW_MPI_TIMEOUT, else 60. A
  /// rank that waits longer fails with a sinew::Error saying so, and the job cannot go on: MPI is
  /// aborted when the program exits. Set it above the longest imbalance of a healthy run (a
  /// rank whose run is that much longer than another's looks like one that hangs).
  std::optional<double> timeout_s;

  /// The Cluster's own SINEW_* variables that are set (and not empty), parsed and checked
  /// ($SINEW_MPI_TIMEOUT: timeout_s); `runtime` stays empty (each rank's Runtime reads its own).
  /// Read by the one reader of the environment (lib/runtime/options.cpp). Throws
  /// sinew::Error(errc::invalid_argument) naming the variable, its value and what it accepts.
  static ClusterOptions from_environment();
  /// The same over the given variables (name -> value) instead of the process environment.
  static ClusterOptions from_variables(const std::map<std::string, std::string>& variables);
};

/// One rank's part of a cluster run.
struct RankShare {
  int rank = 0;             ///< the rank
  std::size_t first = 0;    ///< first unit
  std::size_t units = 0;    ///< how many units it ran
  double share = 0;         ///< the share it was given
  double ms = 0;            ///< its run's host time (0 without units)
  std::string devices;      ///< its devices, "cpu:0 (name), gpu:0 (name)"
};

/// What one Cluster::run did, on this rank: the ranks' shares and times, and this rank's own run.
struct ClusterReport {
  int rank = 0;                  ///< this process's rank
  int ranks = 1;                 ///< ranks in the job
  double wall_ms = 0;            ///< the whole run on this rank: scatter, local run, gather, combine
  /// Its phases on this rank (ms): the checks and the rank split, allocating and scattering the
  /// data, the own run with the agreement after it (waiting for the slowest rank), gathering the
  /// outputs, combining the results; the rest of wall_ms is the ranks' times gathered at the end.
  double prepare_ms = 0;
  double scatter_ms = 0;  ///< see prepare_ms
  double run_ms = 0;      ///< see prepare_ms
  double gather_ms = 0;   ///< see prepare_ms
  double combine_ms = 0;  ///< see prepare_ms
  std::vector<RankShare> shares; ///< per rank, in rank order (the same on every rank)
  /// "given", "measured" (this Cluster), "stored" (knowledge base), "derived" (from the knowledge
  /// base's other inputs of the tree), "even", "distributed" (the blocks of distributed bindings)
  std::string shares_from;
  /// The shares the balancer plans for the tree's next run (the next run's own where none are
  /// given; with distributed data, the split it would move the blocks to). Empty where some rank
  /// with units reported no time.
  std::vector<double> next_shares;
  Report local;                  ///< this rank's own run (empty where the rank had no units)
  std::map<std::string, Value> results;  ///< map_reduce outputs combined over every rank, by name

  /// The value of `r` combined over every rank; throws std::out_of_range for an unknown result.
  template <class T>
  T value(const Result<T>& r) const { return results.at(r.name()).template as<T>(); }
  /// A readable summary: the ranks' shares and times, then this rank's own run.
  std::string str() const;
};

/// One rank's devices (Cluster::devices).
struct RankDevices {
  int rank = 0;                     ///< the rank
  std::string host;                 ///< MPI_Get_processor_name
  std::vector<DeviceInfo> devices;  ///< its Runtime's, with the fields `sinew devices` summarises
};

/// This rank's own block of `v` for Cluster::run (see the banner): the rank binds it on every rank,
/// each its own units of the vector. Also sinew::distributed(Binding(v, block)).
inline Binding distributed(Binding b) {
  b.distributed = true;
  return b;
}
/// distributed(Binding(v, block)): `block`, this rank's units of `v`, bound as its own.
template <class T, class Host>
Binding distributed(const Vector<T>& v, Host&& block) {
  return distributed(Binding(v, std::forward<Host>(block)));
}

/// Trees over the ranks of an MPI job: each rank runs its share of the units on its own devices
/// through its own Runtime (see the header's description).
class Cluster {
 public:
  /// Initialises MPI when needed and makes this rank's Runtime; throws sinew::Error for a bad
  /// setting (on this rank alone: nothing collective has happened yet).
  Cluster();
  /// The same with these options.
  explicit Cluster(ClusterOptions options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int rank() const;                             ///< this process's rank
  int ranks() const;                            ///< ranks in the job
  bool is_root() const { return rank() == 0; }  ///< rank 0: where results are gathered
  Runtime& runtime();                           ///< this rank's Runtime

  /// Collective: every rank calls it with the same tree and bindings (see the banner). Returns when
  /// the root has every output; throws sinew::Error on every rank when one failed.
  ClusterReport run(const Node& tree, std::vector<Binding> bindings, RunOptions options = {});

  /// Collective: every rank's devices, gathered to every rank (in rank order).
  std::vector<RankDevices> devices();

  /// Collective: throws sinew::Error on every rank when `error` is non-empty on some rank (the
  /// first such rank's message, naming it). Programs use it to fail together, like run() does.
  void agree(const std::string& error, const std::string& what = "run");

  struct Impl;  ///< the library's own (lib/runtime/cluster_impl.hpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinew
