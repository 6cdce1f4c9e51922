// runtime/cluster_run.cpp — Cluster::run as its stages (runtime/cluster_run.hpp says which, and
// where each lives); here the prepare stage (the root's sizes, the tree prepared and checked alike
// on every rank), the exchanges of a joined run, and the rank's own run. Built only with SINEW_MPI.
#include "runtime/cluster_run.hpp"

#include "runtime/runtime_impl.hpp"
#include "tree/nodes/divide_and_conquer.hpp"

#include <algorithm>
#include <chrono>

namespace sinew {

ClusterReport Cluster::run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  detail::ClusterRun run(*impl_, tree, std::move(bindings), std::move(options));
  run.phase(&ClusterReport::prepare_ms, [&] {
    detail::prepare_ranks(run);
    detail::split_ranks(run);
    detail::open_exchanges(run);
  });
  run.phase(&ClusterReport::scatter_ms, [&] {
    detail::allocate_rank_data(run);
    detail::scatter_rank_data(run);
  });
  run.phase(&ClusterReport::run_ms, [&] { detail::run_rank_part(run); });
  run.phase(&ClusterReport::gather_ms, [&] { detail::gather_outputs(run); });
  run.phase(&ClusterReport::combine_ms, [&] { detail::combine_results(run); });
  detail::observe_ranks(run);
  return run.finish();
}

