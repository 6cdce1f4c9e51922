// runtime/cluster_run.cpp — Cluster::run: the checks and the rank split, scattering the root's
// host data, each rank's own run, gathering the outputs, map_reduce results combined across
// ranks, and every rank's time for the next run's shares. Built only with SINEW_MPI.
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
// an exact breadth-first D&C; rank_crossover picks the crossover so that most levels run split).
#include "decompose/decompose.hpp"
#include "exec/reduce.hpp"
#include "runtime/cluster_impl.hpp"
#include "runtime/execute_part.hpp"
#include "tree/analysis.hpp"
#include "tree/nodes/divide_and_conquer.hpp"
#include "tree/nodes/loop.hpp"
#include "tree/nodes/map_reduce.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

namespace sinew {

using detail::as_int;
using detail::Datatype;
using detail::throw_error;

namespace {

// A vector or result of an element type known only at run time (the combination of a custom
// reduction's per-rank values): the protected constructors, reachable from here.
struct TypedVector : VectorRef {
  explicit TypedVector(const ElementType& t, const std::string& name) : VectorRef(t, 0) { set_name(name); }
  std::shared_ptr<detail::VectorState> shared() const { return state_; }
};
struct TypedResult : ResultRef {
  TypedResult(const ElementType& t, const std::string& name) : ResultRef(t, name) {}
  std::shared_ptr<detail::ResultState> shared() const { return state_; }
};

// A binding to `bytes` of element type `t` for `vector` (Binding's constructors are typed).
Binding bytes_binding(const std::shared_ptr<detail::VectorState>& vector, const ElementType& t, void* data,
                      std::size_t elements) {
  static const Vector<cl_uchar> any;
  Binding b(any, std::span<cl_uchar>());
  b.vector = vector;
  b.type = t;
  b.data = data;
  b.elements = elements;
  return b;
}

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const auto& d : devices) s += (s.empty() ? "" : ", ") + d.id() + " (" + d.name + ")";
  return s;
}

// Where a run's rank shares came from, as the root sends it (an int), and its name in
// ClusterReport::shares_from.
enum ShareSource : int { kEven, kGiven, kMeasured, kStored, kDistributed, kDerived };
constexpr const char* kShareSources[] = {"even", "given", "measured", "stored", "distributed", "derived"};

// Whether the ranks' partitions meet while the tree runs (the file's banner): then each rank holds
// whole-sized vectors and exchanges through a RankExchanger.
bool joined(const detail::Analysis& an) {
  if (!an.streamable) return true;
  for (const auto& u : an.vectors)
    if (u.read_halo || (u.read_whole && u.partitioned)) return true;
  return false;
}

// What every rank must refuse alike, before any device work: a loop predicate over a custom
// reduction (its combination runs on a device), and — for trees whose partitions never meet —
// declared sizes (a rank binds a slice).
void check_splittable(const detail::NodeImpl& root, const detail::Analysis& an, bool meet) {
  detail::walk(root, [&](const detail::NodeImpl& n, const std::string& path) {
    const auto* loop = dynamic_cast<const detail::LoopNode*>(&n);
    if (!loop || !loop->has_predicate()) return;
    detail::visit(loop->body(), [&](const detail::NodeImpl& c) {
      const auto* m = dynamic_cast<const detail::MapReduceNode*>(&c);
      if (m && m->reducer.op == Reducer::Op::custom)
        throw_error(errc::invalid_tree,
                    "cannot split this tree over ranks: the loop's predicate reads result '" + m->reducer.output->name +
                        "' of a custom reduction, which ranks cannot combine while the loop runs",
                    {.node = path, .argument = "result '" + m->reducer.output->name + "'",
                     .fix = "reduce with reduce::sum/min/max in the loop, or run it with a Runtime on one process"});
    });
  });
  if (meet) return;
  for (const auto& u : an.vectors)
    if (u.partitioned && u.vector->size)
      throw_error(errc::invalid_argument,
                  "cannot split this tree over ranks: vector '" + u.vector->name + "' is declared with " +
                      std::to_string(u.vector->size) + " elements, and each rank holds a slice of it",
                  {.node = "tree", .argument = "vector '" + u.vector->name + "'",
                   .fix = "declare the vector without a size (it takes the binding's)"});
}