namespace detail {

ClusterRun::ClusterRun(Cluster::Impl& cluster, const Node& t, std::vector<Binding> b, RunOptions o)
    : c(cluster), tree(t), bindings(std::move(b)), options(std::move(o)), root(cluster.rank == 0),
      start(std::chrono::steady_clock::now()) {
  report.rank = c.rank;
  report.ranks = c.ranks;
  ++c.sequence;
  c.peer_failed = false;
  c.drain_notices();
}

LearnedKey ClusterRun::rank_key() const {
  return {prepared->signature, {{"units", static_cast<double>(analysis().units)}}, {}};
}

void ClusterRun::bcast(void* data, int n, MPI_Datatype type, const std::string& what) {
  c.timed(what, [&](MPI_Request* r) { return MPI_Ibcast(data, n, type, 0, c.comm, r); });
}

ClusterReport ClusterRun::finish() {
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return std::move(report);
}

namespace {

// Whether the ranks' partitions meet while the tree runs (cluster_run.hpp's banner): then each rank
// holds whole-sized vectors and exchanges through a RankExchanger.
bool partitions_meet(const Analysis& an) {
  if (!an.streamable) return true;
  for (const auto& u : an.vectors)
    if (u.read_halo || (u.read_whole && u.partitioned)) return true;
  return false;
}

// What every rank must refuse alike, before any device work: a leaf marked whole_range(), a loop
// predicate or a kernel's value over a custom reduction (its combination runs on a device), and —
// for trees whose partitions never meet — declared sizes (a rank binds a slice). Returns the paths of the loops with a
// predicate, the only program code a run calls ("" for none).
std::string check_splittable(const NodeImpl& root, const Analysis& an, bool meet) {
  // A leaf marked whole_range() gathers its vectors from the partitions of one process
  // (exec/whole_leaves.hpp); ranks hold theirs apart.
  if (!an.whole_range.empty())
    throw_error(errc::invalid_tree,
                "cannot split this tree over ranks: leaf '" + an.whole_range +
                    "' is marked whole_range(), and a Cluster does not gather a leaf's vectors from every rank onto "
                    "one device",
                {.node = an.whole_range, .argument = "whole_range",
                 .fix = "run the tree with a Runtime on one process (its split leaves still use every device there), "
                        "or run the whole step as a tree of its own on the root rank"});
  std::string predicates;
  walk(root, [&](const NodeImpl& n, const std::string& path) {
    const NodeImpl* scope = n.predicate_scope();
    if (!scope) return;
    predicates += (predicates.empty() ? "the predicate of " : " or of ") + path;
    visit(*scope, [&](const NodeImpl& c) {
      const Reducer* r = c.reduction();
      if (r && r->op == Reducer::Op::custom)
        throw_error(errc::invalid_tree,
                    "cannot split this tree over ranks: the loop's predicate reads result '" + r->output->name +
                        "' of a custom reduction, which ranks cannot combine while the loop runs",
                    {.node = path, .argument = "result '" + r->output->name + "'",
                     .fix = "reduce with reduce::sum/min/max in the loop, or run it with a Runtime on one process"});
    });
  });
  // A result kernels take as a value is combined over the ranks while the tree runs, as a predicate's.
  for (const auto& [result, source] : an.value_sources) {
    if (source.user_combined)
      throw_error(errc::invalid_tree,
                  "cannot split this tree over ranks: a kernel takes result '" + result->name +
                      "' of a custom reduction as a value, which ranks cannot combine while the tree runs",
                  {.node = an.path(*source.producer), .argument = "result '" + result->name + "'",
                   .fix = "reduce it with reduce::sum/min/max, or run the tree with a Runtime on one process"});
  }
  if (meet) return predicates;
  for (const auto& u : an.vectors)
    if (u.partitioned && u.vector->size)
      throw_error(errc::invalid_argument,
                  "cannot split this tree over ranks: vector '" + u.vector->name + "' is declared with " +
                      std::to_string(u.vector->size) + " elements, and each rank holds a slice of it",
                  {.node = "tree", .argument = "vector '" + u.vector->name + "'",
                   .fix = "declare the vector without a size (it takes the binding's)"});
  return predicates;
}

// Divide and conquer over ranks: the crossover level below which every rank runs the levels on
// its own units (the rank split then cuts whole subproblems of the level below it). The given
// plan's, else for each D&C node the highest level that leaves at least 8 subproblems per rank
// below it (shares in steps of an eighth of an even one), the lowest of those over the nodes;
// none without D&C nodes.
std::optional<unsigned> rank_crossover(const NodeImpl& root, const Analysis& an, int ranks, const RunOptions& options) {
  std::optional<unsigned> crossover;
  visit(root, [&](const NodeImpl& n) {
    const NodeImpl::LevelShape shape = n.level_shape(an);
    if (shape.subproblem_units.empty()) return;
    if (options.config && crossover_item(*options.config)) {
      crossover = crossover_item(*options.config);
      return;
    }
    const std::size_t elements = shape.units, levels = shape.subproblem_units.size();
    unsigned level = levels > 1 ? 1 : 0;
    while (level + 1 < levels && elements / shape.subproblem_units[level] >= 8 * static_cast<std::size_t>(ranks))
      ++level;
    crossover = std::min(crossover.value_or(level), level);
  });
  return crossover;
}

// The bindings as every rank analyses them: the root's sizes (distributed vectors: the sum of the
// blocks), and any non-null pointer for the data other ranks never read.
std::vector<Binding> shaped_bindings(const ClusterRun& run) {
  static unsigned char any_byte;
  std::vector<Binding> shaped = run.bindings;
  for (std::size_t i = 0; i < run.count; ++i) {
    shaped[i].elements = run.bound.sizes[i];
    shaped[i].distributed = false;
    if ((!run.root || run.bound.distributed[i]) && !shaped[i].data) shaped[i].data = &any_byte;
  }
  return shaped;
}

// The checks and the prepared tree, on every rank alike (its errors agreed on by every rank);
// `fingerprints`: every rank's (gather_fingerprints).
void prepare_tree_on_ranks(ClusterRun& run, const std::vector<RunFingerprint>& fingerprints) {
  if (run.tree.empty()) throw_error(errc::invalid_tree, "the tree is empty", {.node = "tree", .fix = "build a tree"});
  if (run.count != run.bindings.size())
    throw_error(errc::invalid_argument,
                "this rank binds " + std::to_string(run.bindings.size()) + " vectors and results, the root " +
                    std::to_string(run.count),
                {.node = "bindings", .fix = "bind the same vectors and results in the same order on every rank"});
  for (const Binding& b : run.bindings)
    if (b.array)
      throw_error(errc::invalid_argument, "a resident array (Runtime::array) cannot be bound to a Cluster's run",
                  {.argument = "vector '" + (b.vector ? b.vector->name : std::string("?")) + "'",
                   .fix = "bind host memory: copy the array's host() into a std::vector"});
  if (run.bound.any) run.pinned = distributed_units(run.bound, run.bindings);
  check_same_run(fingerprints);
  // No devices: the ranks are the split's devices, and granularity() asks nothing of them.
  run.prepared = prepare_tree(run.tree, shaped_bindings(run), {}, std::nullopt, 0);
  const Analysis& an = run.analysis();
  run.joined = partitions_meet(an);
  run.predicates = check_splittable(run.prepared->root(), an, run.joined);
  // A joined run's plan as a Config (a plan text parsed here): its crossover splits the ranks.
  if (run.joined && !run.options.config && !run.options.plan.empty())
    run.options.config = Config::parse(run.options.plan, run.c.runtime->devices());
  run.crossover = rank_crossover(run.prepared->root(), an, run.c.ranks, run.options);
  Config at_crossover;
  if (run.crossover) set_crossover_item(at_crossover, *run.crossover);
  run.granule = run.prepared->plan_granule(at_crossover);
  // Each rank's distributed blocks hold whole granules, divide and conquer's subproblems included.
  if (run.bound.any) check_distributed(run.bound, run.bindings, an, run.pinned, run.granule);
}

}  // namespace

// The binding sizes: every rank prepares the tree as the root will run it, with the root's sizes
// and, for distributed vectors, the sum of every rank's block.
void prepare_ranks(ClusterRun& run) {
  std::uint64_t count = run.bindings.size();
  run.bcast(&count, 1, MPI_UINT64_T, "the binding count");
  run.count = static_cast<std::size_t>(count);
  run.bound = gather_bound_sizes(run.c, run.bindings, run.count);
  const auto fingerprints = gather_fingerprints(run);
  run.c.together("checking the tree", [&] { prepare_tree_on_ranks(run, fingerprints); });
  // Once per tree and Cluster: a rank may tune values for its own devices, or run the wrong ones.
  const std::string others = ranks_with_other_values(fingerprints);
  if (run.root && !others.empty() && run.c.told_other_values.insert(run.prepared->signature).second)
    run.c.runtime->options().log(LogLevel::warning,
                                 others + " run tree " + run.prepared->signature.substr(0, 12) +
                                     " with other scalar arguments or node settings than the root; each rank "
                                     "computes its units with its own");
}

// A joined run's exchanger, on the exchange communicator (a fresh one after a failed run: a stale
// one is dropped, not freed, since some rank may have left an exchange on it).
void open_exchanges(ClusterRun& run) {
  if (!run.joined) return;
  Cluster::Impl& c = run.c;
  if (c.exchange == MPI_COMM_NULL || c.exchange_stale) {
    MPI_Comm fresh = MPI_COMM_NULL;
    c.timed("a communicator for the exchanges", [&](MPI_Request* r) { return MPI_Comm_idup(c.comm, &fresh, r); });
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    c.exchange = fresh;
    c.exchange_stale = false;
  }
  run.exchanger.emplace(c, run.counts, run.displs);
}

namespace {

// A joined run's own plan: it exchanges with the others as it goes, so it runs with a plan given
// here (a planned run might train, and balancing might move its units, which the other ranks
// would have to follow): the given one, else an even split over the rank's devices, its
// partitions aligned with the levels the ranks run apart.
RunOptions joined_options(const ClusterRun& run) {
  RunOptions o = run.options;
  if (!o.config && o.plan.empty() && !o.device) {
    const std::size_t n = run.c.runtime->devices().size();
    o.config = Config{std::vector<double>(n, 1.0 / static_cast<double>(n))};
  }
  if (o.config && run.crossover) set_crossover_item(*o.config, *run.crossover);
  o.balance = false;
  o.train = false;
  return o;
}

}  // namespace

// This rank's own run, on its own devices and plan, through its Runtime's request pipeline. A
// failure in a joined run is told to the others at once (they may be waiting for this rank in an
// exchange), then agreed on by every rank.
void run_rank_part(ClusterRun& run) {
  Cluster::Impl& c = run.c;
  std::optional<Failure> failure;
  try {
    if (!run.joined) {
      if (run.mine()) run.report.local = c.runtime->execute(run.tree, run.local, run.options);
    } else {
      run.exchanger->running = true;
      run.report.local = c.runtime->impl().execute(run.tree, run.local, joined_options(run), &*run.exchanger);
    }
  } catch (...) {
    failure = failure_of(std::current_exception(), run.predicates);
    failure->secondary = c.peer_failed;
    // (A rank that gave up waiting has told every rank already.)
    if (run.joined && !c.peer_failed && !c.gave_up) c.notify(*failure, c.sequence);
  }
  c.agree(failure, "the run");
}

}  // namespace detail

}  // namespace sinew