// The fewest units a rank of a joined tree runs (every exchange is every rank's; a rank's halo
// units are its neighbours' alone), and the vector whose halo asks for more than one.
std::pair<std::size_t, std::string> joined_minimum(const detail::Analysis& an) {
  std::pair<std::size_t, std::string> most{1, ""};
  for (const auto& u : an.vectors)
    if (u.read_halo && std::max(u.halo_before, u.halo_after) > most.first)
      most = {std::max(u.halo_before, u.halo_after), u.vector->name};
  return most;
}

// Shares the Cluster chose itself (measured by the balancer, stored or derived) may leave a rank of a
// joined tree idle (one rank alone is fastest): it gets the fewest units it must run, in whole
// granules, taken from the rank with the most. Shares the user gave are checked as given.
void lift_idle_ranks(std::vector<std::size_t>& units, std::size_t granule, std::size_t least) {
  const std::size_t need = (least + granule - 1) / granule * granule;
  for (auto& u : units) {
    if (u >= least) continue;
    auto& most = *std::max_element(units.begin(), units.end());
    const std::size_t moved = std::min(need - u, most > need ? most - need : 0);
    most -= moved;
    u += moved;
  }
}

// A joined tree: every rank runs units (each exchange is every rank's), at least a halo's width
// (a rank's halo units are its neighbours' alone), and MPI may be called from the worker that
// does an exchange.
void check_joined(const detail::Analysis& an, const std::vector<std::size_t>& units, int thread_level, bool pinned) {
  if (thread_level < MPI_THREAD_SERIALIZED)
    throw_error(errc::invalid_tree,
                "cannot split this tree over ranks: its partitions exchange data as it runs, from the Runtime's "
                "threads, and MPI was initialised without MPI_THREAD_SERIALIZED",
                {.node = "cluster", .fix = "let the Cluster initialise MPI, or call MPI_Init_thread with "
                                           "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE"});
  const auto [widest, widest_vector] = joined_minimum(an);
  for (std::size_t r = 0; r < units.size(); ++r)
    if (units[r] < widest)
      throw_error(errc::invalid_argument,
                  "cannot split this tree over ranks: rank " + std::to_string(r) + " gets " + std::to_string(units[r]) +
                      " units, and in a tree whose partitions meet every rank runs at least " +
                      (widest_vector.empty() ? std::string("one unit")
                                             : std::to_string(widest) + " (the halo of vector '" + widest_vector + "')"),
                  {.node = "cluster", .argument = "rank shares",
                   .fix = pinned ? "give every rank a larger block of the distributed vectors, or run fewer ranks"
                                 : "give every rank a larger share (ClusterOptions::rank_shares), or run fewer ranks"});
}

// Divide and conquer over ranks: the crossover level below which every rank runs the levels on
// its own units (the rank split then cuts whole subproblems of the level below it). The given
// plan's, else for each D&C node the highest level that leaves at least 8 subproblems per rank
// below it (shares in steps of an eighth of an even one), the lowest of those over the nodes;
// none without D&C nodes.
std::optional<unsigned> rank_crossover(const detail::NodeImpl& root, const detail::Analysis& an, int ranks,
                                       const RunOptions& options) {
  std::optional<unsigned> crossover;
  detail::visit(root, [&](const detail::NodeImpl& n) {
    const auto* dc = dynamic_cast<const detail::DivideAndConquerNode*>(&n);
    if (!dc) return;
    if (options.config && detail::crossover_item(*options.config)) {
      crossover = detail::crossover_item(*options.config);
      return;
    }
    const std::size_t elements = an.use(&dc->vector()).elements, levels = dc->levels(elements);
    unsigned level = levels > 1 ? 1 : 0;
    while (level + 1 < levels && elements / dc->subproblem(level) >= 8 * static_cast<std::size_t>(ranks)) ++level;
    crossover = std::min(crossover.value_or(level), level);
  });
  return crossover;
}

}  // namespace

ClusterReport Cluster::run(const Node& tree, std::vector<Binding> bindings, RunOptions options) {
  Impl& c = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  auto mark = t0;
  // Milliseconds since the last lap, for ClusterReport's phases.
  auto lap = [&] {
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(now - std::exchange(mark, now)).count();
  };
  const bool root = c.rank == 0;
  ClusterReport report;
  report.rank = c.rank;
  report.ranks = c.ranks;
  ++c.sequence;
  c.peer_failed = false;
  c.drain_notices();
  // Blocking collectives as one non-blocking call waited for with the deadline.
  auto bcast = [&](void* data, int n, MPI_Datatype t, int from, const std::string& what) {
    c.timed(what, [&](MPI_Request* r) { return MPI_Ibcast(data, n, t, from, c.comm, r); });
  };

  // The binding sizes: every rank analyses the tree as the root will run it, with the root's
  // sizes and, for distributed vectors, the sum of every rank's block.
  std::uint64_t count = bindings.size();
  bcast(&count, 1, MPI_UINT64_T, 0, "the binding count");
  const detail::BoundSizes bound = detail::gather_bound_sizes(c, bindings, count);
  const std::vector<std::uint64_t>& sizes = bound.sizes;

  detail::Analysis an;
  KbFeatures features;
  Config rank_plan;
  std::vector<std::size_t> first(c.ranks), units(c.ranks);
  std::string key;
  bool meet = false;
  std::vector<std::size_t> pinned;  // distributed data: each rank's units, as its blocks lie
  std::optional<unsigned> crossover;  // divide and conquer's, alike on every rank
  std::size_t granule = 1;            // of the rank split: whole subproblems below the crossover
  c.together("checking the tree", [&] {
    if (tree.empty()) throw_error(errc::invalid_tree, "the tree is empty", {.node = "tree", .fix = "build a tree"});
    if (count != bindings.size())
      throw_error(errc::invalid_argument,
                  "this rank binds " + std::to_string(bindings.size()) + " vectors and results, the root " +
                      std::to_string(count),
                  {.node = "bindings", .fix = "bind the same vectors and results in the same order on every rank"});
    if (bound.any) pinned = detail::distributed_units(bound, bindings);
    std::vector<Binding> shaped = bindings;
    static unsigned char placeholder;  // the other ranks' data are never read: any non-null pointer
    for (std::size_t i = 0; i < count; ++i) {
      shaped[i].elements = sizes[i];
      shaped[i].distributed = false;
      if ((!root || bound.distributed[i]) && !shaped[i].data) shaped[i].data = &placeholder;
    }
    an = detail::analyze(*tree.impl(), shaped);
    meet = joined(an);
    check_splittable(*tree.impl(), an, meet);
    // A joined run's plan as a Config (a plan text parsed here): its crossover splits the ranks.
    if (meet && !options.config && !options.plan.empty())
      options.config = Config::parse(options.plan, c.runtime->devices());
    crossover = rank_crossover(*tree.impl(), an, c.ranks, options);
    Config at_crossover;
    if (crossover) detail::set_crossover_item(at_crossover, *crossover);
    granule = detail::plan_granularity(*tree.impl(), detail::granularity(*tree.impl(), an, {}), at_crossover);
    // Each rank's distributed blocks hold whole granules, divide and conquer's subproblems included.
    if (bound.any) detail::check_distributed(bound, bindings, an, pinned, granule);

    key = tree.signature() + "#" + std::to_string(an.units);
    features = detail::input_features(*tree.impl(), an);  // the whole vectors' sizes, alike on every rank
  });

  // The rank shares, chosen by the root (only it reads the knowledge base) and sent to every rank.
  std::vector<double> shares(c.ranks, 1.0 / c.ranks);
  int from = kEven;  // a ShareSource
  if (root) {
    if (!pinned.empty()) {  // distributed data pin the split: their blocks lie where they lie
      for (int r = 0; r < c.ranks; ++r) shares[r] = an.units ? static_cast<double>(pinned[r]) / an.units : 0;
      from = kDistributed;
    } else if (!c.options.rank_shares.empty()) {
      shares = c.options.rank_shares;
      from = kGiven;
    } else if (auto it = c.measured.find(key); it != c.measured.end()) {
      shares = it->second->config().shares;
      from = kMeasured;
    } else if (bool derived = false; auto stored = c.stored_shares(tree.signature(), features, derived)) {
      shares = *stored;
      from = derived ? kDerived : kStored;
    }
  }
  bcast(shares.data(), c.ranks, MPI_DOUBLE, 0, "the rank shares");
  bcast(&from, 1, MPI_INT, 0, "the rank shares");
  report.shares_from = kShareSources[from];

  c.together("splitting the units over the ranks", [&] {
    // Whole granules per rank, the last active rank taking the rest, by the same rounding that
    // splits a rank's units over its devices (decompose over stand-ins for the ranks).
    rank_plan = Config{shares};
    if (crossover) detail::set_crossover_item(rank_plan, *crossover);
    if (!pinned.empty()) {
      units = pinned;
    } else {
      const auto dec = detail::decompose(an.units, granule, rank_plan, detail::rank_stand_ins(c.ranks));
      for (const auto& p : dec.parts) units[p.device] = p.units;
      const bool chosen = from == kMeasured || from == kStored || from == kDerived;  // not the user's
      if (meet && chosen) lift_idle_ranks(units, granule, joined_minimum(an).first);
    }
    for (std::size_t r = 0, at = 0; r < units.size(); at += units[r++]) first[r] = at;  // ranks in order
    if (meet) check_joined(an, units, c.thread_level, !pinned.empty());
    // What one MPI message carries, checked here so no rank fails between collectives.
    for (int r = 0; r < c.ranks; ++r) as_int(first[r] + units[r], "units of rank " + std::to_string(r));
    for (const auto& u : an.vectors) {
      as_int(u.vector->unit * u.vector->type.size, "bytes per unit of vector '" + u.vector->name + "'");
      if (u.read_whole) as_int(u.elements, "elements of vector '" + u.vector->name + "'");
    }
  });

  const std::size_t mine = units[c.rank];
  std::vector<int> counts(c.ranks), displs(c.ranks);
  for (int r = 0; r < c.ranks; ++r) {
    counts[r] = static_cast<int>(units[r]);
    displs[r] = static_cast<int>(first[r]);
  }
  std::optional<detail::RankExchanger> exchanger;
  if (meet) {
    if (c.exchange == MPI_COMM_NULL || c.exchange_stale) {
      // (A stale one is dropped, not freed: some rank may have left an exchange on it.)
      MPI_Comm fresh = MPI_COMM_NULL;
      c.timed("a communicator for the exchanges", [&](MPI_Request* r) { return MPI_Comm_idup(c.comm, &fresh, r); });
      MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
      c.exchange = fresh;
      c.exchange_stale = false;
    }
    exchanger.emplace(c, counts, displs);
  }

  // Each bound vector's data on this rank (the root's own stays where it is: MPI_IN_PLACE; a
  // rank's distributed block too, but in a joined run), made before anything moves, so that a
  // rank short of memory fails with the others. `at` is where this rank's units lie in it: its
  // start for a slice, its units' place in a whole-sized one.
  std::vector<Binding> local = bindings;
  std::vector<unsigned char*> at(count, nullptr);
  std::vector<detail::AlignedBuffer> buffers;
  std::vector<std::vector<unsigned char>> result_scratch(count);
  report.prepare_ms = lap();
  c.together("allocating the rank's data", [&] {
    buffers.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      Binding& b = local[i];
      b.elements = sizes[i];
      if (b.result) {  // this rank's partial value lands here; the combined one replaces it
        result_scratch[i].resize(b.type.size);
        b.data = result_scratch[i].data();
        continue;
      }
      const auto& u = an.use(b.vector.get());
      auto* data = static_cast<unsigned char*>(bindings[i].data);
      const std::size_t unit_bytes = u.vector->unit * b.type.size;
      b.distributed = false;
      if (bound.distributed[i]) {
        if (!meet) {  // the block is the slice: bound where it is
          b.first_unit = first[c.rank];
          b.whole_units = an.units;
          b.elements = mine * u.vector->unit;
          at[i] = data;
          continue;
        }
        // A joined run's whole-sized vector on every rank, the block copied to its units' place.
        b.data = buffers.emplace_back(sizes[i] * b.type.size).data.get();
        at[i] = static_cast<unsigned char*>(b.data) + first[c.rank] * unit_bytes;
        if (mine && (u.read_partitioned || u.read_halo || u.read_whole)) std::memcpy(at[i], data, mine * unit_bytes);
        continue;
      }
      if (u.read_whole || meet) {  // the whole vector on every rank
        b.data = root ? data : buffers.emplace_back(sizes[i] * b.type.size).data.get();
        at[i] = static_cast<unsigned char*>(b.data) + first[c.rank] * unit_bytes;
        continue;
      }
      b.first_unit = first[c.rank];
      b.whole_units = an.units;
      b.elements = mine * u.vector->unit;
      b.data = root ? data + first[c.rank] * unit_bytes : buffers.emplace_back(mine * unit_bytes).data.get();
      at[i] = static_cast<unsigned char*>(b.data);
    }
  });
  for (std::size_t i = 0; i < count; ++i) {
    const Binding& b = local[i];
    if (!b.vector) continue;
    const auto& u = an.use(b.vector.get());
    const std::string what = "scattering vector '" + u.vector->name + "'";
    if (bound.distributed[i]) {
      // Read whole (and by slices: an N-Body's positions): every rank's block to every rank.
      if (u.read_whole) {
        Datatype unit(u.vector->unit * b.type.size);
        c.timed("gathering the blocks of vector '" + u.vector->name + "'", [&](MPI_Request* r) {
          return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.data, counts.data(), displs.data(), unit.type,
                                 c.comm, r);
        });
      }
    } else if (u.read_whole) {
      Datatype element(b.type.size);
      bcast(b.data, static_cast<int>(sizes[i]), element.type, 0, what);
    } else if (u.read_partitioned || u.read_halo) {
      Datatype unit(u.vector->unit * b.type.size);
      c.timed(what, [&](MPI_Request* r) {
        return MPI_Iscatterv(bindings[i].data, counts.data(), displs.data(), unit.type, root ? MPI_IN_PLACE : at[i],
                             counts[c.rank], unit.type, 0, c.comm, r);
      });
    }
  }
  // A joined run's halos start from the neighbours' host units, as one process's would.
  if (meet)
    for (const auto& u : an.vectors) {
      if (!u.read_halo || !u.bound()) continue;
      auto* data = static_cast<unsigned char*>(local[static_cast<std::size_t>(u.binding)].data);
      const std::size_t ub = u.vector->unit * u.vector->type.size, end = first[c.rank] + mine;
      exchanger->exchange_halo(u, data + first[c.rank] * ub, data + (end - std::min(end, u.halo_before)) * ub,
                               data + (first[c.rank] - std::min(first[c.rank], u.halo_before)) * ub, data + end * ub);
    }

  report.scatter_ms = lap();

  // This rank's own run, on its own devices and plan. A joined run exchanges with the others as
  // it goes: it runs with a plan given here (a planned run might train, which the other ranks
  // would have to follow), and a failure is told to the others at once (they may be waiting for
  // this rank in an exchange).
  {
    std::optional<detail::Failure> failure;
    try {
      if (!meet) {
        if (mine) report.local = c.runtime->execute(tree, local, options);
      } else {
        if (!options.config && options.plan.empty() && !options.device) {
          const std::size_t n = c.runtime->devices().size();
          options.config = Config{std::vector<double>(n, 1.0 / static_cast<double>(n))};
        }
        // Every rank's partitions aligned with the levels the ranks run apart.
        if (options.config && crossover) detail::set_crossover_item(*options.config, *crossover);
        options.balance = false;
        options.train = false;
        exchanger->running = true;
        report.local = detail::execute_part(*c.runtime, tree, local, options, *exchanger);
      }
    } catch (...) {
      failure = detail::failure_of(std::current_exception());
      failure->secondary = c.peer_failed;
      if (meet && !c.peer_failed) c.notify(*failure);
    }
    c.agree(failure, "the run");
  }

  report.run_ms = lap();

  // Outputs to the root.
  for (std::size_t i = 0; i < count; ++i) {
    const Binding& b = local[i];
    if (!b.vector) continue;
    const auto& u = an.use(b.vector.get());
    if (!u.written) continue;
    if (bound.distributed[i]) {  // stays on its rank: a joined run's units back into the block
      if (meet && mine) std::memcpy(bindings[i].data, at[i], mine * u.vector->unit * b.type.size);
      continue;
    }
    Datatype unit(u.vector->unit * b.type.size);
    c.timed("gathering vector '" + u.vector->name + "'", [&](MPI_Request* r) {
      return MPI_Igatherv(root ? MPI_IN_PLACE : at[i], counts[c.rank], unit.type, bindings[i].data, counts.data(),
                          displs.data(), unit.type, 0, c.comm, r);
    });
  }

  report.gather_ms = lap();

  // map_reduce results: every rank's value (built-in operators: the identity where a rank had no
  // units) to every rank, combined there by the host rule one process uses across its partitions;
  // a user's function combines them on the root's default device, and the root's value is sent.
  std::vector<const detail::MapReduceNode*> reductions;
  detail::visit(*tree.impl(), [&](const detail::NodeImpl& n) {
    if (auto m = dynamic_cast<const detail::MapReduceNode*>(&n)) reductions.push_back(m);
  });
  for (const auto* m : reductions) {
    const Reducer& r = m->reducer;
    const ElementType& t = r.output->type;
    std::vector<unsigned char> value(t.size);
    if (mine) value = report.local.results.at(r.output->name).bytes;
    else if (r.op != Reducer::Op::custom) value = detail::identity_of(r.op, t);
    std::vector<unsigned char> all(t.size * c.ranks);
    Datatype element(t.size);
    c.timed("combining '" + r.output->name + "'", [&](MPI_Request* q) {
      return MPI_Iallgather(value.data(), 1, element.type, all.data(), 1, element.type, c.comm, q);
    });
    std::vector<std::vector<unsigned char>> parts;
    for (int q = 0; q < c.ranks; ++q)
      if (units[q] || r.op != Reducer::Op::custom) parts.emplace_back(all.begin() + q * t.size, all.begin() + (q + 1) * t.size);
    Value combined{t, {}};
    if (r.op != Reducer::Op::custom) {
      combined = detail::combine_builtin(r.op, parts, t);
    } else {
      combined.bytes.resize(t.size);
      c.together("combining '" + r.output->name + "' over the ranks", [&] {
        if (!root) return;
        std::vector<unsigned char> packed;
        for (const auto& p : parts) packed.insert(packed.end(), p.begin(), p.end());
        TypedVector values(t, "rank_values"), copied(t, "rank_values_copy");
        TypedResult out(t, r.output->name);
        Reducer again = r;
        again.input = copied.shared();
        again.output = out.shared();
        const Node combine = map_reduce(sinew::copy(values, copied), again);
        RunOptions one;
        one.device = c.runtime->default_device();
        const Report rep =
            c.runtime->execute(combine, {bytes_binding(values.shared(), t, packed.data(), parts.size())}, one);
        combined.bytes = rep.results.at(r.output->name).bytes;
      });
      bcast(combined.bytes.data(), 1, element.type, 0, "the combined '" + r.output->name + "'");
    }
    report.results[r.output->name] = combined;
    if (auto b = an.result_bindings.find(r.output.get()); b != an.result_bindings.end() && bindings[b->second].data)
      std::memcpy(bindings[b->second].data, combined.bytes.data(), t.size);
  }

  report.combine_ms = lap();

  // Every rank's time and devices, for the report and the next run's shares. A joined run's time
  // is its own work: the waits for the other ranks in exchanges are taken out, or every rank
  // would measure the slowest one's time.
  const auto& d = report.local.device_ms;
  double busy = d.empty() ? report.local.wall_ms : *std::max_element(d.begin(), d.end());
  if (busy <= 0) busy = report.local.wall_ms;
  if (exchanger) busy = std::max(busy - exchanger->waited_ms, 0.01 * busy);
  const auto gathered = c.allgather(detail::join({std::to_string(busy), describe_devices(c.runtime->devices())}));
  std::vector<double> rank_ms(c.ranks);
  bool timed_all = true;
  for (int q = 0; q < c.ranks; ++q) {
    const auto f = detail::split(gathered[q]);
    const double ms = std::stod(f.at(0));
    report.shares.push_back({q, first[q], units[q], rank_plan.shares[q], ms, f.at(1)});
    rank_ms[q] = units[q] ? ms : 0;  // the balancer's idle device
    timed_all = timed_all && (!units[q] || ms > 0);
  }
  if (timed_all) {  // a rank with units but no time (nothing ran) says nothing
    report.next_shares = c.next_shares(key, rank_plan.shares, rank_ms);
    if (root) c.store_shares(tree, features, rank_plan, report.next_shares, report.shares);
  }
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace sinew
